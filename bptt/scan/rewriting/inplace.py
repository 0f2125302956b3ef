"""A nit_sot stored in the rows of a sequence that nothing reads after the loop.

A backward scan reads the loss cotangent ``G`` (a fresh ``(T+1, B, H)`` join)
as a sequence, one row per step, and returns the pre-activation cotangent as
a nit_sot of ``T`` rows of the same shape: three T-long arrays are alive
during the loop (the forward trace, ``G`` and the nit_sot). Step t reads
sequence row t and nothing else reads it afterwards, while nit_sot row t is
written after step t returns; so the nit_sot can live in the sequence's rows::

    base = Join(zeros(1, B, H), g)              fresh, read only through views
    seq  = base[0:n+1][::-1][1:]                 row t: read by step t only
    init = base[0:n+1][::-1][:1]                 copied into the state buffer
                                                 before the first step
    Scan(n, ..., seq, init, n, ...)  -> nit_sot row t written into seq[t]
                                        output: seq[:rows], a view of base

`scan_nit_sot_into_seq` sets ``StoragePlan.nit_sot_into_seq`` when all of this
is proven (Theano's ``destroy_map`` for a scan, restricted to what is safe
without a destroy handler):

* the sequence is reached from its *base* only through `Subtensor` slices of
  step 1 or -1 (so its rows are disjoint regions of the base), and the base is
  computed into fresh memory (`Join`, `Alloc`, `IncSubtensor`, a float
  `Elemwise`: see `fresh`); never a graph input, constant, shared value or output;
* every reader of the base, directly or through such views, is this scan node
  at the sequence's position or at a state's initial value (the op copies
  those into its own buffers before the first step), a shape query, or a slice
  of rows the loop never writes (`_reads_other_rows`: after them, ``v[c:]`` with
  ``c >= a + n`` beside ``seq = v[a:]``; before them, ``v[:S]`` beside a view of
  ``v[S:]``); no other view of it is a graph output;
* the sequence row and the nit_sot row have the same dtype and ndim, and
  static shapes that do not contradict; the run-time row shapes are compared
  when the nit_sot is allocated, and a mismatch falls back to fresh rows;
* in the step graph, no inner output but this nit_sot (and states, which are
  copied into their buffers before nit_sots are written) may be a view of the
  sequence row: a shared value or the until condition would be read after the
  row is overwritten. The nit_sot itself may be such a view: the lowering
  then copies it through a temporary (`nit_sot_aliases_row`), unless it is
  the row itself (same memory: the copy is the identity).

The nit_sot's length must be n_steps (one row per step, never a ring); with
``until`` the output is the executed rows. The pass runs after every other
pass that could add a reader (`bptt/compile/passes.py`), and on step graphs
only with the late gemm passes (an early step-graph rewrite could later be pushed out of the
loop and become a value read at every step).
"""
from __future__ import annotations

import dataclasses

from ...graph.rewriting import InToOut, node_rewriter
from ...tensor.rewriting.aliasing import fresh, may_alias
from ..op import Scan

NAME = "scan_nit_sot_into_seq"


# -- the outer graph: a sequence whose rows die after their step ---------------------------
def _row_view(node):
    """Whether `node` is a Subtensor of slices of step 1 or -1 (rows stay disjoint regions)."""
    from ...tensor.subtensor import SliceSpec, Subtensor

    return isinstance(node.op, Subtensor) and all(
        isinstance(e, SliceSpec) and e.step in (None, 1, -1) for e in node.op.idx_list)


def _reshape(node):
    from ...tensor.shape import Reshape

    return isinstance(node.op, Reshape)


def _base(var):
    """The variable `var` is a row view or reshape of (itself when it is none).

    A reshape of a C-contiguous array is a view whose rows are disjoint regions
    of it; of any other array, a copy (then its rows are the copy's).
    """
    while var.owner is not None and (_row_view(var.owner) or _reshape(var.owner)):
        var = var.owner.inputs[0]
    return var


def _owned(var):
    """Whether `var` is memory no other variable views: `fresh`, a product (a `Dot`, or a
    `Gemm` that does not write into its `z`), or a scan's nit_sot output (its own rows, or
    those of a sequence only that scan reads: `scan_nit_sot_into_seq`)."""
    from ...tensor.blas import Gemm
    from ...tensor.math import Dot

    node = var.owner
    if fresh(var) or node is None or getattr(var.type, "ndim", 0) == 0:
        return fresh(var)
    if isinstance(node.op, Dot) or (isinstance(node.op, Gemm) and not node.op.inplace):
        return True
    return isinstance(node.op, Scan) and node.outputs.index(var) in node.op.info.outer_out_nit_sot


