"""A sequence stored in the rows of the state buffer the loop writes over it.

A loop that reads a product ``P = x @ U`` as a sequence (pushed out of the loop: one
product of ``(T, B, H)``) and writes a state ``h`` of P's row shape into its own sit_sot
buffer of ``(T+1, B, H)`` rows (``h_t = f(x_t @ U + h_{t-1} @ W)``) keeps two traces
alive during the loop. Step t reads
sequence row t, and writes buffer row ``t + 1`` after the step returns; nothing
reads that sequence row afterwards. So the sequence can live in the buffer's
rows 1..T (the mirror of `scan_nit_sot_into_seq`, bptt/scan/rewriting/inplace.py)::

    before                                   after
    P    = reshape(dot(X2, U))   (T, B, H)    rows = ProductRows(1)(h0, X2, U, shape)
                                              rows[1:] is P (BLAS wrote it there)
    Scan(n, P, h0, W, b)                      Scan(n, rows[1:], HeadRows(1)(rows, h0), W, b)
      buffer: its own (n+1, B, H)               buffer: rows[:n+1]; row t+1 is P[t]
                                                until step t overwrites it

(bptt/tensor/product_rows.py): no T-long temporary at all. ``rows[1:]`` is the
product and ``HeadRows(1)(rows, h0)[:1]`` is h0's row whatever the run-time shapes
(when P's rows are not h0's, as in a broadcasting step or a product wider
than the state, sliced into gates, HeadRows is h0 and the loop keeps a fresh buffer), so the
values are those of the loop before; the ``StoragePlan.seq_into_buffer`` flag
lets the loop keep its buffer in ``rows`` when the sequence is exactly the
initial value's rows after the first (checked once per call).

`scan_seq_into_buffer` sets the flag for a state when all of this is proven:

* the state is a sit_sot, or a mit_sot with the one tap -1 (extent 1: step t
  reads row t and writes row t + 1), with a whole buffer (no save-mem ring) in
  a loop without ``until``;
* the sequence is a matrix product (`Dot`, or a `Reshape` of one to a vector of
  sizes: no -1) of float matrices that this scan alone reads, at that one position (a reversed view of
  a product, or a graph input, is left alone; a go_backwards product of X's
  reversed view is fresh memory in the loop's order and qualifies);
* the sequence row and the state have the same dtype and ndim and static shapes
  that do not contradict; the loop compares the run-time layout once per call
  (`perform._alloc_buffer`, the numba lowering's buffers.py) and otherwise keeps a fresh
  buffer;
* no inner output but the state's own may be a view of the sequence row: the
  row is overwritten when the state is written, before nit_sots, shared values
  and the other states. The state's value itself may be such a view: the
  lowering then copies it through a temporary (`buffer_aliases_row`).

The new rows are read only by this scan (as the sequence, through ``[1:]``, and
as the initial value, through HeadRows), so no other reader sees the rows the
loop overwrites; the backward scan reads the forward's output, a view of the same rows holding
the same values as the fresh buffer did. The pass runs after every pass that
could add a reader (`bptt/compile/passes.py`), after `scan_nit_sot_into_seq`
(a sequence that may hold a nit_sot is left to it), and
on step graphs only with the late gemm passes (earlier, the rows could later be
pushed out of the loop and be read at every step).
"""
from __future__ import annotations

import dataclasses

from ...graph.rewriting import InToOut, node_rewriter
from ...tensor.rewriting.aliasing import may_alias
from ..op import Scan

NAME = "scan_seq_into_buffer"


def _product(fgraph, var, node, pos):
    """``(x, y, shape)`` if `var` is ``dot(x, y)`` or ``reshape(dot(x, y), shape)`` of two
    float matrices, read only by input `pos` of `node` (and the dot only by that reshape)."""
    from ...tensor.basic import stack
    from ...tensor.math import Dot
    from ...tensor.shape import Reshape, shape_tuple

    if list(fgraph.clients.get(var, [])) != [(node, pos)] or var.owner is None:
        return None
    dot, shape = var, None
    if isinstance(var.owner.op, Reshape):
        dot, shape = var.owner.inputs
        if len(fgraph.clients.get(dot, [])) != 1:
            return None
    if dot.owner is None or not isinstance(dot.owner.op, Dot):
        return None
    x, y = dot.owner.inputs
    if not (x.ndim == y.ndim == 2 and x.dtype == y.dtype == var.dtype
            and var.dtype in ("float32", "float64")):
        return None
    if shape is None:
        return x, y, stack(list(shape_tuple(dot)))
    return (x, y, shape) if _sizes(shape) else None


