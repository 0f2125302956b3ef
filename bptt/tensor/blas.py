"""`Gemm`: ``beta * z + alpha * (x @ y)`` as one op, so the product is added in place.

BLAS's ``?gemm`` computes ``C := alpha * A @ B + beta * C`` writing into
``C``. The rewrite `bptt.tensor.rewriting.blas.gemm_from_add` turns
``z + dot(x, y)``, ``z - dot(x, y)`` and ``z + a * dot(x, y)`` into this op:
the product then has no temporary of its own. With ``inplace=True`` (set
only by the separate rewrite `gemm_inplace`, which checks that nothing else
can see `z`) the compiled code also writes the result over `z`'s buffer;
without it, `z` is first broadcast into a fresh output. The reference
`perform` never writes in place: in PY mode values alias freely.

The value is NumPy's, broadcasting included: `z` (0 to 2 dims) may
broadcast against the product or, rarely, the product against `z`.
"""
from __future__ import annotations

import numpy as np

from ..graph.basic import Apply
from ..graph.op import Op
from .elemwise import broadcast_static_shape
from .type import TensorType, as_tensor_variable

FLOATS = ("float32", "float64")


class Gemm(Op):
    """``gemm(z, alpha, x, y, beta) = beta * z + alpha * (x @ y)``.

    `x`, `y` are matrices and `z` a tensor of at most 2 dimensions, all of
    one float dtype; `alpha`, `beta` are 0-d of that dtype. ``inplace``
    lets the compiled code overwrite `z` (see the module docstring).
    """

    __props__ = ("inplace",)

    def __init__(self, inplace=False):
        self.inplace = bool(inplace)

    def make_node(self, z, alpha, x, y, beta):
        z, alpha, x, y, beta = map(as_tensor_variable, (z, alpha, x, y, beta))
        dtype = x.dtype
        if dtype not in FLOATS or any(v.dtype != dtype for v in (z, alpha, y, beta)):
            raise TypeError(f"Gemm: expected z, alpha, x, y, beta of one float dtype, got "
                            f"{z.type}, {alpha.type}, {x.type}, {y.type}, {beta.type}")
        if x.ndim != 2 or y.ndim != 2 or z.ndim > 2 or alpha.ndim or beta.ndim:
            raise TypeError(f"Gemm: expected matrices x, y, 0-d alpha, beta and z of at most 2 "
                            f"dimensions, got {z.type}, {alpha.type}, {x.type}, {y.type}, "
                            f"{beta.type}")
        if self.inplace and z.ndim != 2:
            raise TypeError(f"Gemm(inplace=True): z must be a matrix, got {z.type}")
        product = TensorType(dtype, (x.type.shape[0], y.type.shape[1]))
        shape = broadcast_static_shape([z.type, product], "Gemm")
        return Apply(self, [z, alpha, x, y, beta], [TensorType(dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        z, alpha, x, y, beta = inputs
        out = beta * z + alpha * np.dot(x, y)
        output_storage[0][0] = np.asarray(out, dtype=node.outputs[0].dtype)

    def L_op(self, inputs, outputs, output_grads):
        from .math import _dot, mul
        from .math import sum as sum_
        from .shape import dimshuffle

        z, alpha, x, y, beta = inputs
        (g,) = output_grads
        product = _dot(x, y)
        return [mul(beta, g),                        # the sweep sums it to z's shape
                sum_(mul(g, product)),
                mul(alpha, _dot(g, dimshuffle(y, (1, 0)))),
                mul(alpha, _dot(dimshuffle(x, (1, 0)), g)),
                sum_(mul(g, z))]

    def infer_shape(self, fgraph, node, input_shapes):
        from .shape import broadcast_shapes

        sz, _, sx, sy, _ = input_shapes
        return [broadcast_shapes(sz, (sx[0], sy[1]))]


gemm_no_inplace = Gemm(inplace=False)
gemm_inplace = Gemm(inplace=True)


def gemm(z, alpha, x, y, beta):
    """``beta * z + alpha * (x @ y)``, `alpha` and `beta` taking x's dtype.

    Parameters
    ----------
    z : tensor-like
        At most 2 dimensions, broadcast against the product as NumPy does.
    alpha, beta : scalar-like
        Cast to the dtype of `x`.
    x, y : TensorVariable
        Float matrices of one dtype.

    Returns
    -------
    TensorVariable
        A matrix of x's dtype.
    """
    from .basic import cast

    x = as_tensor_variable(x)
    dtype = x.dtype
    z, alpha, beta = (cast(as_tensor_variable(v), dtype) for v in (z, alpha, beta))
    return gemm_no_inplace(z, alpha, x, y, beta)
