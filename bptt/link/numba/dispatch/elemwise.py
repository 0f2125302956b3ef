"""Elementwise ops lower to inline expressions, which numba fuses into one loop."""
from ....tensor.elemwise import Elemwise
from ..registry import np_dtype, numba_funcify


def cast_source(arg, dtype, ndim):
    if ndim:
        return f"{arg}.astype({np_dtype(dtype)})"
    if dtype == "bool":
        return f"({arg} != 0)"
    return f"np.{dtype}({arg})"


@numba_funcify.register(Elemwise)
def _elemwise(op, node, ctx):
    in_dtypes, out_dtype = op.compute_dtypes(node)
    args = []
    for k, (v, dt) in enumerate(zip(node.inputs, in_dtypes)):
        a = "{%d}" % k
        args.append(a if v.dtype == dt else cast_source(a, dt, v.ndim))
    ndims = [v.ndim for v in node.inputs]
    expr = op.scalar_op.numba_expr(args, in_dtypes, out_dtype, ndims)
    if node.outputs[0].ndim == 0 and out_dtype != "bool":
        # numba widens scalar arithmetic (int32 + int32 -> int64); NumPy does not.
        expr = f"np.{out_dtype}({expr})"
    return expr
