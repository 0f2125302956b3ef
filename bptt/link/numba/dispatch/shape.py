"""Shape queries and views."""
import numpy as np

from ....tensor.shape import BroadcastTo, DimShuffle, Reshape, Shape, Shape_i, SumTo
from ..registry import Kernel, np_dtype, numba_funcify


@numba_funcify.register(Shape)
def _shape(op, node, ctx):
    nd = node.inputs[0].ndim
    if nd == 0:
        return "alloc_empty(0, np.int64)"
    # Statements, not np.array(x.shape): that is a function compiled per ndim.
    v = ctx.fresh("shp")
    sets = "".join(f"{v}[{d}] = {{0}}.shape[{d}]\n" for d in range(nd))
    return f"{v} = alloc_empty({nd}, np.int64)\n{sets}{v}"


@numba_funcify.register(Shape_i)
def _shape_i(op, node, ctx):
    # A shape entry is an intp: already int64 where intp is 64 bits (no typed wrapper call).
    return f"{{0}}.shape[{op.i}]" if _INTP_IS_INT64 else f"np.int64({{0}}.shape[{op.i}])"


_INTP_IS_INT64 = np.dtype(np.intp) == np.dtype(np.int64)


def _tuple_of(vec, n):
    return "(" + "".join(f"{vec}[{i}], " for i in range(n)) + ")"


@numba_funcify.register(Reshape)
def _reshape(op, node, ctx):
    x = node.inputs[0]
    out = node.outputs[0]
    dt = np_dtype(out.dtype)
    if x.ndim == 0:
        # A -1 entry stands for 1 here (the only size that fits one element).
        sizes = "(" + "".join(f"1 if shp[{i}] == -1 else shp[{i}], " for i in range(op.ndim)) + ")"
        return Kernel(f"""
def {{name}}(x, shp):
    out = alloc_empty({sizes}, {dt})
    if out.size != 1:
        raise ValueError('cannot reshape an array of size 1 to the requested shape')
    out.ravel()[0] = x
    return out
""" if op.ndim else "def {name}(x, shp):\n    return x\n", "reshape0")
    if op.ndim == 0:
        return Kernel("""
def {name}(x, shp):
    if x.size != 1:
        raise ValueError('cannot reshape an array of more than one element to a scalar')
    return x.ravel()[0]
""", "reshape_scalar")
    # Inline: a kernel was a compiled function per (ndim, layout) pair, and
    # np.ascontiguousarray another one even for an array that is C-contiguous already.
    # c_reshape (an intrinsic): numba's .reshape compiles helpers on first use.
    return f"c_reshape(c_contiguous({{0}}), {_tuple_of('{1}', op.ndim)})"


@numba_funcify.register(DimShuffle)
def _dimshuffle(op, node, ctx):
    x = node.inputs[0]
    out_nd = len(op.new_order)
    if x.ndim == 0:
        if out_nd == 0:
            return "{0}"
        return f"alloc_full({(1,) * out_nd!r}, {{0}}, {np_dtype(node.outputs[0].dtype)})"
    order = op.drop + op.perm
    if order == tuple(range(x.ndim)):
        src = "{0}"
    else:
        # A strided view written into the caller (an intrinsic): numba's
        # np.transpose(x, axes) and as_strided are slow to compile (benchmarks/notes.md).
        shape = "".join(f"{{0}}.shape[{p}], " for p in order)
        strides = "".join(f"{{0}}.strides[{p}], " for p in order)
        src = f"strided_view({{0}}, ({shape}), ({strides}))"
    idx = ["0"] * len(op.drop) + ["None" if o == "x" else ":" for o in op.new_order]
    if all(i == ":" for i in idx):
        return src
    return f"{src}[{', '.join(idx)}]"


@numba_funcify.register(BroadcastTo)
def _broadcast_to(op, node, ctx):
    x = node.inputs[0]
    shp = _tuple_of("shp", op.ndim)
    if x.ndim == 0:
        return Kernel(f"""
def {{name}}(x, shp):
    return alloc_full({shp}, x, {np_dtype(node.outputs[0].dtype)})
""", "broadcast_scalar")
    return Kernel(f"""
def {{name}}(x, shp):
    return broadcast_into(alloc_empty({shp}, x.dtype), x)
""", "broadcast_to")


@numba_funcify.register(SumTo)
def _sum_to(op, node, ctx):
    g = node.inputs[0]
    n, m = g.ndim, len(node.inputs) - 1
    if m == 0:
        return f"np.{g.dtype}(np.sum({{0}}))" if n else "{0}"
    if n > 4:
        return _sum_to_inline(n, m, ctx)
    # One call of a function compiled once per (dtype, rank, layout) (reduce_runtime.py):
    # the fast path and 4-d view written here would be compiled again for every SumTo.
    dims = "".join(f"np.int64({{{i + 1}}}), " for i in range(m))
    return f"{'sum_to_call' if n == m else 'sum_to_new_call'}({{0}}, ({dims}))"


def _sum_to_inline(n, m, ctx):
    # out[.., j if d != 1 else 0, ..] += g[.., j, ..] over g, after checking that g is a
    # broadcast of the target shape (writing out of bounds would corrupt memory). Both
    # are indexed through their flat views (elem_view: stride 0 along a size-1 dimension
    # is the `else 0`), which vectorize where indexing g (layout 'A': reversed rows) with
    # the selects did not (a bias gradient, a T x B x H sum into H: benchmarks/notes.md).
    # Each element sums in the same order.
    p, lead = ctx.fresh("sumto"), n - m
    d = [f"{{{i + 1}}}" for i in range(m)]
    lines = []
    for i in range(m):
        lines += [f"if {d[i]} != 1 and {d[i]} != {{0}}.shape[{lead + i}]:",
                  "    raise ValueError('sum_to: the gradient is not a broadcast of the input shape')"]
    body, ind = [f"{p} = alloc_zeros(({''.join(f'{x}, ' for x in d)}), {{0}}.dtype)",
                 f"{p}_f, {p}_o, {p}_e = elem_view({p})",
                 f"{p}_fg, {p}_og, {p}_eg = elem_view({{0}})"], ""
    for i in range(n):
        body.append(f"{ind}for {p}_j{i} in range({{0}}.shape[{i}]):")
        ind += "    "
    oi = "".join(f" + {p}_j{lead + i} * {p}_e[{i}]" for i in range(m))
    gi = "".join(f" + {p}_j{i} * {p}_eg[{i}]" for i in range(n))
    body.append(f"{ind}{p}_f[np.uint64({p}_o{oi})] += {p}_fg[np.uint64({p}_og{gi})]")
    if lead:
        return "\n".join(lines + body + [p])
    same = " and ".join(f"{{0}}.shape[{i}] == {d[i]}" for i in range(m))
    lines += [f"if {same}:", f"    {p}_out = {{0}}", "else:"]
    lines += [f"    {line}" for line in body] + [f"    {p}_out = {p}"]
    return "\n".join(lines + [f"{p}_out"])
