"""Scan rewrites on sequences whose rows are of rank 0, 1 or 2, mixed by broadcasting with
non-sequences of lower or higher rank.

A step of rank r computed from rows of rank 0 and non-sequences is stacked over the steps
with a new leading time axis on every operand, the row axes aligned on the right *under*
the time axis: ``u_t * w`` with u_t () and w (H,) is ``u[:, None] * w[None, :]``, not
``u * w[None, :]`` (NumPy's right alignment would pair the time axis with H).

Oracles: the same graph compiled with no rewrites at all (``config.rewrites`` off) in PY,
and, for the programs of Theano's tests, a NumPy loop written here. Each test asserts that
the rewrite under test fired, so it cannot pass by not applying. Hypothesis draws the
program (ranks, step expression, direction, which outputs are read) in PY, where a
compile costs rewriting only; NUMBA runs a few fixed programs over drawn sizes and values.
"""
from __future__ import annotations

import contextlib
from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.config import config
from bptt.graph.rewriting import fired

from ..helpers import without_rewrites

# -- programs ---------------------------------------------------------------------------------
# A program is a `Spec` (hashable, so its compiled functions are built once). The step is
#     y_t = ((l0 op0 l1) op1 l2) ...       x_t = x_{t-1} + tanh(y_t)
# returning x (a sit_sot whose row has rank `rank`) and y (a nit_sot of y's rank).
# Row shapes by rank: 0 -> (), 1 -> (H,), 2 -> (B, H); K is the inner size of a product.
# Leaf kinds (the step's value, of the given rank):
#   seq      a sequence row
#   ns       a non-sequence
#   dot      seq row (K,) or (B, K) @ non-sequence (K, H)          (rank 1 or 2)
#   tdot     tanh(seq row (B, K)) @ non-sequence (K, H): its weight gradient sums a
#            per-step value that is no sequence row                 (rank 2)
#   dotv     seq row (K,) . non-sequence (K,)                       (rank 0)
#   mdot     non-sequence (H, K) @ seq row (K,)                     (rank 1)
#   sdot     seq row of rank 0 * (seq row (K,) @ non-sequence (K, H)): a product of rows
#            of two ranks                                           (rank 1)
#   sum      a seq row of rank r + 1 summed over its first axis     (rank 0 or 1)
#   x        the state x_{t-1}                                      (rank = `rank`)
#   h        x_{t-1} @ non-sequence (H, H), or x_{t-1} * a 0-d one  (rank = `rank`)
# `read`: "all" (every row of the outputs) or "last" (only [-1]); `static`: the row sizes
# as static shapes ((dim, size), ...) or () for unknown ones; `conf`: config values the
# rewrites run with ((name, value), ...); `outs`: the outputs the function returns and the
# cost reads ("xy", "x" or "y": y's step value is then recomputed by the backward step,
# or x's cotangent from the cost is zeros).

OPS = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "sub": lambda a, b: a - b}


class Spec(NamedTuple):
    rank: int
    leaves: tuple
    ops: tuple
    backwards: bool = False
    read: str = "all"
    static: tuple = ()
    conf: tuple = ()
    outs: str = "xy"


def _row(rank):
    return ("B", "H")[2 - rank:]


