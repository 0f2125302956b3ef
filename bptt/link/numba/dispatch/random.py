"""Random draws in numba code.

numba accepts ``numpy.random.Generator`` arguments and draws the same
numbers as NumPy for the primitives `bptt.tensor.random` builds on. A numba
draw advances the generator object it was given, in place; so, like
`RandomVariable.perform`, each kernel first copies its input generator
(in an object-mode block: numba cannot create generators) and draws from
and returns the copy. The input generator is never touched, in the outer
graph and inside loops alike.

Every kernel mirrors the ``draw`` method of its op line for line: same
primitives, same order, same float64 arithmetic, then a cast.
"""
from __future__ import annotations

import warnings

from numba.core.errors import NumbaWarning

from ....tensor.random import (BinomialRV, ChoiceRV, IntegersRV, NormalRV, PermutationRV,
                               UniformRV)
from ..registry import Kernel, np_dtype, numba_funcify

# `npy_rng` is numba's name for the Generator type.
COPY = """\
    with numba.objmode(g='npy_rng'):
        bit_gen = type(rng.bit_generator)(0)
        bit_gen.state = rng.bit_generator.state
        g = np.random.Generator(bit_gen)
"""
# The copy is the only object-mode code in generated modules; numba warns that
# it holds the GIL under nogil=True, which is expected and harmless here.
warnings.filterwarnings("ignore", message="Code running in object mode won't allow parallel",
                        category=NumbaWarning)


def _size_tuple(node):
    n = node.inputs[1].type.shape[0]
    return "(" + "".join(f"size[{i}], " for i in range(n)) + ")"


def _shape_source(node, names):
    """Source for the sample's shape: `size`, or the broadcast of array parameters."""
    if node.inputs[1].type.shape[0]:
        return _size_tuple(node)
    arrays = [f"{name}.shape" for name, p in zip(names, node.inputs[2:]) if p.ndim]
    if not arrays:
        return "()"
    if len(arrays) == 1:
        return arrays[0]
    return f"np.broadcast_shapes({', '.join(arrays)})"


def _as_f64(name, var):
    return f"{name}.astype(np.float64)" if var.ndim else f"np.float64({name})"


def _affine(op, node, primitive, what):
    """``a + scale(b) * primitive(shape)`` for uniform (b - a) and normal (b)."""
    a, b = node.inputs[2:]
    out = node.outputs[1]
    dt = np_dtype(out.dtype)
    scale = "(b64 - a64)" if isinstance(op, UniformRV) else "b64"
    head = f"""
def {{name}}(rng, size, a, b):
{COPY}    a64 = {_as_f64('a', a)}
    b64 = {_as_f64('b', b)}
"""
    if out.ndim == 0:
        return Kernel(head + f"""    z = g.{primitive}()
    return g, {dt}(a64 + {scale} * z)
""", what)
    return Kernel(head + f"""    shape = {_shape_source(node, ['a', 'b'])}
    z = g.{primitive}(shape)
    out = a64 + {scale} * z
    if out.shape != shape:
        raise ValueError('{what}: the parameters do not broadcast to the requested size')
    return g, out.astype({dt})
""", what)


@numba_funcify.register(UniformRV)
def _uniform(op, node, ctx):
    return _affine(op, node, "random", "uniform")


@numba_funcify.register(NormalRV)
def _normal(op, node, ctx):
    return _affine(op, node, "standard_normal", "normal")


def _binomial_check(indent):
    return "".join(f"{indent}{line}\n" for line in (
        "if not (pi >= 0.0 and pi <= 1.0):",
        "    raise ValueError('binomial: p must be in [0, 1]')",
        "if ni < 0:",
        "    raise ValueError('binomial: n must be >= 0')"))


@numba_funcify.register(BinomialRV)
def _binomial(op, node, ctx):
    n, p = node.inputs[2:]
    out = node.outputs[1]
    dt = np_dtype(out.dtype)
    if out.ndim == 0:
        return Kernel(f"""
def {{name}}(rng, size, n, p):
{COPY}    ni, pi = np.int64(n), np.float64(p)
{_binomial_check('    ')}    return g, {dt}(g.binomial(ni, pi))
""", "binomial")
    return Kernel(f"""
def {{name}}(rng, size, n, p):
{COPY}    shape = {_shape_source(node, ['n', 'p'])}
    nb = {'np.broadcast_to(n, shape)' if n.ndim else 'n'}
    pb = {'np.broadcast_to(p, shape)' if p.ndim else 'p'}
    out = np.empty(shape, {dt})
    for idx in np.ndindex(shape):
        ni = np.int64(nb{'[idx]' if n.ndim else ''})
        pi = np.float64(pb{'[idx]' if p.ndim else ''})
{_binomial_check('        ')}        out[idx] = g.binomial(ni, pi)
    return g, out
""", "binomial")


@numba_funcify.register(IntegersRV)
def _integers(op, node, ctx):
    out = node.outputs[1]
    dt = np_dtype(out.dtype)
    draw = f"{dt}(g.integers(lo, hi))" if out.ndim == 0 else \
        f"g.integers(lo, hi, {_size_tuple(node)}).astype({dt})"
    return Kernel(f"""
def {{name}}(rng, size, low, high):
{COPY}    lo, hi = np.int64(low), np.int64(high)
    if hi <= lo:
        raise ValueError('integers: the range [low, high) is empty')
    return g, {draw}
""", "integers")


@numba_funcify.register(PermutationRV)
def _permutation(op, node, ctx):
    k = node.inputs[1].type.shape[0]
    rows = " * ".join(["1"] + [f"size[{i}]" for i in range(k)])
    final = "(" + "".join(f"size[{i}], " for i in range(k)) + "m)"
    return Kernel(f"""
def {{name}}(rng, size, n):
{COPY}    m = np.int64(n)
    if m < 0:
        raise ValueError('permutation: n must be >= 0')
    rows = {rows}
    out = np.empty((rows, m), {np_dtype(node.outputs[1].dtype)})
    for r in range(rows):
        out[r, :] = g.permutation(m)
    return g, out.reshape({final})
""", "permutation")


@numba_funcify.register(ChoiceRV)
def _choice(op, node, ctx):
    a = node.inputs[2]
    out = node.outputs[1]
    k = node.inputs[1].type.shape[0]
    total = " * ".join(["1"] + [f"size[{i}]" for i in range(k)])
    if op.weighted:
        pick = """\
    if p.shape[0] != m or np.any(p < 0) or not p.sum() > 0:
        raise ValueError('choice: p must have one non-negative entry per value and a positive sum')
    cdf = np.cumsum(p.astype(np.float64))
    cdf /= cdf[-1]
    idx = np.searchsorted(cdf, g.random(total), side='right')
"""
    elif op.replace:
        pick = """\
    if m <= 0:
        raise ValueError('choice: cannot choose from an empty population')
    idx = g.integers(0, m, total)
"""
    else:
        pick = """\
    if total > m:
        raise ValueError('choice: more samples than values, without replacement')
    idx = g.permutation(m)[:total]
"""
    vals = "a[idx]" if a.ndim else "idx"
    dt = np_dtype(out.dtype)
    ret = f"{dt}(vals[0])" if out.ndim == 0 else f"vals.astype({dt}).reshape({_size_tuple(node)})"
    params = "a, p" if op.weighted else "a"
    return Kernel(f"""
def {{name}}(rng, size, {params}):
{COPY}    m = {'a.shape[0]' if a.ndim else 'np.int64(a)'}
    total = {total}
{pick}    vals = {vals}
    return g, {ret}
""", "choice")
