"""Sequences that are one value everywhere are not read row by row: `scan_fill_sequences`.

A sequence computed as ``alloc(v, L, *row)`` (zeros, ones, a broadcast
scalar), possibly seen through slices of its first axis (``[a:b]``,
``[::-1]``: the gradient's zeros cotangent of a state nobody reads), has the
same row ``alloc(v, *row)`` at every step. The rewrite drops such a sequence
and computes its row inside the step::

    outer:  seqs [..., alloc(v, L, d1, .., dk)[s], ...]   non_seqs [...]
    inner:  row                                            (one step's row)
      -->
    outer:  seqs [..., ...]                  non_seqs [..., v?, d1?, .., dk?]
    inner:  alloc(v, d1, .., dk)

(`?`: passed as a non-sequence unless it is a constant; constants are used
in the step as they are, so the step's rewrites see ``zeros + x`` and keep
``x``.) The T-long array is then no longer needed by the loop; when nothing
else reads it, it is never allocated.

The loop checked that the sequence has at least ``n_steps`` rows. That check
is kept unless the size facts (`bptt.tensor.rewriting.sizes`) prove the
length equals ``n_steps`` (or both are known and the length is not smaller):
the row's first size ``d1`` (the value for a scalar row) is passed as
``check(d1, L >= n_steps, ...)`` with the loop's own message, where ``L`` is
the length of the same slices of a one-byte-per-row proxy (`fill_length`),
not of the fill. ``n_steps`` itself is left alone: rewrites compare it by
identity (a nit_sot's length is ``n_steps``), and `sizes.value_key` sees
through the `Check`, so the step still knows ``d1``'s size. A sequence whose row the step does not read is
left to `scan_remove_unused`.

It runs after `scan_save_mem`, which makes the sequence: the backward
scan's mit_mot cotangent of a state the loss does not read becomes a sit_sot
plus a sequence of its zeros buffer's later rows. The step's rows are then
simplified by `scan_step_shapes`, run again here (see `ScanFillSequences`).
"""
from __future__ import annotations

import numpy as np

from ...graph.basic import Constant
from ...graph.rewriting import GraphRewriter, InToOut, node_rewriter
from ...tensor.assertion import check
from ...tensor.basic import Alloc
from ...tensor.math import ge, maximum
from ...tensor.rewriting.sizes import dim_key, size_facts, subtensor_class, value_key
from ...tensor.shape import shape_i
from ...tensor.subtensor import SliceSpec
from ...tensor.type import TensorConstant, TensorType
from ..args import ScanArgs
from ..op import Scan, sequence_too_short, taps_too_short
from .basic import rebuild
from .shapes import scan_step_shapes


def fill_source(v):
    """(value, row sizes, slices) when every row of `v` is ``alloc(value, *row sizes)``:
    `v` is ``alloc(value, L, *row sizes)`` seen through the first-axis `slices` (Subtensor
    nodes, innermost first); else None."""
    sub = subtensor_class()
    slices = []
    while v.owner is not None and isinstance(v.owner.op, sub):
        idx = v.owner.op.idx_list
        if len(idx) != 1 or not isinstance(idx[0], SliceSpec):
            return None    # only slices of the first axis keep every row whole
        slices.append(v.owner)
        v = v.owner.inputs[0]
    node = v.owner
    if node is None or not isinstance(node.op, Alloc):
        return None
    value, length, *row = node.inputs
    if value.ndim > len(row):
        return None        # a value with a row axis of its own: rows equal, but not alloc(v, *row)
    return value, row, (length, slices[::-1])


def fill_length(slices):
    """The number of rows of the fill (`fill_source`'s third item), computed on a proxy of
    one byte per row: the same slices of ``alloc(int8 0, L)``, not of the fill itself."""
    length, nodes = slices
    v = Alloc()(TensorConstant(TensorType("int8", ()), np.int8(0)), length)
    for n in nodes:
        v = n.op(v, *n.inputs[1:])
    return shape_i(v, 0)


def _read(op, inner):
    return any(inner in n.inputs for n in _step_nodes(op)) or inner in op.inner_outputs


def _step_nodes(op):
    from ...graph.traversal import toposort

    cache = op.__dict__.setdefault("_rw_fill_nodes", None)
    if cache is None:
        cache = op.__dict__["_rw_fill_nodes"] = toposort(op.inner_outputs,
                                                         blockers=op.inner_inputs)
    return cache


