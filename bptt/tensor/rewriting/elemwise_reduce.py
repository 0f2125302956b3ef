"""A reduction whose input is an elementwise expression nothing else reads is one loop.

Fusion (`fusion.py`) groups Elemwise nodes only, so ``sum(tanh(a) * b,
axis=0)`` ran as a fused elementwise loop writing a fresh array, then a
reduction loop reading it. Rewritten (after fusion, so the elementwise part
is the whole fused expression)::

    reduce{axes}(elemwise(x, y, ...))   ->   ElemwiseReduce(reduce{axes}, elemwise)(x, y, ...)

one loop over the broadcast shape of ``x, y, ...``, accumulating as it goes
(tensor/elemwise_reduce.py). It applies when:

* the reduction is a `Sum`, `Prod`, `Max` or `Min` over at least one axis;
* its input is the output of an `Elemwise` (not in place) of ndim >= 1 and
  of a real or integer dtype (bool sums are counts: left to the two loops);
* that output is read by the reduction alone and is not a graph output
  (otherwise it is stored anyway).

Values: a partial reduction visits the elements in C order, as the reduction
loop did over the stored array, and computes each element in the Elemwise's
exact dtype, so the NUMBA result is the unfused NUMBA result bit for bit
(float32 sums still accumulate in float64); a sum over every axis adds
partial sums per index of the last axis (it vectorizes), equal to rounding.

This replaces ``sum_of_product_to_dot`` (a float64 ``sum(a * b)`` over every
axis as a BLAS dot of the flattened operands): a 1 x n by n x 1 gemm is no
faster than the two loops it replaced, and the fused loop is several times
faster than either (benchmarks/elemwise_reduce.py, figures in benchmarks/notes.md).
"""
from __future__ import annotations

from ...graph.rewriting import can_replace, node_rewriter
from ..elemwise import Elemwise
from ..elemwise_reduce import ElemwiseReduce
from ..math import Max, Min, Prod, Sum

_REDUCTIONS = (Sum, Prod, Max, Min)


@node_rewriter(list(_REDUCTIONS))
def reduce_of_elemwise(fgraph, node):
    """``reduce(elemwise(...))`` -> ``ElemwiseReduce`` (see the module docstring)."""
    x, out = node.inputs[0], node.outputs[0]
    p = x.owner
    if (type(node.op) not in _REDUCTIONS or not node.op.axis or p is None
            or not isinstance(p.op, Elemwise) or p.op.inplace_input is not None
            or x.ndim == 0 or x.dtype == "bool" or x.dtype.startswith("complex")
            or x in fgraph.outputs
            or len(fgraph.clients.get(x, ())) != 1):
        return None
    new = ElemwiseReduce(node.op, p.op)(*p.inputs)
    return [new] if new.type == out.type and can_replace(out, new) else None