class Program:
    """The symbolic graph of one program and its inputs' shapes by name of dimension."""

    def __init__(self, spec):
        self.spec = spec
        self.static = dict(spec.static)
        self.inputs, self.dims = [], []      # variables, and their shapes as dimension names
        seqs, non_seqs, terms = [], [], []
        for kind, r in spec.leaves:
            terms.append(self._leaf(kind, r, spec.rank, seqs, non_seqs))
        x0 = self._var(_row(spec.rank), "x0")
        n_seqs = len(seqs)

        def step(*args):
            rows, x_tm1, ns = args[:n_seqs], args[n_seqs], args[n_seqs + 1:]
            env = dict(zip(seqs, rows)) | dict(zip(non_seqs, ns)) | {"x": x_tm1}
            values = [t(env) for t in terms]
            y = values[0]
            for op, v in zip(spec.ops, values[1:]):
                y = OPS[op](y, v)
            return x_tm1 + T.tanh(y), y

        (xs, ys), _ = bptt.scan(step, sequences=seqs, outputs_info=[x0, None],
                                non_sequences=non_seqs, go_backwards=spec.backwards)
        read = {"x": xs, "y": ys}
        self.outputs = [read[o] if spec.read == "all" else read[o][-1] for o in spec.outs]
        self.cost = sum(T.sum(T.sin(o) * o) for o in self.outputs)

    def _var(self, dims, name):
        shape = tuple(self.static.get(d) for d in dims)
        v = T.tensor("float64", shape, name=name)
        self.inputs.append(v)
        self.dims.append(dims)
        return v

    def _leaf(self, kind, r, rank, seqs, non_seqs):
        def seq(dims):
            s = self._var(("T",) + dims, f"s{len(seqs)}")
            seqs.append(s)
            return s

        def non_seq(dims):
            w = self._var(dims, f"w{len(non_seqs)}")
            non_seqs.append(w)
            return w

        if kind == "seq":
            s = seq(_row(r))
            return lambda env: env[s]
        if kind == "ns":
            w = non_seq(_row(r))
            return lambda env: env[w]
        if kind == "dot":
            s, w = seq(_row(r)[:-1] + ("K",)), non_seq(("K", "H"))
            return lambda env: T.dot(env[s], env[w])
        if kind == "tdot":
            s, w = seq(("B", "K")), non_seq(("K", "H"))
            return lambda env: T.dot(T.tanh(env[s]), env[w])
        if kind == "dotv":
            s, w = seq(("K",)), non_seq(("K",))
            return lambda env: T.dot(env[s], env[w])
        if kind == "mdot":
            s, w = seq(("K",)), non_seq(("H", "K"))
            return lambda env: T.dot(env[w], env[s])
        if kind == "sdot":
            u, s, w = seq(()), seq(("K",)), non_seq(("K", "H"))
            return lambda env: env[u] * T.dot(env[s], env[w])
        if kind == "sum":
            s = seq(_row(r + 1))
            return lambda env: T.sum(env[s], axis=0)
        if kind == "x":
            return lambda env: env["x"]
        if kind == "h":
            w = non_seq(("H", "H") if rank else ())
            return lambda env: T.dot(env["x"], env[w])
        raise ValueError(kind)

    def values(self, sizes, rng):
        sizes = sizes | self.static
        return [rng.uniform(-1, 1, size=tuple(sizes[d] for d in dims)) for dims in self.dims]


#: leaf kinds and the row ranks each can have ("R": the state's rank)
LEAVES = {"seq": (0, 1, 2), "ns": (0, 1, 2), "dot": (1, 2), "tdot": (2,), "dotv": (0,),
          "mdot": (1,), "sdot": (1,), "sum": (0, 1), "x": "R", "h": "R"}
PRODUCTS = ("dot", "tdot", "dotv", "mdot", "sdot")


def _kinds(names, rank):
    return [(k, rank if LEAVES[k] == "R" else r) for k in names
            for r in ((rank,) if LEAVES[k] == "R" else LEAVES[k]) if r <= rank]


@st.composite
def programs(draw, read=None, static=False, conf=()):
    rank = draw(st.sampled_from((0, 1, 2)))
    leaves = [draw(st.sampled_from(_kinds(PRODUCTS, rank)))] + \
        draw(st.lists(st.sampled_from(_kinds(LEAVES, rank)), min_size=1, max_size=3))
    leaves = draw(st.permutations(leaves))
    ops = tuple(draw(st.sampled_from(tuple(OPS))) for _ in leaves[1:])
    read = read or draw(st.sampled_from(("all", "last")))
    fixed = tuple((d, draw(st.integers(1, 3))) for d in "BHK") if static else ()
    outs = draw(st.sampled_from(("xy", "x", "y")))
    return Spec(rank, tuple(leaves), ops, draw(st.booleans()), read, fixed, conf, outs)


