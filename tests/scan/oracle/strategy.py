"""Hypothesis strategy drawing random scan `Program`s.

What it covers (issue 20, section 4): 0-3 sequences with rows of rank 0-2,
each with its own taps drawn from -3..3 (past only, future only, mixed, lone,
in any order); 1-3 outputs, each a mit_sot, sit_sot or nit_sot, returned whole,
as their last row, or not at all, a state's initial value an input or a constant
of the graph; 0-3 non-sequences of rank 0-2, passed or read
from the closure; n_steps from the sequences, a constant or a symbolic int
(0, negative, fewer steps than the sequences allow); go_backwards;
truncate_gradient; until; a shared variable updated per step; one level of
nested scan; steps built from dot, broadcasting elementwise ops, reductions,
subtensor / set_subtensor / inc_subtensor, concatenate, casts and transposes.

Expressions are typed by shape (tuples of the size symbols "H", "K"). A shape
is *reachable* when some leaf has it or it can be made from one (a transpose,
a sum over one axis, a sum over all); the generator asks only for reachable
shapes, and at depth 0 takes a leaf or the shortest path from one.
"""
from __future__ import annotations

import dataclasses

from hypothesis import strategies as st

from .program import E, NonSeq, Out, Program, Seq

RANK_SHAPES = {0: [()], 1: [("H",), ("K",)],
               2: [("H", "K"), ("K", "H"), ("H", "H"), ("K", "K")]}
UNARY = ("tanh", "sin", "sigmoid", "scale", "cast32")
BINARY = ("add", "sub", "mul", "maximum")
REDUCE = ("sum", "mean", "max")
SCALES = (0.5, -0.7, 1.3)

#: the knobs a soak or a mutation run may turn (restrict=...): each a name -> what it removes
RESTRICTIONS = {
    "no_until": "no until condition",
    "no_nest": "no inner scan",
    "no_shared": "no shared variable",
    "no_future_taps": "sequence taps <= 0 only",
    "no_backwards": "no go_backwards, no negative n_steps",
    # KNOWN BUGS, to be removed once their fixes are in main (issue 20 sections 1-2):
    "known_bug_taps": "(a) taps always span 0, and a backward loop's taps are (0,) only",
    "known_bug_rank0_seq": "(b) no sequence with rank-0 rows",
}


def reachable(leaf_shapes):
    """Every shape some leaf of `leaf_shapes` gives by a transpose or sums."""
    out = {()}
    for s in leaf_shapes:
        out.add(s)
        if len(s) == 2:
            out |= {(s[1], s[0]), (s[0],), (s[1],)}
    return out


