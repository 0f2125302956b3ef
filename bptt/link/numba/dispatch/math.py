"""Matrix products and reductions.

Reductions are generated loops: one pass over the input in C order, adding
(or multiplying, comparing...) each element into an accumulator indexed by
the kept axes. Float sums therefore add in a different order from NumPy's
pairwise summation; results agree to rounding, not bit for bit. float16 and
float32 sums accumulate in float64 and round once at the end: added one by one
in float32, a T x B x H loss lost about 1e-4 relative (now about 1e-8).
"""
from ....tensor.math import All, Any, Argmax, Argsort, Dot, Max, Min, Prod, Reduce, Sum
from ..registry import Kernel, np_dtype, numba_funcify


@numba_funcify.register(Dot)
def _dot(op, node, ctx):
    a, b = node.inputs
    dt = node.outputs[0].dtype
    if dt in ("float32", "float64"):
        # BLAS on the operands' own strides (runtime `blas`): no copy of transposed
        # or row-sliced views, unlike numba's np.dot.
        ca = "{0}" if a.dtype == dt else f"{{0}}.astype({np_dtype(dt)})"
        cb = "{1}" if b.dtype == dt else f"{{1}}.astype({np_dtype(dt)})"
        fn = {(2, 2): "dot_mm", (2, 1): "dot_mv", (1, 2): "dot_vm", (1, 1): "dot_vv"}
        # Inlined into the graph function (numba IR): one call of the separately
        # compiled `gemm_into`, no kernel of its own to compile.
        return f"{fn[a.ndim, b.ndim]}({ca}, {cb})"
    return Kernel(_int_dot_source(a.ndim, b.ndim, dt), "int_dot")


def _int_dot_source(nda, ndb, dt):
    # np.dot in numba needs floats; integer products are loops that accumulate in
    # 64 bits and wrap to the output dtype once (the same result modulo 2**bits).
    rows = "a.shape[0]" if nda == 2 else "1"
    cols = "b.shape[1]" if ndb == 2 else "1"
    ai = "a[i, k]" if nda == 2 else "a[k]"
    bj = "b[k, j]" if ndb == 2 else "b[k]"
    shape = {(2, 2): "(n, m)", (2, 1): "(n,)", (1, 2): "(m,)", (1, 1): None}[(nda, ndb)]
    idx = {(2, 2): "[i, j]", (2, 1): "[i]", (1, 2): "[j]", (1, 1): None}[(nda, ndb)]
    acc = "np.uint64(0)" if dt.startswith("u") else "np.int64(0)"
    check = """
    if a.shape[-1] != b.shape[0]:
        raise ValueError('dot: shapes not aligned')"""
    if shape is None:
        return f"""
def {{name}}(a, b):{check}
    acc = {acc}
    for k in range(a.shape[0]):
        acc += a[k] * b[k]
    return np.{dt}(acc)
"""
    return f"""
def {{name}}(a, b):{check}
    n, m = {rows}, {cols}
    out = alloc_empty({shape}, {np_dtype(dt)})
    for i in range(n):
        for j in range(m):
            acc = {acc}
            for k in range(a.shape[-1]):
                acc += {ai} * {bj}
            out{idx} = acc
    return out
"""


_IDENTITY = {Sum: "0", Prod: "1", All: "True", Any: "False"}
_UPDATE = {Sum: "{acc} += {x}", Prod: "{acc} *= {x}",
           All: "{acc} = {acc} and {x} != 0", Any: "{acc} = {acc} or {x} != 0",
           Max: "if {x} > {acc} or {x} != {x}:\n    {acc} = {x}",
           Min: "if {x} < {acc} or {x} != {x}:\n    {acc} = {x}"}