def _sizes(shape):
    """Whether `shape` is a MakeVector of sizes (no -1 to place): Shape_i, constants >= 0,
    and sums and products of them. `ProductRows` then allocates its rows from it as is."""
    from ...graph.basic import Constant
    from ...tensor.basic import MakeVector
    from ...tensor.elemwise import Elemwise
    from ...tensor.scalar_ops import Add, Mul
    from ...tensor.shape import Shape_i

    def size(v):
        if isinstance(v, Constant):
            return int(v.data) >= 0
        op = v.owner.op if v.owner is not None else None
        if isinstance(op, Shape_i):
            return True
        return isinstance(op, Elemwise) and isinstance(op.scalar_op, (Add, Mul)) and all(
            size(i) for i in v.owner.inputs)

    return shape.owner is not None and isinstance(shape.owner.op, MakeVector) and all(
        size(v) for v in shape.owner.inputs)


def _compatible(a, b):
    return a.dtype == b.dtype and a.ndim == b.ndim and all(
        x is None or y is None or x == y for x, y in zip(a.shape, b.shape))


def _row(var):
    return var.type.clone(shape=var.type.shape[1:])


def _step_allows(op, s, j):
    """Whether state `s`'s buffer may hold sequence `j`'s rows, judging the step graph."""
    b = op.info.buffers[s]
    row = op.inner_inputs[op.info.inner_in_seqs[j]]
    mine = b.inner_outputs[0]
    if not _compatible(row.type, op.inner_outputs[mine].type):
        return False
    return all(o == mine for o, v in enumerate(op.inner_outputs) if may_alias(v, row))


def buffer_aliases_row(op, s):
    """Whether state `s`'s step value may overlap its sequence row without being it.

    Then writing it into the buffer row must go through a copy.
    """
    j = op.plan.buffer_seq(s)
    if j is None:
        return False
    row = op.inner_inputs[op.info.inner_in_seqs[j]]
    out = op.inner_outputs[op.info.buffers[s].inner_outputs[0]]
    return out is not row and may_alias(out, row)


def buffer_homes(fgraph, node):
    """For each state of the Scan `node`: the sequence its buffer can hold, or None."""
    op, info = node.op, node.op.info
    chosen = [None] * info.n_states
    if info.as_while:
        return chosen
    taken = {j for j in node.op.plan.nit_sot_into_seq if j is not None}
    for s, b in enumerate(info.buffers):
        if b.kind == "mit_mot" or b.extent != 1 or op.plan.buffer_ring(s) is not None:
            continue
        init = node.inputs[b.outer_input]
        for j in range(info.n_seqs):
            pos = info.outer_in_seqs[j]
            seq = node.inputs[pos]
            if (j not in taken and j not in chosen and _compatible(_row(seq), _row(init))
                    and _product(fgraph, seq, node, pos) and _step_allows(op, s, j)):
                chosen[s] = j
                break
    return chosen


@node_rewriter([Scan], name=NAME)
def scan_seq_into_buffer(fgraph, node):
    """Store a product read as a sequence in the rows of the state buffer written over it."""
    from ...tensor.product_rows import HeadRows, ProductRows

    op, info = node.op, node.op.info
    if op.plan.seq_into_buffer:
        return None
    chosen = buffer_homes(fgraph, node)
    if all(j is None for j in chosen):
        return None
    inputs = list(node.inputs)
    for s, j in enumerate(chosen):
        if j is None:
            continue
        b, pos = info.buffers[s], info.outer_in_seqs[j]
        seq, init = inputs[pos], inputs[b.outer_input]
        rows = ProductRows(1, seq.type.shape)(init, *_product(fgraph, seq, node, pos))
        inputs[pos], inputs[b.outer_input] = rows[1:], HeadRows(1)(rows, init)
    plan = dataclasses.replace(op.plan, seq_into_buffer=tuple(chosen))
    new_op = Scan(op.inner_inputs, op.inner_outputs, info, seq_origins=op.seq_origins,
                  output_labels=op.output_labels, profile=op.profile, plan=plan)
    outputs = new_op.make_node(*inputs).outputs
    if any(a.type != b.type for a, b in zip(node.outputs, outputs)):
        return None   # a static shape became known: the outputs' types would change
    return outputs


scan_seq_into_buffer_pass = InToOut([scan_seq_into_buffer], name=NAME)
