"""`ProductRows` and `HeadRows`: inline statements, no function of their own to compile.

`ProductRows` allocates its rows once and lets one `gemm_into` call write
``x @ y`` into a 2-d C view of the rows after the head; when that is not the
reshape NumPy would do (a size of zero, or a -1 entry it cannot place), the
product is computed apart and copied, with the reshape's errors.
"""
from ....tensor.product_rows import HeadRows, ProductRows
from ..registry import np_dtype, numba_funcify


@numba_funcify.register(ProductRows)
def _product_rows(op, node, ctx):
    nd, dt, k = node.outputs[0].ndim, np_dtype(node.outputs[0].dtype), op.k
    p = ctx.fresh("pr")
    shape = "".join(f"{{3}}[{d}], " for d in range(nd))
    row = "".join(f"{{3}}[{d}], " for d in range(1, nd))
    size = " * ".join(f"{{3}}[{d}]" for d in range(1, nd)) or "1"
    # Every entry known (no -1) and nonzero rows: the reshape is a C view of the rows.
    known = " and ".join(f"{{3}}[{d}] >= 0" for d in range(nd))
    same = "".join(f" and {p}.shape[{d}] == {{0}}.shape[{d}]" for d in range(1, nd))
    return "\n".join([
        f"{p}_m, {p}_n = {{1}}.shape[0], {{2}}.shape[1]",
        f"if {known} and {size} > 0 and {{3}}[0] * {size} == {p}_m * {p}_n:",
        f"    {p} = alloc_empty(({k} + {{3}}[0], {row}), {dt})",
        f"    gemm_into_call({dt}(1), {{1}}, {{2}}, {dt}(0), c_reshape({p}[{k}:], ({p}_m, {p}_n)))",
        "else:",
        f"    {p}_p = c_reshape(dot_mm({{1}}, {{2}}), ({shape}))",
        f"    {p} = alloc_zeros(({k} + {p}_p.shape[0],) + {p}_p.shape[1:], {dt})",
        f"    copy_into({p}[{k}:], {p}_p)",
        f"if {{0}}.shape[0] >= {k}{same}:",
        f"    copy_into({p}[:{k}], {{0}}[:{k}])",
        p])


@numba_funcify.register(HeadRows)
def _head_rows(op, node, ctx):
    nd = node.outputs[0].ndim
    p = ctx.fresh("hr")
    same = "".join(f" and {{0}}.shape[{d}] == {{1}}.shape[{d}]" for d in range(1, nd))
    # Both branches typed 'A': the rows (C) and the head (any layout) unify.
    return "\n".join([f"if {{1}}.shape[0] >= {op.k}{same}:",
                      f"    {p} = {{0}}",
                      "else:",
                      f"    {p} = {{1}}",
                      p])
