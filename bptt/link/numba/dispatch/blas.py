"""`Gemm`: one call of the BLAS runtime (`bptt.link.numba.blas`).

Without ``inplace`` the output is a fresh array holding `z` broadcast, and
the product is accumulated into it (``beta`` scales `z`); with ``inplace``
the result is accumulated into `z`'s own buffer (the rewrite that sets the
flag proved nothing else reads it).

The in-place form is written into the caller: when `z` has the product's
shape and ``alpha``, ``beta`` are nonzero, one ``gemm_into`` call (compiled
anyway for every matrix product) accumulates into `z`; otherwise
``gemm_fresh`` computes NumPy's value in a new array. A `gemm_overwrite`
function doing the same was one more function in every cold compile
(benchmarks/notes.md).
"""
from ....tensor.blas import Gemm
from ..registry import np_dtype, numba_funcify


@numba_funcify.register(Gemm)
def _gemm(op, node, ctx):
    # z always 2-d (a row, or a 1 x 1 array for a scalar): one compile per dtype.
    z = {0: f"alloc_full((1, 1), {{0}}, {np_dtype(node.outputs[0].dtype)})",
         1: "{0}[None, :]", 2: "{0}"}[node.inputs[0].ndim]
    if not op.inplace:
        return f"gemm_fresh_call({z}, {{1}}, {{2}}, {{3}}, {{4}})"
    p = ctx.fresh("gemm")
    # beta == 0 must still turn z's nan into nan (BLAS would not read z): gemm_fresh.
    return "\n".join([
        f"{p}_z = {z}",
        f"if {{1}} != 0 and {{4}} != 0 and {p}_z.shape[0] == {{2}}.shape[0] and "
        f"{p}_z.shape[1] == {{3}}.shape[1] and {{2}}.shape[1] == {{3}}.shape[0]:",
        f"    {p}_out = gemm_into_call({{1}}, {{2}}, {{3}}, {{4}}, {p}_z)",
        "else:",
        f"    {p}_out = gemm_fresh_call({p}_z, {{1}}, {{2}}, {{3}}, {{4}})",
        f"{p}_out"])
