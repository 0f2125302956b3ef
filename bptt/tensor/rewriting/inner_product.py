"""A sum over every axis of a product of two equal-shaped arrays is an inner product.

``sum(a * b)`` lowers to two loops: the elementwise product, written into a
fresh array of ``a``'s shape, then the reduction. Fusion (`fusion.py`) groups
Elemwise nodes only, so a reduction never shares its input's loop. The
benchmark loss ``0.5 * (H ** 2).sum()`` (canonicalized to
``sum(H[1:] * H[1:])``) thus allocated a T x B x H temporary: one more trace
at the forward's peak. Rewritten::

    sum{all axes}(mul(a, b))   ->   dot(flatten(a), flatten(b))

one pass over ``a`` and ``b`` (`dot_vv`: a 1 x n by n x 1 BLAS gemm above a few
hundred elements),
no temporary: ``flatten`` of a C-contiguous array (the trace's rows) is a
view.

The rewrite applies when all of this holds:

* the sum is over every axis of a 1-d or larger product of exactly two
  operands, and every dtype is float64. A float32 BLAS product accumulates in
  float32, while the NUMBA sum accumulates float32 in float64 (a float32
  accumulator lost ~1e-4 relative on a T x B x H loss): float32 is left alone;
* the product is read by the sum alone and is not a graph output (otherwise
  it is stored anyway);
* ``a`` and ``b`` have the product's shape, proven (``a is b``, or equal size
  keys, `sizes.shape_keys`): the product broadcasts, the flattened vectors
  would not.

The summation order changes (as between NumPy's pairwise sum and the NUMBA
loop): the value is equal to rounding, not bit for bit.
"""
from __future__ import annotations

from ...graph.rewriting import can_replace, node_rewriter
from ..elemwise import Elemwise
from ..math import Dot, Sum
from ..scalar_ops import Mul
from ..shape import flatten
from .sizes import shape_keys


def _same_shape(fgraph, a, b, x):
    if a.ndim != x.ndim or b.ndim != x.ndim:
        return False
    if a is b:
        return True
    keys = shape_keys(fgraph, x)
    return shape_keys(fgraph, a) == keys and shape_keys(fgraph, b) == keys


@node_rewriter([Sum])
def sum_of_product_to_dot(fgraph, node):
    """``sum{all axes}(a * b)`` -> ``dot(flatten(a), flatten(b))`` (see the module docstring)."""
    x, out = node.inputs[0], node.outputs[0]
    p = x.owner
    if (x.ndim == 0 or tuple(node.op.axis) != tuple(range(x.ndim)) or p is None
            or not isinstance(p.op, Elemwise) or not isinstance(p.op.scalar_op, Mul)
            or len(p.inputs) != 2 or x in fgraph.outputs
            or len(fgraph.clients.get(x, ())) != 1):
        return None
    a, b = p.inputs
    if {a.dtype, b.dtype, x.dtype, out.dtype} != {"float64"} or not _same_shape(fgraph, a, b, x):
        return None
    fa = flatten(a)
    new = Dot()(fa, fa if a is b else flatten(b))
    return [new] if new.type == out.type and can_replace(out, new) else None