def _scan_positions(fgraph, base, scan_node, seq):
    """Positions of `scan_node`'s inputs viewing `base`, or None if something else reads it.

    Walks every client of `base` and of its row views. A shape query reads no
    data, nor does a slice of rows the loop never writes (`_reads_other_rows`);
    anything else but `scan_node` (or being a graph output) is a reader.
    """
    from ...tensor.shape import Shape, Shape_i

    positions, todo, seen = [], [base], set()
    while todo:
        var = todo.pop()
        if var in seen:
            continue
        seen.add(var)
        for client, i in fgraph.clients.get(var, []):
            if client == "output":
                return None
            if client is scan_node:
                positions.append(i)
            elif isinstance(client.op, (Shape, Shape_i)) or _reads_other_rows(fgraph, client,
                                                                               seq, scan_node):
                continue
            elif (_row_view(client) or _reshape(client)) and i == 0:
                todo.append(client.outputs[0])
            else:
                return None
    return positions


def _axis0_start(fgraph, node):
    """``(key, offset)`` of where Subtensor `node`'s forward axis-0 slice starts (or of the
    row it takes: ``v[c]`` reads the rows of ``v[c:]`` or fewer), or None."""
    from ...graph.basic import Constant
    from ...tensor.rewriting.reorder import lin_value
    from ...tensor.subtensor import SCALAR, SliceSpec, Subtensor

    if not isinstance(node.op, Subtensor) or not node.op.idx_list:
        return None
    first = node.op.idx_list[0]
    if first == SCALAR:
        return lin_value(fgraph, node.inputs[1])
    if not isinstance(first, SliceSpec) or first.step not in (None, 1):
        return None
    if first.start is None:
        return (None, 0)
    if first.start == SCALAR:
        start = node.inputs[1]
        return (None, int(start.data)) if isinstance(start, Constant) else lin_value(fgraph, start)
    return (None, first.start) if first.start >= 0 else None


def _reads_other_rows(fgraph, reader, seq, scan_node):
    """Whether `reader` slices only rows of a view of the base that the loop never writes.

    The loop writes rows ``0 .. n-1`` of `seq` (the nit_sot's length is n_steps).

    * after: ``seq = v[a:]`` (a >= 0) has rows ``a .. a+n-1`` of `v` written;
      ``v[c:]`` with ``c >= a + n`` (linear forms) reads none of them. Symbolic-n and
      until gradients read the loss cotangent so for the initial state's cotangent.
    * before: `seq` is a row view of ``v[S:...]``; ``v[...:S]`` (the same `S`)
      reads rows before all of them. A truncated gradient reads the loss cotangent's
      first rows so.
    """
    chain, var = [], seq
    while var.owner is not None and _row_view(var.owner):
        chain.append(var.owner)
        var = var.owner.inputs[0]
    if reader in chain:
        return False
    parts = _axis0_parts(reader)
    for node in chain:
        if node.inputs[0] is reader.inputs[0] and parts is not None and parts[1] is not None:
            mine = _axis0_parts(node)
            if mine is not None and _same_index(mine[0], parts[1]):
                return True
    if not chain or chain[0].inputs[0] is not reader.inputs[0]:
        return False
    from ...tensor.rewriting.reorder import lin_value

    a, c = _axis0_start(fgraph, seq.owner), _axis0_start(fgraph, reader)
    n = lin_value(fgraph, scan_node.inputs[0])
    if a is None or c is None or n is None or a[0] is not None or a[1] < 0:
        return False
    return c[0] == n[0] and c[1] - n[1] - a[1] >= 0 and (n[0] is not None or n[1] >= 0)


def _axis0_parts(node):
    """``(start, stop)`` (None, int or variable) of Subtensor `node`'s forward axis-0 slice."""
    from ...tensor.subtensor import SCALAR, SliceSpec, Subtensor

    if not isinstance(node.op, Subtensor) or not node.op.idx_list:
        return None
    first = node.op.idx_list[0]
    if not isinstance(first, SliceSpec) or first.step not in (None, 1):
        return None
    values = iter(node.inputs[1:])
    return tuple(next(values) if p == SCALAR else p for p in first[:2])


def _same_index(a, b):
    """Whether two slice bounds are provably equal (one variable, or equal constants)."""
    from ...graph.basic import Constant

    if a is None or b is None:
        return False
    if a is b:
        return True
    a, b = (int(x.data) if isinstance(x, Constant) else x for x in (a, b))
    return isinstance(a, int) and isinstance(b, int) and a == b