def _proved_long_enough(fgraph, seq, n_steps):
    """True when the size facts prove ``len(seq) >= n_steps`` (equal, or known sizes)."""
    facts = size_facts(fgraph)
    steps, rows = facts.find(value_key(n_steps, facts)), facts.find(dim_key(fgraph, seq, 0))
    if steps == rows:
        return True
    return steps[0] == rows[0] == "const" and rows[1] >= steps[1]


def _length_check(args, k, slices, x):
    """`x` checked to run only with a fill of at least ``n_steps`` rows, with the message
    the loop gives for its sequence `k` (`Scan.sequence_error`): the user's sequence,
    its taps and ``n_steps + span`` when `k` holds all of the user's rows (its origin's
    offset is 0; with one tap, ``span`` is 0 too), the outer sequence's rows otherwise."""
    n_steps, rows = args.n_steps, fill_length(slices)
    label = args.info.label
    o = args.seq_origins[k]
    if o is None or o.offset != 0:
        return check(x, ge(rows, n_steps), sequence_too_short(label, k), rows, n_steps)
    steps = maximum(n_steps, 0)
    return check(x, ge(rows, steps + o.span), taps_too_short(label, o), rows, steps,
                 steps + o.span)


def _inner_value(args, v):
    """`v` as the step reads it: a constant as itself, anything else as a new non-sequence."""
    if isinstance(v, Constant):
        return v.clone()
    if v in args.outer_in_non_seqs:
        return args.inner_in_non_seqs[args.outer_in_non_seqs.index(v)]
    return args.add_non_seq(v)


def _filled_initial_states(args):
    """Initial states that are fills: ``(category, index, new outer value)`` with the new
    value an alloc of the rows the state reads (no view of a T-long fill)."""
    out = []
    for cat in ("mit_sot", "sit_sot"):
        for j, outer in enumerate(getattr(args, f"outer_in_{cat}")):
            src = fill_source(outer)
            if src is None or not src[2][1]:
                continue    # not a fill, or the fill itself (nothing to shrink)
            value, row, slices = src
            new = Alloc()(value, fill_length(slices), *row)
            if new.type == outer.type:
                out.append((cat, j, new))
    return out


@node_rewriter([Scan])
def scan_fill_sequences(fgraph, node):
    """Compute the row of a sequence that is one value everywhere inside the step."""
    op = node.op
    args = ScanArgs.from_node(node)
    found = []
    for k, (outer, inner) in enumerate(zip(args.outer_in_seqs, args.inner_in_seqs)):
        src = fill_source(outer)
        if src is not None and _read(op, inner):
            found.append((k, src))
    if not found:
        return None
    mapping = {}
    for k, (value, row, slices) in found:
        inner = args.inner_in_seqs[k]
        parts = [value] + list(row)
        if not _proved_long_enough(fgraph, args.outer_in_seqs[k], args.n_steps):
            # the row's first size (the value for a scalar row) carries the length check
            at = 1 if row else 0
            parts[at] = _length_check(args, k, slices, parts[at])
        new = Alloc()(*(_inner_value(args, v) for v in parts))
        if new.type != inner.type:
            return None
        mapping[inner] = new
    args.replace_inner(mapping)
    for k, _ in reversed(found):
        args.remove("seqs", k)
    # The fill's first rows are often also an initial state (the zeros cotangent's first
    # row): that view would keep the whole fill allocated.
    for cat, j, new in _filled_initial_states(args):
        getattr(args, f"outer_in_{cat}")[j] = new
    return rebuild(node, args)[0]


class ScanFillSequences(GraphRewriter):
    """Graph rewriter: `scan_fill_sequences` on every Scan, then `scan_step_shapes` on the
    graph if that changed a loop (the step's rewrites then drop ``zeros + x``: the row's
    sizes are int non-sequences whose outer values the step shapes relate)."""

    name = "scan_fill_sequences"
    _walk = InToOut([scan_fill_sequences], name="scan_fill_sequences_walk")

    def apply(self, fgraph):
        if not self._walk.apply(fgraph):
            return False
        scan_step_shapes.apply(fgraph)
        return True


scan_fill_sequences_pass = ScanFillSequences()
