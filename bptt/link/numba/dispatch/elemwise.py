"""Elementwise ops lower to inline expressions, which numba fuses into one loop.

Inputs whose dtype differs from the computation dtype are converted first;
0-d results are converted to the exact output dtype because numba widens
scalar arithmetic (int8 + int8 is int64 there, not in NumPy).
"""
from ....tensor import scalar_ops as so
from ....tensor.elemwise import Elemwise
from ..registry import Kernel, numba_funcify

#: Helper kernels a scalar op's expression may call, by placeholder.
_HELPERS = {
    so.NEGATIVE_POWER_CHECK: Kernel("""
def {name}(b):
    if np.any(b < 0):
        raise ValueError('Integers to negative integer powers are not allowed.')
    return b
""", "check_int_exponents"),
    so.NEGATIVE_POWER_CHECK_0D: Kernel("""
def {name}(b):
    if b < 0:
        raise ValueError('Integers to negative integer powers are not allowed.')
    return b
""", "check_int_exponent"),
}


@numba_funcify.register(Elemwise)
def _elemwise(op, node, ctx):
    in_dtypes, out_dtype = op.compute_dtypes(node)
    args = []
    for k, (v, dt) in enumerate(zip(node.inputs, in_dtypes)):
        a = "{%d}" % k
        args.append(a if v.dtype == dt else so.numba_cast(a, dt, v.ndim))
    ndims = [v.ndim for v in node.inputs]
    expr = op.scalar_op.numba_expr(args, in_dtypes, out_dtype, ndims)
    for placeholder, kernel in _HELPERS.items():
        if placeholder in expr:
            expr = expr.replace(placeholder, ctx.add_kernel(kernel))
    if node.outputs[0].ndim == 0 and out_dtype != "bool":
        # numba widens scalar arithmetic (int32 + int32 -> int64); NumPy does not.
        expr = f"np.{out_dtype}({expr})"
    return expr