class _Gen:
    def __init__(self, draw, leaves, nest):
        self.draw, self.leaves, self.nest = draw, leaves, nest   # leaves: shape -> [names]
        self.reach = reachable(leaves)

    def leaf(self, shape):
        names = self.leaves.get(shape)
        if names:
            return E("leaf", (), self.draw(st.sampled_from(sorted(names))), shape)
        return self.path(shape)

    def path(self, shape):
        """The shortest way to `shape` from a leaf."""
        d = self.draw
        if shape == ():
            src = d(st.sampled_from(sorted(self.leaves)))
            return E("sum", (self.leaf(src),), None, ())
        if len(shape) == 1:
            srcs = sorted(s for s in self.leaves if len(s) == 2 and shape[0] in s)
            src = d(st.sampled_from(srcs))
            axis = 1 if src[0] == shape[0] else 0
            return E("sum", (self.leaf(src),), axis, shape)
        return E("transpose", (self.leaf(shape[::-1]),), None, shape)

    def choices(self, s):
        r, ok = len(s), self.reach
        out = ["unary", "binary", "binary"]
        if (r == 0 and any(ok - {()})) or (r == 1 and any((x, s[0]) in ok or (s[0], x) in ok for x in "HK")):
            out.append("reduce")
        if self._dot_options(s):
            out += ["dot", "dot"]
        if r <= 1 and any((x,) + s in ok for x in "HK"):
            out.append("index")
        if r >= 1:
            out += ["reverse", "splice", "setsub"]
        if r == 2 and s[::-1] in ok:
            out.append("transpose")
        if self.nest and r <= 1 and any((x,) + s in ok for x in "HK"):
            out.append("nest")
        return out

    def _dot_options(self, s):
        ok, opts = self.reach, []
        for c in "HK":
            if len(s) == 0 and (c,) in ok:
                opts.append(((c,), (c,)))
            if len(s) == 1:
                if (c,) in ok and (c, s[0]) in ok:
                    opts.append(((c,), (c, s[0])))
                if (s[0], c) in ok and (c,) in ok:
                    opts.append(((s[0], c), (c,)))
            if len(s) == 2 and (s[0], c) in ok and (c, s[1]) in ok:
                opts.append(((s[0], c), (c, s[1])))
        return opts

    def expr(self, s, depth):
        d = self.draw
        if depth <= 0 or d(st.integers(0, 3)) == 0:
            return self.leaf(s)
        kind = d(st.sampled_from(self.choices(s)))
        sub = lambda shape: self.expr(shape, depth - 1)   # noqa: E731
        if kind == "unary":
            op = d(st.sampled_from(UNARY))
            return E(op, (sub(s),), d(st.sampled_from(SCALES)) if op == "scale" else None, s)
        if kind == "binary":
            op = d(st.sampled_from(BINARY))
            other = d(st.sampled_from([s[i:] for i in range(len(s) + 1) if s[i:] in self.reach]))
            a, b = sub(s), sub(other)
            return E(op, (b, a) if d(st.booleans()) else (a, b), None, s)
        if kind == "reduce":
            op = d(st.sampled_from(REDUCE))
            if s == ():
                src = d(st.sampled_from(sorted(x for x in self.reach if x)))
                return E(op, (sub(src),), None if len(src) > 1 or d(st.booleans()) else 0, s)
            opts = [((x, s[0]), 0) for x in "HK" if (x, s[0]) in self.reach]
            opts += [((s[0], x), 1) for x in "HK" if (s[0], x) in self.reach]
            src, axis = d(st.sampled_from(opts))
            return E(op, (sub(src),), axis, s)
        if kind == "dot":
            a, b = d(st.sampled_from(self._dot_options(s)))
            return E("dot", (sub(a), sub(b)), None, s)
        if kind in ("index", "nest"):
            x = d(st.sampled_from([x for x in "HK" if (x,) + s in self.reach]))
            if kind == "index":
                return E("index", (sub((x,) + s),), d(st.sampled_from([0, -1])), s)
            return E("nest", (sub((x,) + s), sub(s), sub(s)),
                     d(st.sampled_from(["last", "sum"])), s)
        if kind == "reverse":
            return E("reverse", (sub(s),), None, s)
        if kind == "transpose":
            return E("transpose", (sub(s[::-1]),), None, s)
        if kind == "splice":
            return E("splice", (sub(s), sub(s)), None, s)
        op = d(st.sampled_from(["setsub", "incsub"]))
        return E(op, (sub(s), sub(s[1:])), d(st.sampled_from([0, -1])), s)


def _shape(draw, ranks=(0, 1, 2)):
    return draw(st.sampled_from([s for r in ranks for s in RANK_SHAPES[r]]))


def _inputs(draw, restrict):
    """The sequences and non-sequences, and whether the first output is an RNN's state."""
    tap_range = (-3, 0) if "no_future_taps" in restrict else (-3, 3)
    taps = st.lists(st.integers(*tap_range), min_size=1, max_size=3, unique=True)
    if "known_bug_taps" in restrict:
        taps = taps.filter(lambda t: min(t) <= 0 <= max(t))
    seq_ranks = (1, 2) if "known_bug_rank0_seq" in restrict else (0, 1, 2)
    seqs = tuple(Seq(_shape(draw, seq_ranks), tuple(draw(taps)), draw(st.integers(0, 2)))
                 for _ in range(draw(st.integers(0, 3))))
    non_seqs = []
    for _ in range(draw(st.integers(0, 3))):
        shape = _shape(draw)
        same = [m for m, n in enumerate(non_seqs) if n.shape == shape and n.source == "input"]
        source = draw(st.sampled_from(["input"] * 4 + ["const"] + (["same"] if same else [])))
        source = draw(st.sampled_from(same)) if source == "same" else source
        non_seqs.append(NonSeq(shape, draw(st.booleans()), source))
    rnn = draw(st.integers(0, 3)) == 0
    if rnn:     # x_t @ U + h @ W + b: the shapes the push-outs, gemm and chunk passes act on
        seqs = (Seq(("K", "H"), (0,), draw(st.integers(0, 1))),) + seqs
        non_seqs = [NonSeq(("H", "H")), NonSeq(("H", "H")), NonSeq(("H",))] + \
            [dataclasses.replace(n, source=n.source + 3) if isinstance(n.source, int) else n
             for n in non_seqs]
    return seqs, tuple(non_seqs), rnn


