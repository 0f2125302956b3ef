"""`ProductRows` and `HeadRows`: inline statements, no function of their own to compile.

`ProductRows` allocates its rows once from the sizes it is given (the rewrite
passes a vector of sizes, never a -1) and lets one `gemm_into` call write
``x @ y`` into a 2-d C view of the rows after the head; `c_reshape` raises when
the sizes do not hold the product. No copy of the product: a fallback through a
temporary and `copy_into`, and NumPy's -1 placed in scalar code, were more
functions for numba to compile (benchmarks/notes.md).
"""
from ....tensor.product_rows import HeadRows, ProductRows
from ..registry import np_dtype, numba_funcify


@numba_funcify.register(ProductRows)
def _product_rows(op, node, ctx):
    nd, dt, k = node.outputs[0].ndim, np_dtype(node.outputs[0].dtype), op.k
    p = ctx.fresh("pr")
    entries = [f"{{3}}[{d}]" for d in range(nd)]
    same = "".join(f" and {p}.shape[{d}] == {{0}}.shape[{d}]" for d in range(1, nd))
    # The sizes as given (a negative one raises in alloc_empty); c_reshape raises when
    # they do not hold the m x n product; BLAS writes it into the rows after the head.
    return "\n".join([
        f"{p} = alloc_empty(({k} + {', '.join(entries)}, ), {dt})",
        f"gemm_into_call({dt}(1), {{1}}, {{2}}, {dt}(0), "
        f"c_reshape({p}[{k}:], ({{1}}.shape[0], {{2}}.shape[1])))",
        f"if {{0}}.shape[0] >= {k}{same}:",
        f"    copy_into({p}[:{k}], {{0}}[:{k}])",
        p])


@numba_funcify.register(HeadRows)
def _head_rows(op, node, ctx):
    nd = node.outputs[0].ndim
    p = ctx.fresh("hr")
    same = "".join(f" and {{0}}.shape[{d}] == {{1}}.shape[{d}]" for d in range(1, nd))
    # The copy keeps the result writable: the scan may take it as its buffer, and a
    # head that is a constant of the module is a read-only global to numba (the two
    # branches must unify to one type). It copies the head's few rows only when the
    # shapes differ, where the scan allocates a buffer of its own anyway.
    return "\n".join([f"if {{1}}.shape[0] >= {op.k}{same}:",
                      f"    {p} = {{0}}",
                      "else:",
                      f"    {p} = {{1}}.copy()",
                      p])