def _only_reader(fgraph, node, j):
    """Whether sequence `j`'s rows are read by step t only, and its base by nothing else."""
    info = node.op.info
    seq_pos = info.outer_in_seqs[j]
    base = _base(node.inputs[seq_pos])
    if not _owned(base):
        return False
    positions = _scan_positions(fgraph, base, node, node.inputs[seq_pos])
    if positions is None or positions.count(seq_pos) != 1:
        return False
    copied_first = {b.outer_input for b in info.buffers}
    return all(p == seq_pos or p in copied_first for p in positions)


# -- the step graph: who may alias the sequence row ------------------------------------------
def nit_sot_aliases_row(op, k):
    """Whether nit_sot `k`'s step value may overlap its sequence row without being it.

    Then writing it into the row must go through a copy.
    """
    j = op.plan.nit_sot_seq(k)
    if j is None:
        return False
    row = op.inner_inputs[op.info.inner_in_seqs[j]]
    out = op.inner_outputs[op.info.inner_out_nit_sot[k]]
    return out is not row and may_alias(out, row)


def _step_allows(op, k, j):
    """Whether nit_sot `k` may be written into sequence `j`'s row, judging the step graph."""
    info = op.info
    row = op.inner_inputs[info.inner_in_seqs[j]]
    out = op.inner_outputs[info.inner_out_nit_sot[k]]
    if row.type.dtype != out.type.dtype or row.type.ndim != out.type.ndim:
        return False
    if any(a is not None and b is not None and a != b
           for a, b in zip(row.type.shape, out.type.shape)):
        return False
    states = {o for b in info.buffers for o in b.inner_outputs}
    # summed nit_sots are copied into their staging rows before any nit_sot row is written
    states |= {o for q, o in enumerate(info.inner_out_nit_sot) if op.plan.nit_sot_sum(q)}
    mine = info.inner_out_nit_sot[k]
    return all(o in states or o == mine
               for o, v in enumerate(op.inner_outputs) if may_alias(v, row))


def _length_is_n(node, k):
    """Whether nit_sot `k` keeps a row per step (its length input is n_steps): no ring."""
    from ...graph.basic import Constant

    n, length = node.inputs[0], node.inputs[node.op.info.outer_in_nit_sot[k]]
    return length is n or (isinstance(n, Constant) and isinstance(length, Constant)
                           and int(n.data) == int(length.data))


# -- the rewrite -----------------------------------------------------------------------------
def nit_sot_homes(fgraph, node, sums=False):
    """For each nit_sot of the Scan `node`: the sequence whose rows it can be stored in
    (the first that qualifies), or None. `sums`: summed nit_sots too (their chunk's rows
    then live there instead of a staging buffer; `scan_read_through_join` does not keep
    a join for them, staging costs less than the join)."""
    op, info = node.op, node.op.info
    chosen = [None] * info.n_nit_sot
    # a sequence a summed nit_sot multiplies is read again at its chunk's end (chunks.py)
    summed = op.plan.summed_seqs
    held = set(node.op.plan.seq_into_buffer)   # rows a state buffer overwrites (seq_buffer.py)
    for k in range(info.n_nit_sot):
        if not _length_is_n(node, k) or (op.plan.nit_sot_sum(k) is not None and not sums):
            continue
        for j in (j for j in range(info.n_seqs) if j not in summed):
            if j not in chosen and j not in held and _step_allows(op, k, j) \
                    and _only_reader(fgraph, node, j):
                chosen[k] = j
                break
    return chosen


@node_rewriter([Scan], name=NAME)
def scan_nit_sot_into_seq(fgraph, node):
    """Set ``nit_sot_into_seq`` for each nit_sot that can live in a dead sequence's rows."""
    op = node.op
    info = op.info
    if op.plan.nit_sot_into_seq:
        return None
    chosen = nit_sot_homes(fgraph, node, sums=True)
    if all(j is None for j in chosen):
        return None
    plan = dataclasses.replace(op.plan, nit_sot_into_seq=tuple(chosen))
    new_op = Scan(op.inner_inputs, op.inner_outputs, info, seq_origins=op.seq_origins,
                  output_labels=op.output_labels, profile=op.profile, plan=plan)
    return new_op.make_node(*node.inputs).outputs


scan_nit_sot_into_seq_pass = InToOut([scan_nit_sot_into_seq], name=NAME)
