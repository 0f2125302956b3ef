"""Array construction."""
from ....tensor.assertion import Check
from ....tensor.basic import Alloc, ARange, Join, MakeVector
from ..registry import Kernel, np_dtype, numba_funcify


@numba_funcify.register(Alloc)
def _alloc(op, node, ctx):
    out = node.outputs[0]
    nd = out.ndim
    if nd == 0:
        return "{0}"
    dims = "(" + "".join(f"d{i}, " for i in range(nd)) + ")"
    params = ", ".join(f"d{i}" for i in range(nd))
    dt = np_dtype(out.dtype)
    if node.inputs[0].ndim == 0:
        return Kernel(f"""
def {{name}}(value, {params}):
    return np.full({dims}, value, {dt})
""", "alloc")
    return Kernel(f"""
def {{name}}(value, {params}):
    return broadcast_into(np.empty({dims}, {dt}), value)
""", "alloc")


@numba_funcify.register(ARange)
def _arange(op, node, ctx):
    # NumPy's algorithm, so that float32 ranges round the same way: the length is
    # ceil((stop - start) / step) in float64; the first two values are converted to
    # the dtype and the rest are start + i * (second - first) in the dtype.
    dt = op.dtype
    return Kernel(f"""
def {{name}}(start, stop, step):
    if step == 0:
        raise ValueError('arange: step must not be 0')
    n = int(np.ceil((np.float64(stop) - np.float64(start)) / np.float64(step)))
    out = np.empty(max(n, 0), {np_dtype(dt)})
    if n > 0:
        out[0] = start
    if n > 1:
        out[1] = start + step
        first = out[0]
        delta = out[1] - out[0]
        for i in range(2, n):
            out[i] = first + {np_dtype(dt)}(i) * delta
    return out
""", "arange")


@numba_funcify.register(MakeVector)
def _make_vector(op, node, ctx):
    n = len(node.inputs)
    args = ", ".join(f"x{i}" for i in range(n))
    sets = "\n".join(f"    out[{i}] = x{i}" for i in range(n))
    return Kernel(f"""
def {{name}}({args}):
    out = np.empty({n}, {np_dtype(op.dtype)})
{sets}
    return out
""", "make_vector")


@numba_funcify.register(Join)
def _join(op, node, ctx):
    n = len(node.inputs)
    args = ", ".join(f"x{i}" for i in range(n))
    return Kernel(f"""
def {{name}}({args}):
    return np.concatenate(({args},), axis={op.axis})
""", "join")


@numba_funcify.register(Check)
def _check(op, node, ctx):
    # Values travel with the template; errors.reformat builds the message in Python.
    values = "".join(f", v{i}" for i in range(len(node.inputs) - 2))
    return Kernel(f"""
def {{name}}(x, cond{values}):
    if not cond:
        raise ValueError({op.message!r}{values})
    return x
""", "check")