sizes = st.fixed_dictionaries({d: st.integers(1, 3) for d in "BHK"} | {"T": st.integers(1, 4)})

# -- compiled functions, shared between examples ----------------------------------------------
_compiled = {}


def compiled(spec, mode, grad=False, rewrites=True):
    key = (spec, mode, grad, rewrites)
    if key not in _compiled:
        prog = Program(spec)
        outs = prog.outputs + (bptt.grad(prog.cost, prog.inputs, disconnected_inputs="ignore")
                               if grad else [])
        with configured(spec.conf if rewrites else (("rewrites", False),)):
            f = bptt.function(prog.inputs, outs, mode=mode, on_unused_input="ignore")
        _compiled[key] = prog, f
    return _compiled[key]


@contextlib.contextmanager
def configured(conf):
    """Compile with the ``bptt.config`` values `conf` ((name, value), ...)."""
    old = [(name, getattr(config, name)) for name, _ in conf]
    try:
        for name, value in conf:
            setattr(config, name, value)
        yield
    finally:
        for name, value in old:
            setattr(config, name, value)


def check_against_no_rewrites(spec, mode, sizes, seed, grad=False, passes=()):
    """The program's outputs (and gradients) in `mode` equal those of the rewrite-free graph;
    returns how often each rewrite fired, after asserting those of `passes` did."""
    prog, f = compiled(spec, mode, grad)
    _, ref = compiled(spec, "PY", grad, rewrites=False)
    counts = fired(f.fgraph)
    for p in passes:
        assert counts[p], f"{p} did not fire on {spec}"
    values = prog.values(sizes, np.random.default_rng(seed))
    want = ref(*values)
    got = f(*values)
    names = [f"output {k}" for k in range(len(prog.outputs))] + \
        [f"gradient wrt {v.name}" for v in prog.inputs]
    for name, a, b in zip(names, got, want):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10,
                                   err_msg=f"{name} of {spec} at {sizes}")
    return counts


def _fires(spec, name, grad=False):
    _, f = compiled(spec, "PY", grad)
    return fired(f.fgraph)[name] > 0


seeds = st.integers(0, 2 ** 16)

# -- the sequence push-out ----------------------------------------------------------------------
#: The step of issue 20: dot(u1_t, W) + u2_t * w2 + x_tm1 with u2's rows of rank 0.
ISSUE = Spec(1, (("seq", 0), ("ns", 1), ("dot", 1)), ("mul", "add"))
#: Rows of rank 0 and 2 and a non-sequence of rank 2 around one product, backwards.
MIXED = Spec(2, (("seq", 0), ("dot", 2), ("ns", 2), ("seq", 1)), ("mul", "add", "mul"), True)


@given(spec=programs(read="all"), sizes=sizes, seed=seeds)
def test_pushout_seqs_stacks_rows_of_every_rank_with_their_axes_aligned(spec, sizes, seed):
    if not _fires(spec, "scan_pushout_seqs"):
        return          # the step's product is not a function of rows and invariants alone
    check_against_no_rewrites(spec, "PY", sizes, seed, passes=("scan_pushout_seqs",))


@pytest.mark.parametrize("spec", [ISSUE, MIXED], ids=["issue", "mixed"])
@settings(max_examples=4)
@given(sizes=sizes, seed=seeds)
def test_pushout_seqs_in_both_modes(spec, mode, sizes, seed):
    check_against_no_rewrites(spec, mode, sizes, seed, passes=("scan_pushout_seqs",))