def _state_layout(draw, seqs, non_seqs, rnn):
    """Each output's kind, taps and shape, and the leaves a step expression may read."""
    kinds = draw(st.lists(st.sampled_from(["mit_sot", "sit_sot", "nit_sot"]), min_size=1,
                          max_size=3))
    if rnn:
        kinds[0] = "sit_sot"
    if not seqs and not non_seqs and all(k == "nit_sot" for k in kinds):
        non_seqs = (NonSeq(_shape(draw), True),)
    leaves = {}
    for i, s in enumerate(seqs):
        for k in s.taps:
            leaves.setdefault(s.shape, set()).add(f"s{i}@{k}")
    for m, n in enumerate(non_seqs):
        leaves.setdefault(n.shape, set()).add(f"n{m}")
    taps, shapes = [], []
    for j, kind in enumerate(kinds):
        if kind == "nit_sot":
            taps.append(())
            shapes.append(None)
            continue
        if kind == "sit_sot":
            taps.append((-1,))
        else:
            t = tuple(draw(st.lists(st.sampled_from([-1, -2, -3]), min_size=1, max_size=2,
                                    unique=True).filter(lambda t: tuple(t) != (-1,))))
            taps.append(t)
        shapes.append(("K", "H") if rnn and j == 0 else _shape(draw))
        for k in taps[-1]:
            leaves.setdefault(shapes[-1], set()).add(f"o{j}@{k}")
    reach = sorted(reachable(leaves))
    shapes = [draw(st.sampled_from(reach)) if s is None else s for s in shapes]
    return non_seqs, kinds, taps, shapes, leaves, reach


def _rnn_output(draw, e, s):
    """The RNN's state: tanh(x_t @ U + h @ W + b), plus `e` half of the time."""
    leaf = lambda name, shape: E("leaf", (), name, shape)  # noqa: E731
    pre = E("add", (E("dot", (leaf("s0@0", s), leaf("n1", ("H", "H"))), None, s),
                    E("dot", (leaf("o0@-1", s), leaf("n0", ("H", "H"))), None, s)), None, s)
    pre = E("add", (pre, leaf("n2", ("H",))), None, s)
    if draw(st.booleans()):
        pre = E("add", (pre, e), None, s)
    return E("tanh", (pre,), None, s)


def _outputs(draw, gen, kinds, taps, shapes, rnn, max_depth):
    """Each output's step expression and what the function does with its rows."""
    outs = []
    for j, (kind, t, s) in enumerate(zip(kinds, taps, shapes)):
        e = gen.expr(s, draw(st.integers(1, max_depth)))
        if rnn and j == 0:
            outs.append(Out(kind, t, s, _rnn_output(draw, e, s),
                            draw(st.sampled_from(["all", "last", "cost", "cost"]))))
            continue
        if t and draw(st.integers(0, 3)) > 0:     # a state mostly reads its own last tap
            own = E("leaf", (), f"o{j}@{t[-1]}", s)
            e = E("tanh", (E("add", (e, own), None, s),), None, s)
        elif t:
            e = E("tanh", (e,), None, s)
        outs.append(Out(kind, t, s, e, draw(st.sampled_from(["all", "all", "last", "cost",
                                                             "none"]))))
    nits = [o for o in outs if o.kind == "nit_sot"]
    if nits and draw(st.integers(0, 5)) == 0:     # two outputs storing the same rows
        outs.append(dataclasses.replace(draw(st.sampled_from(nits)), use="all"))
    return outs


def _steps(draw, restrict, seqs, outs):
    """n_steps, the steps the sequences allow, and whether the loop may run backwards;
    `outs` is adjusted so that the function returns something it can compute."""
    n_opts = ["const", "sym"] + (["auto", "auto", "auto"] if seqs else [])
    n_kind = draw(st.sampled_from(n_opts))
    backwards_ok = "no_backwards" not in restrict
    if "known_bug_taps" in restrict and any(s.taps != (0,) for s in seqs):
        backwards_ok = False
    steps = draw(st.integers(0, 4))
    n_steps, n_run = None, steps + min((s.extra for s in seqs), default=0)
    if n_kind != "auto":
        k = draw(st.integers(-4 if backwards_ok else 0, 4))
        n_steps, n_run = (n_kind, k), abs(k)
    if n_run == 0:       # no row to take the last of: x[-1] raises in Theano too
        outs = [dataclasses.replace(o, use="all") if o.use == "last" else o for o in outs]
    if all(o.use in ("none", "cost") for o in outs) and not any(o.use == "cost" for o in outs):
        outs[0] = dataclasses.replace(outs[0], use="all")
    return n_steps, steps, backwards_ok, outs