def _reduce_loop_source(op, node):
    """A reduction over `op.axis` written as one pass over the input."""
    x, out = node.inputs[0], node.outputs[0]
    nd, axes, odt = x.ndim, op.axis, out.dtype
    kept = [i for i in range(nd) if i not in axes]
    kind = type(op) if type(op) in _UPDATE else next(c for c in _UPDATE if isinstance(op, c))
    # float16/32 sums add into float64: one pass adds element by element, and a float32
    # accumulator lost ~1e-4 relative on a T x B x H loss (NumPy sums pairwise).
    wide = kind is Sum and odt in ("float16", "float32")
    lines = ["def {name}(x):"]
    if kind in (Max, Min):
        # NumPy refuses an extremum over zero elements, even when the result is empty.
        reduced = " * ".join(f"x.shape[{i}]" for i in axes)
        lines += [f"    if {reduced} == 0:",
                  f"        raise ValueError('zero-size array to reduction operation "
                  f"{kind.__name__.lower()} which has no identity')"]
        first = ", ".join("0" if i in axes else ":" for i in range(nd))
        lines.append(f"    acc = c_copy(x[{first}])" if kept else f"    acc = x[{first}]")
    else:
        adt = "float64" if wide else odt
        ident = _IDENTITY[kind] if odt == "bool" else f"np.{adt}({_IDENTITY[kind]})"
        shape = "".join(f"x.shape[{i}], " for i in kept)
        lines.append(f"    acc = alloc_full(({shape}), {ident}, {np_dtype(adt)})" if kept
                     else f"    acc = {ident}")
    ind = "    "
    for i in range(nd):
        lines.append(f"{ind}for j{i} in range(x.shape[{i}]):")
        ind += "    "
    acc = "acc[" + ", ".join(f"j{i}" for i in kept) + "]" if kept else "acc"
    elem = "x[" + ", ".join(f"j{i}" for i in range(nd)) + "]"
    lines += [ind + line for line in _UPDATE[kind].format(acc=acc, x=elem).split("\n")]
    result = (f"acc.astype({np_dtype(odt)})" if kept and wide else "acc" if kept or odt == "bool"
              else f"np.{odt}(acc)")
    lines.append(f"    return {result}")
    return "\n".join(lines) + "\n"


@numba_funcify.register(Reduce)
def _reduce(op, node, ctx):
    x, out = node.inputs[0], node.outputs[0]
    if not op.axis:
        if x.dtype == out.dtype:
            return "c_copy({0})" if x.ndim else "{0}"
        return f"{{0}}.astype({np_dtype(out.dtype)})" if x.ndim else f"np.{out.dtype}({{0}})"
    return Kernel(_reduce_loop_source(op, node), f"reduce_{type(op).__name__.lower()}")


@numba_funcify.register(Argmax)
def _argmax(op, node, ctx):
    fn = "argmax" if op.which == "max" else "argmin"
    x = node.inputs[0]
    if x.ndim == 0:
        return "np.int64(0)"
    if op.axis is None or x.ndim == 1:
        return f"np.int64(np.{fn}({{0}}))"
    # Move the axis last, then take the arg-extremum of each row.
    perm = tuple(i for i in range(x.ndim) if i != op.axis) + (op.axis,)
    shape = "".join(f"x.shape[{p}], " for p in perm)
    strides = "".join(f"x.strides[{p}], " for p in perm)
    return Kernel(f"""
def {{name}}(x):
    y = strided_view(x, ({shape}), ({strides}))
    if y.shape[-1] == 0:
        raise ValueError('attempt to get {fn} of an empty sequence')
    flat = c_contiguous(y).reshape((-1, y.shape[-1]))
    out = alloc_empty(flat.shape[0], np.int64)
    for i in range(flat.shape[0]):
        out[i] = np.{fn}(flat[i])
    return out.reshape(y.shape[:-1])
""", fn)


@numba_funcify.register(Argsort)
def _argsort(op, node, ctx):
    x = node.inputs[0]
    if op.axis is None or x.ndim == 1:
        # mergesort: stable, as the reference's kind="stable" (ties keep their order)
        return "np.argsort(c_contiguous({0}).ravel(), kind='mergesort').astype(np.int64)"
    # Move the axis last, sort each row, and move it back.
    perm = tuple(i for i in range(x.ndim) if i != op.axis) + (op.axis,)
    back = tuple(perm.index(i) for i in range(x.ndim))
    shape = "".join(f"x.shape[{p}], " for p in perm)
    strides = "".join(f"x.strides[{p}], " for p in perm)
    return Kernel(f"""
def {{name}}(x):
    y = c_contiguous(strided_view(x, ({shape}), ({strides})))
    flat = y.reshape((-1, y.shape[-1]))
    out = alloc_empty(flat.shape, np.int64)
    for i in range(flat.shape[0]):
        out[i] = np.argsort(flat[i], kind='mergesort')
    return c_contiguous(out.reshape(y.shape).transpose({back}))
""", "argsort")