def test_issue_program_against_a_numpy_loop(mode):
    """Issue 20's program at T=2 (a wrong row 1) and T=3 (a broadcast error), H=2."""
    prog, f = compiled(ISSUE, mode)
    rng = np.random.default_rng(1)
    for n in (2, 3):
        values = prog.values(dict(T=n, B=1, H=2, K=3), rng)
        s0, w0, s1, w1, x0 = values     # u2, w2, u1, W_in1, x0
        x, want = x0, []
        for t in range(n):
            y = s0[t] * w0 + s1[t] @ w1
            x = x + np.tanh(y)
            want.append(x)
        np.testing.assert_allclose(f(*values)[0], want, rtol=1e-12)


def check_function(make, mode, values, passes):
    """`make()` -> (inputs, outputs), compiled in `mode` and without rewrites: equal values,
    and each rewrite of `passes` fired."""
    inputs, outputs = make()
    f = bptt.function(inputs, outputs, mode=mode, on_unused_input="ignore")
    counts = fired(f.fgraph)
    for p in passes:
        assert counts[p], f"{p} did not fire"
    inputs, outputs = make()
    with without_rewrites():
        ref = bptt.function(inputs, outputs, mode="PY", on_unused_input="ignore")
    for k, (a, b) in enumerate(zip(f(*values), ref(*values))):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10, err_msg=f"output {k}")


# -- merged outputs: a step SumTo that sums leading axes of a stored value ------------------------
def _broadcast_rows_grads(row, u_rank):
    """Gradients of a scan over rows v_t of static shape `row` plus rows u_t of rank
    `u_rank` (broadcast against them) and rows c_t of rank 0. The backward step stores
    dpre_t for v and returns SumTo(dpre_t, u_t's shape) and SumTo(dpre_t, ()) for u and c:
    merged into one nit_sot, their rows are summed from dpre's under the time axis."""
    v = T.tensor("float64", (None,) + row, name="v")
    u = T.tensor("float64", (None,) + row[len(row) - u_rank:], name="u")
    c, h0 = T.vector("c"), T.tensor("float64", row, name="h0")
    hs, _ = bptt.scan(lambda v_t, u_t, c_t, h: T.tanh(v_t + u_t + c_t + h),
                      sequences=[v, u, c], outputs_info=h0)
    inputs = [v, u, c, h0]
    return inputs, bptt.grad((hs ** 2).sum(), inputs)


@pytest.mark.parametrize("row, u_rank", [((3, 3), 1), ((2, 3), 1), ((3,), 0)])
@settings(max_examples=5)
@given(steps=st.integers(1, 4), seed=seeds)
def test_merge_outputs_sums_each_row_to_its_shape(row, u_rank, steps, seed):
    rng = np.random.default_rng(seed)
    u_row = row[len(row) - u_rank:]
    values = [rng.uniform(-1, 1, (steps,) + row), rng.uniform(-1, 1, (steps,) + u_row),
              rng.uniform(-1, 1, steps), rng.uniform(-1, 1, row)]
    check_function(lambda: _broadcast_rows_grads(row, u_rank), "PY", values,
                   ("scan_merge_outputs",))


# -- summed and stored nit_sots of one backward step --------------------------------------------
#: y_t = s0_t @ W0 + u_t * (s2_t @ W1), only y read: the backward step sums s0_t.T @ g_t for
#: dW0 (a summed nit_sot whose step value SumTo(g_t) is g's row itself when the sizes agree)
#: and stores dS0_t = g_t @ W0.T in g's rows (`scan_nit_sot_into_seq`, when B, K == B, H).
SUMMED = Spec(2, (("dot", 2), ("sdot", 1)), ("add",), outs="y")


@settings(max_examples=6)
@given(n=st.integers(1, 3), t=st.integers(1, 4), seed=seeds)
def test_summed_nit_sot_reads_its_row_before_a_stored_nit_sot_overwrites_it(n, t, seed):
    check_against_no_rewrites(SUMMED, "PY", dict(T=t, B=n, H=n, K=n), seed, grad=True,
                              passes=("scan_chunk_accumulators", "scan_nit_sot_into_seq"))