def _extras(draw, restrict, gen, leaves, reach, seqs):
    """An until condition, a shared variable's update and a twin loop, each or none."""
    until = None
    if "no_until" not in restrict and draw(st.integers(0, 3)) == 0:
        until = (gen.expr(draw(st.sampled_from(reach)), 2), draw(st.sampled_from([-0.5, 0.0, 0.5])))
    shared = None
    if "no_shared" not in restrict and draw(st.integers(0, 4)) == 0:
        sh_shape = _shape(draw, (0, 1))
        g2 = _Gen(draw, {**leaves, sh_shape: leaves.get(sh_shape, set()) | {"sh"}}, False)
        upd = E("add", (E("scale", (E("leaf", (), "sh", sh_shape),), 0.5, sh_shape),
                        g2.expr(sh_shape, 2)), None, sh_shape)
        shared = (sh_shape, upd)
    twin = None
    seq_leaves = {sh: {n for n in names if n[0] in "sn"} for sh, names in leaves.items()}
    seq_leaves = {sh: names for sh, names in seq_leaves.items() if names}
    if seqs and draw(st.integers(0, 4)) == 0:
        g3 = _Gen(draw, seq_leaves, False)
        twin = g3.expr(draw(st.sampled_from(sorted(reachable(seq_leaves)))), 2)
    return until, shared, twin


@st.composite
def programs(draw, restrict=(), max_depth=3, seed=None):
    """A random `Program`; `restrict` names entries of `RESTRICTIONS` to leave out."""
    seqs, non_seqs, rnn = _inputs(draw, restrict)
    non_seqs, kinds, taps, shapes, leaves, reach = _state_layout(draw, seqs, non_seqs, rnn)
    nest = "no_nest" not in restrict and draw(st.integers(0, 4)) == 0
    gen = _Gen(draw, leaves, nest)
    outs = _outputs(draw, gen, kinds, taps, shapes, rnn, max_depth)
    n_steps, steps, backwards_ok, outs = _steps(draw, restrict, seqs, outs)
    until, shared, twin = _extras(draw, restrict, gen, leaves, reach, seqs)
    n_float = len(seqs) + sum(o.kind != "nit_sot" for o in outs) + \
        sum(n.source == "input" for n in non_seqs)
    wrt = None
    if n_float > 1 and draw(st.integers(0, 3)) == 0:
        wrt = tuple(draw(st.lists(st.integers(0, n_float - 1), min_size=1, max_size=n_float,
                                  unique=True)))
    cost = draw(st.sampled_from(["mixed", "mixed", "half_sq", "cube"]))
    if rnn and draw(st.booleans()):     # the plain RNN: no bias
        e = outs[0].expr.args[0]
        outs[0] = dataclasses.replace(outs[0], expr=E("tanh", (e.args[0],), None, e.shape))
    go_backwards = backwards_ok and draw(st.booleans())
    truncate = draw(st.sampled_from([-1, -1, -1, 1, 2]))
    sizes = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    seed = draw(st.integers(0, 2**31 - 1)) if seed is None else seed
    outs, wrt = _constant_inits(draw, outs, wrt, n_float)
    return Program(
        wrt=wrt, cost=cost, twin=twin, seqs=seqs, outs=tuple(outs), non_seqs=non_seqs,
        n_steps=n_steps, steps=steps, go_backwards=go_backwards, truncate=truncate,
        until=until, shared=shared, sizes=sizes, seed=seed)


def _constant_inits(draw, outs, wrt, n_float):
    """Make some states' initial values constants of the graph (a constant is a read-only
    global of numba's generated module; `T.zeros((H,))` with a constant H is one), keeping
    one float input at least. Drawn last: a program's other choices are those drawn
    without it. `wrt` indexes the float inputs: indices past their end are dropped."""
    outs = list(outs)
    for j, o in enumerate(outs):
        if o.kind != "nit_sot" and n_float > 1 and draw(st.integers(0, 4)) == 0:
            outs[j] = dataclasses.replace(o, init="const")
            n_float -= 1
    if wrt is not None:
        wrt = tuple(i for i in wrt if i < n_float) or None
    return outs, wrt
