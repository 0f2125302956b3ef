"""`Gemm`: one call of the BLAS runtime (`bptt.link.numba.blas`).

Without ``inplace`` the output is a fresh array holding `z` broadcast, and
the product is accumulated into it (``beta`` scales `z`); with ``inplace``
the result is accumulated into `z`'s own buffer (the rewrite that sets the
flag proved nothing else reads it).
"""
from ....tensor.blas import Gemm
from ..registry import np_dtype, numba_funcify


@numba_funcify.register(Gemm)
def _gemm(op, node, ctx):
    fn = "gemm_overwrite_call" if op.inplace else "gemm_fresh_call"
    # z always 2-d (a row, or a 1 x 1 array for a scalar): one compile per dtype.
    z = {0: f"alloc_full((1, 1), {{0}}, {np_dtype(node.outputs[0].dtype)})",
         1: "{0}[None, :]", 2: "{0}"}[node.inputs[0].ndim]
    return fn + f"({z}, {{1}}, {{2}}, {{3}}, {{4}})"
