"""A summed product read only transposed is accumulated column-major: `scan_sum_layout`.

The backward scan of ``h_t = f(h_{t-1} @ W.T + ...)`` (PyTorch's layout, W of shape
(4H, H)) sums the gradient of the non-sequence ``W.T``, an (H, 4H) array, as a summed
nit_sot (`scan_chunk_accumulators`, bptt/scan/rewriting/chunks.py), and the outer graph
reads ``W``'s gradient as its transpose::

    S = sum over steps of h_{t-1}.T @ dz_t       (H, 4H), C order
    g_W = S.T                                    (4H, H), a strided view

Everything downstream of ``g_W`` (clipping, an optimizer's loops over W's shape) then
reads one element per cache line. When every outer reader of the sum is that
transpose, `scan_sum_layout` sets ``StoragePlan.sums_transposed`` for it: the loop
allocates S as the transpose of a C-order (4H, H) array, the chunk gemms write it
column-major (``gemm_into`` takes any layout), and ``S.T`` is a C-order array. The
values are the same; only where the numbers live changes, so ``Scan.perform`` ignores
the entry.

Like the homes (inplace.py), the proof is about the outer graph (who reads the sum),
so a `ScanArgs` edit drops the entry and this pass runs after the last one. A shape
read of the sum (`Shape_i`) does not mind the layout, nor a run-time `Check` of its
shape, whose output is the sum itself.
"""
from __future__ import annotations

import dataclasses

from ...graph.rewriting import InToOut, node_rewriter
from ...tensor.assertion import Check
from ...tensor.shape import DimShuffle, Shape_i
from ..op import Scan

NAME = "scan_sum_layout"


def _transposes(fgraph, var):
    """Whether every reader of `var` (a matrix) transposes it or reads a size of it, seen
    through run-time checks (`Check` passes its input on); and one transposes it."""
    pending, transposed = [var], False
    while pending:
        for node, i in fgraph.clients.get(pending.pop(), []):
            if node == "output":
                return False
            if isinstance(node.op, DimShuffle) and node.op.new_order == (1, 0):
                transposed = True
            elif isinstance(node.op, Check) and i == 0:
                pending.append(node.outputs[0])
            elif not isinstance(node.op, Shape_i):
                return False
    return transposed


def transposed_sums(fgraph, node):
    """Per nit_sot of `node`: True where it is a summed product read only transposed."""
    op, info = node.op, node.op.info
    chosen = [False] * info.n_nit_sot
    for k, o in enumerate(info.outer_out_nit_sot):
        if op.plan.nit_sot_sum(k) is not None and not op.plan.nit_sot_row_sum(k):
            chosen[k] = _transposes(fgraph, node.outputs[o])
    return chosen


@node_rewriter([Scan], name=NAME)
def scan_sum_layout(fgraph, node):
    """Set ``sums_transposed`` for the summed products every reader transposes."""
    op = node.op
    if op.plan.sums_transposed or not op.plan.nit_sot_sums:
        return None
    chosen = transposed_sums(fgraph, node)
    if not any(chosen):
        return None
    plan = dataclasses.replace(op.plan, sums_transposed=tuple(chosen))
    new_op = Scan(op.inner_inputs, op.inner_outputs, op.info, seq_origins=op.seq_origins,
                  output_labels=op.output_labels, profile=op.profile, plan=plan)
    return new_op.make_node(*node.inputs).outputs


scan_sum_layout_pass = InToOut([scan_sum_layout], name=NAME)