# -- every scan pass, on a program that makes it fire ------------------------------------------
_S = (("B", 2), ("H", 3), ("K", 2))
_REUSE, _NO_CHUNKS = (("reuse_forward", True),), (("exclude_rewrites", ("scan_chunk_accumulators",)),)
_RECOMPUTE = (("reuse_forward", False),)   # the backward recomputes the products
#: pass -> a program (with rows of rank 0) on which it fires, gradients included
FIRING = {
    "scan_pushout_non_seqs": Spec(2, (("dot", 1), ("seq", 0)), ("add",)),
    "scan_pushout_seqs": ISSUE,
    "scan_pushout_accumulators": Spec(2, (("dot", 1), ("sdot", 1), ("tdot", 2), ("seq", 0)),
                                      ("add", "add", "add"), static=_S, conf=_REUSE, outs="y"),
    "scan_pushout_last_step": Spec(0, (("seq", 0), ("dotv", 0)), ("mul",), read="last", outs="y"),
    "scan_merge": Spec(2, (("ns", 1), ("dot", 1), ("seq", 2), ("tdot", 2)), ("sub",) * 3, True,
                       static=_S, outs="x"),
    # the backward step stores dpre_t (s0's gradient) and sums it to s1's rows () for s1's
    "scan_merge_outputs": Spec(1, (("seq", 1), ("seq", 0), ("dot", 1)), ("add", "add"),
                               static=(("B", 3), ("H", 3), ("K", 2))),
    "scan_save_mem": Spec(0, (("dotv", 0), ("seq", 0)), ("add",)),
    "scan_fill_sequences": Spec(0, (("dotv", 0), ("h", 0), ("x", 0), ("seq", 0)),
                                ("mul", "sub", "mul"), read="last", outs="y"),
    "scan_chunk_accumulators": Spec(2, (("dot", 2), ("seq", 0)), ("add",)),
    "scan_read_through_join": Spec(0, (("dotv", 0), ("seq", 0)), ("add",)),
    "scan_seq_into_buffer": Spec(2, (("h", 2), ("sdot", 1), ("dot", 2), ("dot", 2)),
                                 ("add", "add", "mul"), True, "last", _S, conf=_RECOMPUTE),
    "scan_nit_sot_into_seq": Spec(0, (("dotv", 0), ("seq", 0)), ("add",)),
    "scan_step_shapes": Spec(2, (("dot", 2), ("seq", 0)), ("add",)),
    "inplace_elemwise": Spec(0, (("dotv", 0), ("seq", 0)), ("add",)),
}


@pytest.mark.parametrize("name", sorted(FIRING))
@settings(max_examples=3)
@given(sizes=sizes, seed=seeds)
def test_each_pass_agrees_with_the_rewrite_free_graph(name, sizes, seed):
    check_against_no_rewrites(FIRING[name], "PY", sizes, seed, grad=True, passes=(name,))


@given(spec=programs(static=True), static=st.booleans(),
       conf=st.sampled_from([(), _REUSE, _NO_CHUNKS]), sizes=sizes, seed=seeds)
def test_drawn_programs_and_gradients_agree_with_the_rewrite_free_graph(spec, static, conf,
                                                                        sizes, seed):
    spec = spec._replace(static=spec.static if static else (), conf=conf)
    check_against_no_rewrites(spec, "PY", sizes, seed, grad=True)


#: rows of rank 0 and 2 into a weight gradient summed in chunks of 2 rows (several chunks
#: and a partial one: the numba loop chunks, perform adds one product per step)
CHUNKED = Spec(2, (("dot", 2), ("seq", 0)), ("add",), conf=(("chunk_rows", 2),))


@settings(max_examples=3)
@given(sizes=sizes, seed=seeds)
def test_gradients_in_numba(sizes, seed):
    check_against_no_rewrites(CHUNKED, "NUMBA", sizes, seed, grad=True,
                              passes=("scan_chunk_accumulators", "scan_pushout_seqs"))
