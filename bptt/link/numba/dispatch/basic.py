"""Array construction."""
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
    out = np.empty({dims}, {dt})
    out[...] = value
    return out
""", "alloc")


@numba_funcify.register(ARange)
def _arange(op, node, ctx):
    return Kernel(f"""
def {{name}}(start, stop, step):
    if step == 0:
        raise ValueError('arange: step must not be 0')
    return np.arange(start, stop, step).astype({np_dtype(op.dtype)})
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
