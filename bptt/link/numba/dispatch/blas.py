"""`Gemm`: one call of the BLAS runtime (`bptt.link.numba.blas`).

Without ``inplace`` the output is a fresh array holding `z` broadcast, and
the product is accumulated into it (``beta`` scales `z`); with ``inplace``
the result is accumulated into `z`'s own buffer (the rewrite that sets the
flag proved nothing else reads it).
"""
from ....tensor.blas import Gemm
from ..registry import numba_funcify


@numba_funcify.register(Gemm)
def _gemm(op, node, ctx):
    fn = "gemm_overwrite_call" if op.inplace else "gemm_fresh_call"
    return fn + "({0}, {1}, {2}, {3}, {4})"
