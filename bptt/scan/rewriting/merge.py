"""Merge what scans compute twice: equal outputs of one loop, and loops over the same steps.

`scan_merge_outputs` (node rewriter on Scan)
    * nit_sot outputs of the same length whose step values are one inner
      variable (after merging the step graph) become one output. A step value
      ``SumTo(z, *sizes)`` whose sizes are the same at every step (constants,
      non-sequences, shapes of sequence rows, what is computed from them) and
      whose `z` is itself a nit_sot counts as `z`: the loop stores `z` once
      and the outer graph reads ``SumTo(Z, rows, *outer sizes)``, which is `Z`
      itself at run time when the sizes agree. A step SumTo that also sums
      leading axes of `z` away (``z_t`` (B, H) to (H,), or a row of rank 0)
      sums them under the time axis: ``SumTo(Z, rows, 1, H)`` with the kept
      size-1 axis dropped, not ``SumTo(Z, rows, H)``, which would sum the rows.
      This is a backward scan whose per-step cotangent of a pre-activation is
      read by the gradients of several weights (each through a SumTo to the
      batch of its operand) and a bias.
      A SumTo is only looked through when `z` is stored anyway: storing `z`
      for two SumTo outputs alone could take more memory than they did.
      Known edge: with zero executed steps, `Z`'s rows have the shape the
      step graph infers for `z`; where that shape depends on sequence values
      (unknown without a step, see docs/scan.md) the outer SumTo may raise
      where the nit_sot was an empty array of a guessed shape.
    * mit_sot / sit_sot states of the same kind, taps, ring length and initial
      outer value whose step values become one inner variable once every
      other member reads the first member's taps: by induction over the steps
      their rows are equal, so the first one serves every reader. A group
      whose members do not all agree is narrowed and tried again.

`scan_merge` (graph pass)
    Two Scan nodes with the same n_steps variable (or equal constants), the
    same `until` setting (with until: conditions that become one variable in
    the merged step graph), the same truncate_gradient and profile, no ring
    buffers yet (save-mem runs later), no stateful step, and no path from
    the outputs of one to the inputs of the other, become one Scan running
    both step graphs (Theano's ``scan_merge``). Direction needs no check:
    go_backwards is the reversal of the outer sequences. Sequences and
    non-sequences passed to both are passed once, and the merged step graph
    is merged, so work the two steps share runs once; `scan_merge_outputs`
    then merges the outputs they share.
"""
from __future__ import annotations

from ...graph.basic import Constant
from ...graph.fg import FunctionGraph
from ...graph.replace import clone_get_equiv
from ...graph.rewriting import InToOut, can_replace, graph_pass, node_rewriter, replace_checked
from ...graph.traversal import toposort
from ...tensor.rewriting.constant_folding import is_stateful
from ...tensor.rewriting.merge import merge
from ...tensor.shape import Shape_i, SumTo, dimshuffle, shape_i
from ..args import CATEGORIES, ScanArgs
from ..op import Scan
from .basic import rebuild

_IN_LISTS = ("inner_in_seqs", "inner_in_sit_sot", "inner_in_shared", "inner_in_non_seqs")
_IN_GROUPS = ("inner_in_mit_mot", "inner_in_mit_sot")


# -- step-graph helpers ---------------------------------------------------------------------
def _copy(args):
    """A ScanArgs whose lists can be edited without touching `args`."""
    new = ScanArgs()
    new.__dict__.update({k: (list(v) if isinstance(v, list) else v)
                         for k, v in args.__dict__.items()})
    new.labels = dict(args.labels)
    return new


def _map_inner_inputs(args, get):
    for f in _IN_LISTS:
        setattr(args, f, [get(v) for v in getattr(args, f)])
    for f in _IN_GROUPS:
        setattr(args, f, [[get(v) for v in g] for g in getattr(args, f)])


def _own_step(args):
    """Give `args` its own copy of the step graph (two nodes may share one op)."""
    outs = args.inner_outputs
    equiv = clone_get_equiv(args.inner_inputs, outs)
    _map_inner_inputs(args, equiv.__getitem__)
    args.map_inner_outputs({v: equiv[v] for v in outs})


def _merged_step(args, extra=()):
    """Give `args` a merged copy of its step graph; return `extra` (inner variables) in it."""
    outs = args.inner_outputs
    fg = FunctionGraph(args.inner_inputs, outs + list(extra), clone=True)
    merge.apply(fg)
    _map_inner_inputs(args, fg.equiv.__getitem__)
    args.map_inner_outputs(dict(zip(outs, fg.outputs)))
    return fg.outputs[len(outs):]


