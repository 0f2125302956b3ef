"""Matrix products and reductions."""
from ....tensor.math import Argmax, Dot, Max, Min, Prod, Reduce, Sum, All, Any
from ..registry import Kernel, np_dtype, numba_funcify

_IDENTITY = {Sum: "0", Prod: "1", All: "True", Any: "False"}


@numba_funcify.register(Dot)
def _dot(op, node, ctx):
    a, b = node.inputs
    dt = node.outputs[0].dtype
    if dt in ("float32", "float64"):
        ca = "a" if a.dtype == dt else f"a.astype({np_dtype(dt)})"
        cb = "b" if b.dtype == dt else f"b.astype({np_dtype(dt)})"
        return Kernel(f"""
def {{name}}(a, b):
    return np.dot({ca}, {cb})
""", "dot")
    return Kernel(_int_dot_source(a.ndim, b.ndim, dt), "int_dot")


def _int_dot_source(nda, ndb, dt):
    # np.dot in numba needs floats; integer products are written as loops.
    rows = "a.shape[0]" if nda == 2 else "1"
    cols = "b.shape[1]" if ndb == 2 else "1"
    ai = "a[i, k]" if nda == 2 else "a[k]"
    bj = "b[k, j]" if ndb == 2 else "b[k]"
    shape = {(2, 2): "(n, m)", (2, 1): "(n,)", (1, 2): "(m,)", (1, 1): None}[(nda, ndb)]
    idx = {(2, 2): "[i, j]", (2, 1): "[i]", (1, 2): "[j]", (1, 1): None}[(nda, ndb)]
    if shape is None:
        return f"""
def {{name}}(a, b):
    acc = np.{dt}(0)
    for k in range(a.shape[0]):
        acc += a[k] * b[k]
    return acc
"""
    return f"""
def {{name}}(a, b):
    n, m = {rows}, {cols}
    out = np.zeros({shape}, {np_dtype(dt)})
    for i in range(n):
        for j in range(m):
            acc = np.{dt}(0)
            for k in range(a.shape[-1]):
                acc += {ai} * {bj}
            out{idx} = acc
    return out
"""


def _reduce_loop_source(op, node):
    """A reduction over `op.axis` written as one pass over the input."""
    x = node.inputs[0]
    out = node.outputs[0]
    nd, axes = x.ndim, op.axis
    kept = [i for i in range(nd) if i not in axes]
    odt = out.dtype
    idx = ", ".join(f"j{i}" for i in range(nd))
    oidx = ", ".join(f"j{i}" for i in kept)
    if isinstance(op, (Max, Min)):
        init = f"x[{', '.join('0' if i in axes else ':' for i in range(nd))}].copy()" if kept \
            else f"x[{', '.join('0' for _ in range(nd))}]"
        cmp = ">" if isinstance(op, Max) else "<"
        upd = f"v = x[{idx}]\n{{ind}}if v {cmp} acc{{sub}} or v != v:\n{{ind}}    acc{{sub}} = v"
    else:
        ident = _IDENTITY[type(op)]
        init = f"np.full(({', '.join(f'x.shape[{i}]' for i in kept)},), {ident}, {np_dtype(odt)})" \
            if kept else f"np.{odt}({ident})" if odt != "bool" else ident
        opsym = {Sum: "+=", Prod: "*=", All: "&=", Any: "|="}[type(op)]
        upd = f"acc{{sub}} {opsym} x[{idx}]"
    lines = ["def {name}(x):"]
    if isinstance(op, (Max, Min)):
        lines.append("    if x.size == 0:")
        lines.append("        raise ValueError('zero-size array to reduction operation with no identity')")
    lines.append(f"    acc = {init}")
    ind = "    "
    for i in range(nd):
        lines.append(f"{ind}for j{i} in range(x.shape[{i}]):")
        ind += "    "
    sub = f"[{oidx}]" if kept else ""
    for line in upd.format(ind=ind, sub=sub).split("\n"):
        lines.append(line if line.startswith(ind) else ind + line)
    lines.append("    return acc")
    return "\n".join(lines) + "\n"


@numba_funcify.register(Reduce)
def _reduce(op, node, ctx):
    x = node.inputs[0]
    if not op.axis:
        return "{0}.copy()" if x.ndim else "{0}"
    if isinstance(op, Sum) and len(op.axis) == x.ndim and x.dtype in ("float32", "float64"):
        return "np.sum({0})"
    return Kernel(_reduce_loop_source(op, node), type(op).__name__.lower())


@numba_funcify.register(Argmax)
def _argmax(op, node, ctx):
    fn = "argmax" if op.which == "max" else "argmin"
    x = node.inputs[0]
    if op.axis is None or x.ndim == 1:
        return f"np.{fn}({{0}})"
    # Move the axis last, then take arg-extremum of each row.
    nd = x.ndim
    perm = tuple(i for i in range(nd) if i != op.axis) + (op.axis,)
    return Kernel(f"""
def {{name}}(x):
    y = np.transpose(x, {perm!r})
    flat = np.ascontiguousarray(y).reshape((-1, y.shape[-1]))
    out = np.empty(flat.shape[0], np.int64)
    for i in range(flat.shape[0]):
        out[i] = np.{fn}(flat[i])
    return out.reshape(y.shape[:-1])
""", fn)