def _invariant_outer(args):
    """inner variable -> an outer variable with its value (the same at every step), or None."""
    memo = dict(zip(args.inner_in_non_seqs, args.outer_in_non_seqs))
    seqs = dict(zip(args.inner_in_seqs, args.outer_in_seqs))
    inner_inputs = set(args.inner_inputs)

    def outer(v):
        if v in memo:
            return memo[v]
        n = v.owner
        if isinstance(v, Constant):
            r = v
        elif v in inner_inputs or n is None:
            r = None
        elif isinstance(n.op, Shape_i) and n.inputs[0] in seqs:   # rows share a shape
            r = shape_i(seqs[n.inputs[0]], n.op.i + 1)
        elif is_stateful(n) or isinstance(n.op, Scan):
            r = None
        else:
            r = _rebuilt(n, v, [outer(i) for i in n.inputs])
        memo[v] = r
        return r

    return outer


def _rebuilt(node, v, inputs):
    """`v` (an output of `node`) computed by `node`'s op from `inputs`, or None."""
    if any(i is None for i in inputs):
        return None
    try:
        return node.op.make_node(*inputs).outputs[node.outputs.index(v)]
    except (TypeError, ValueError):     # an outer type the op does not take
        return None


# -- one scan: equal outputs ------------------------------------------------------------------
def _nit_groups(args):
    """[(kept index, [(index, outer sizes or None), ...]), ...] of nit_sots storing one value."""
    outer = _invariant_outer(args)
    stored = set(args.inner_out_nit_sot)
    groups = {}
    for k, v in enumerate(args.inner_out_nit_sot):
        base, sizes, n = v, None, v.owner
        if n is not None and isinstance(n.op, SumTo) and n.inputs[0] in stored \
                and len(n.inputs) - 1 == v.ndim:
            s = [outer(i) for i in n.inputs[1:]]
            if all(x is not None for x in s):
                base, sizes = n.inputs[0], s
        groups.setdefault((base, args.outer_in_nit_sot[k]), []).append((k, sizes))
    out = []
    for (base, _), members in groups.items():
        if len(members) > 1:
            keep = next(k for k, s in members if s is None)
            out.append((keep, base, members))
    return out


def _sum_rows_to(z, sizes):
    """Each row of `z` summed to `sizes` (as the step's SumTo summed it), the time axis kept.

        z (E, B, H), sizes (H,):  SumTo(z, E, 1, H) (E, 1, H) -> DimShuffle (E, H)
    """
    lead = z.ndim - 1 - len(sizes)
    total = SumTo()(z, shape_i(z, 0), *([1] * lead), *sizes)
    return dimshuffle(total, (0,) + tuple(range(lead + 1, z.ndim)))


def _state_groups(args):
    """Lists of (kind, index) of states with the same kind, taps, ring and initial value."""
    groups = {}
    for j, init in enumerate(args.outer_in_sit_sot):
        groups.setdefault(("sit_sot", (-1,), init, args.sit_sot_rows[j]), []).append(j)
    for j, init in enumerate(args.outer_in_mit_sot):
        key = ("mit_sot", args.mit_sot_in_slices[j], init, args.mit_sot_rows[j])
        groups.setdefault(key, []).append(j)
    return [(key[0], js) for key, js in groups.items() if len(js) > 1]


def _state_inputs(args, kind, j):
    return [args.inner_in_sit_sot[j]] if kind == "sit_sot" else args.inner_in_mit_sot[j]


def _merge_states(args):
    """(args with equal states merged, {dropped (kind, j): kept j}) or (args, {})."""
    groups = _state_groups(args)
    while groups:
        trial = _copy(args)
        trial.replace_inner({a: b for kind, js in groups for j in js[1:]
                             for a, b in zip(_state_inputs(trial, kind, j),
                                             _state_inputs(trial, kind, js[0]))})
        _merged_step(trial)
        narrowed = []
        for kind, js in groups:
            outs = getattr(trial, f"inner_out_{kind}")
            same = [j for j in js if outs[j] is outs[js[0]]]
            if len(same) > 1:
                narrowed.append((kind, same))
        if narrowed == groups:
            return trial, {(kind, j): js[0] for kind, js in groups for j in js[1:]}
        groups = narrowed
    return args, {}


def _has_candidates(args):
    lengths = args.outer_in_nit_sot
    return len(set(lengths)) < len(lengths) or bool(_state_groups(args))


@node_rewriter([Scan])
def scan_merge_outputs(fgraph, node):
    """Store once what several outputs of one scan store (see the module docstring)."""
    args = ScanArgs.from_node(node)
    if not _has_candidates(args):
        return None
    _merged_step(args)
    args, dropped_states = _merge_states(args)
    nit_groups = _nit_groups(args)
    if not nit_groups and not dropped_states:
        return None
    later = []    # (old outer output, category, kept index before removals, outer sizes)
    drop = {"nit_sot": set(), "sit_sot": set(), "mit_sot": set()}
    for keep, base, members in nit_groups:
        args.inner_out_nit_sot[keep] = base
        for k, sizes in members:
            if k != keep:
                later.append((args.outer_out_nit_sot[k], "nit_sot", keep, sizes))
                drop["nit_sot"].add(k)
    for (kind, j), keep in dropped_states.items():
        later.append((getattr(args, f"outer_out_{kind}")[j], kind, keep, None))
        drop[kind].add(j)
    for cat, ks in drop.items():
        for k in sorted(ks, reverse=True):
            args.remove(cat, k)
    repl, new = rebuild(node, args)
    info = new.op.info
    for old, cat, keep, sizes in later:
        pos = keep - sum(1 for k in drop[cat] if k < keep)
        z = new.outputs[getattr(info, f"outer_out_{cat}")[pos]]
        repl[old] = z if sizes is None else _sum_rows_to(z, sizes)
    if not all(can_replace(old, v) for old, v in repl.items()):
        return None
    return repl


scan_merge_outputs_pass = InToOut([scan_merge_outputs], name="scan_merge_outputs")


# -- two scans: the same steps ----------------------------------------------------------------
def _value_key(v, memo):
    """A key equal for variables the merge pass would make one (same ops on same inputs)."""
    if v not in memo:
        n = v.owner
        if isinstance(v, Constant):
            memo[v] = ("constant", v.signature())
        elif n is None or is_stateful(n):
            memo[v] = v
        else:
            memo[v] = (n.op, tuple(_value_key(i, memo) for i in n.inputs), n.outputs.index(v))
    return memo[v]


def _merge_key(node, memo):
    """Nodes with equal keys run the same steps (None: never merged)."""
    op, info = node.op, node.op.info
    if op.plan.buffer_rows or op.stateful:
        return None
    try:
        steps = _value_key(node.inputs[0], memo)
        hash(steps)
    except TypeError:        # unhashable props or constant data: the variable itself
        steps = node.inputs[0]
    return steps, info.as_while, info.truncate_gradient, id(op.profile)


def _scans_read(order):
    """node -> the Scan nodes whose outputs it reads, directly or through other nodes."""
    reads = {}
    for n in order:
        r = set()
        for i in n.inputs:
            if i.owner is not None:
                r |= reads.get(i.owner, set())
                if isinstance(i.owner.op, Scan):
                    r.add(i.owner)
        reads[n] = r
    return reads


def _pass_once(a, b):
    """Drop b's sequences and non-sequences that `a` passes too; b's step reads a's."""
    same = {}
    for cat in ("seqs", "non_seqs"):
        outer_a, inner_a = getattr(a, f"outer_in_{cat}"), getattr(a, f"inner_in_{cat}")
        outer_b, inner_b = getattr(b, f"outer_in_{cat}"), getattr(b, f"inner_in_{cat}")
        for k in reversed(range(len(outer_b))):
            m = next((m for m, v in enumerate(outer_a)
                      if v is outer_b[k] and inner_a[m].type == inner_b[k].type), None)
            if m is not None:
                same[inner_b[k]] = inner_a[m]
                b.remove(cat, k)
    b.replace_inner(same)


def _combined(na, nb):
    """ScanArgs of one loop running the steps of `na` and `nb`, or None (different until)."""
    a, b = ScanArgs.from_node(na), ScanArgs.from_node(nb)
    _own_step(b)
    _pass_once(a, b)
    c = _copy(a)
    for fields in CATEGORIES.values():
        for f in fields:
            setattr(c, f, getattr(a, f) + getattr(b, f))
    c.labels.update(b.labels)
    parts = [p for n in (a.name, b.name) for p in (n or "").split("+") if p]
    c.name = "+".join(dict.fromkeys(parts)) or None
    merged = _merged_step(c, [b.cond] if b.cond is not None else [])
    if b.cond is not None and merged[0] is not c.cond:
        return None
    return c, b


def _merge_pair(fgraph, na, nb):
    found = _combined(na, nb)
    if found is None:
        return False
    c, b = found
    repl, new = rebuild(na, c)
    if b.outer_out_n_steps is not None:
        repl[b.outer_out_n_steps] = new.outputs[new.op.info.outer_out_n_steps]
    if not all(can_replace(old, v) for old, v in repl.items()):
        return False
    for old, v in repl.items():
        replace_checked(fgraph, old, v, "scan_merge", na)
    return True


def _find_pair(fgraph, refused):
    order = toposort(fgraph.outputs, blockers=fgraph.inputs)
    nodes = [n for n in order if isinstance(n.op, Scan)]
    reads = _scans_read(order)
    by_key, memo = {}, {}
    for n in nodes:
        key = _merge_key(n, memo)
        if key is not None:
            by_key.setdefault(key, []).append(n)
    for group in by_key.values():
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                if (a, b) not in refused and a not in reads[b] and b not in reads[a]:
                    return a, b
    return None


@graph_pass(name="scan_merge")
def scan_merge(fgraph):
    """Merge scans over the same steps that do not read each other (see the module docstring)."""
    changed, refused = False, set()
    while True:
        pair = _find_pair(fgraph, refused)
        if pair is None:
            return changed
        if _merge_pair(fgraph, *pair):
            changed = True
        else:
            refused.add(pair)
