"""Random draws in numba code.

numba accepts ``numpy.random.Generator`` arguments and draws the same
numbers as NumPy for the primitives `bptt.tensor.random` builds on. A numba
draw advances the generator object it was given, in place; so, like
`RandomVariable.perform`, each kernel first copies its input generator
(in an object-mode block: numba cannot create generators) and draws from
and returns the copy. The input generator is never touched, in the outer
graph and inside loops alike.

Every kernel draws the same numbers as the ``draw`` method of its op: the
same primitives in the same order (a NumPy fill such as ``random(shape)`` is
the scalar primitive called element by element in C order), the same
float64 arithmetic, then a cast. Elementwise draws are written as explicit
nested loops with broadcasting by index arithmetic: numba compiles these
much faster than ``np.broadcast_to``/``np.ndindex`` or ``Generator.shuffle``.
"""
from __future__ import annotations

import numba

from ....tensor.random import (BinomialRV, ChoiceRV, IntegersRV, NormalRV, PermutationRV,
                               UniformRV, copy_generator)
from ..registry import Kernel, np_dtype, numba_funcify
from ..runtime import cache_on_disk


def _copy_in_object_mode(rng):
    with numba.objmode(g="npy_rng"):  # numba's name for the Generator type
        g = copy_generator(rng)
    return g


# One jitted copy for every kernel, compiled once. Not with the kernels' nogil
# option: numba warns about object mode under nogil (the block takes the GIL
# whatever the option says).
copy_generator_numba = cache_on_disk(numba.njit(_copy_in_object_mode))

COPY = "    g = {name}_copy(rng)\n"
COPY_HELPER = "\n\nfrom bptt.link.numba.dispatch.random import copy_generator_numba as {name}_copy\n"

# Fisher-Yates over range(m) into `a`, as `bptt.tensor.random.shuffled_range`.
SHUFFLE = """\
{ind}a = np.arange(m)
{ind}for i in range(m - 1, 0, -1):
{ind}    j = g.integers(0, i + 1)
{ind}    t = a[i]
{ind}    a[i] = a[j]
{ind}    a[j] = t
"""


def _kernel(params, body, hint):
    source = f"def {{name}}(rng, size, {', '.join(params)}):\n{COPY}{body}"
    return Kernel(source + COPY_HELPER, hint)


def _size_dims(node):
    return node.inputs[1].type.shape[0]


def _shape_lines(node, names, what):
    """Lines setting ``n0, n1, ...`` (the sample's sizes) and checking every array
    parameter broadcasts to them; returns (lines, ndim)."""
    params = node.inputs[2:]
    nd = node.outputs[1].ndim
    lines = []
    if _size_dims(node):
        lines += [f"    n{k} = size[{k}]" for k in range(nd)]
    else:  # the broadcast shape of the parameters
        lines += [f"    n{k} = 1" for k in range(nd)]
        for name, p in zip(names, params):
            for i in range(p.ndim):
                k = nd - p.ndim + i
                lines.append(f"    if {name}.shape[{i}] != 1:\n        n{k} = {name}.shape[{i}]")
    for name, p in zip(names, params):
        for i in range(p.ndim):
            k = nd - p.ndim + i
            lines.append(f"    if {name}.shape[{i}] != 1 and {name}.shape[{i}] != n{k}:\n"
                         f"        raise ValueError('{what}: the parameters do not broadcast "
                         "to the requested size')")
    return lines, nd


def _elementwise(node, names, what, draw, setup=""):
    """A kernel filling the sample element by element in C order.

    `draw` is the source of one element's value, in terms of the scalars
    ``<name>_`` of each parameter at the current index.
    """
    lines, nd = _shape_lines(node, names, what)
    dt = np_dtype(node.outputs[1].dtype)
    ind = "    " * (nd + 1)
    body = lines + ([setup] if setup else [])
    if nd:
        body.append(f"    out = np.empty(({''.join(f'n{k}, ' for k in range(nd))}), {dt})")
        body += [f"{'    ' * (k + 1)}for j{k} in range(n{k}):" for k in range(nd)]
    for name, p in zip(names, node.inputs[2:]):
        idx = ", ".join(f"j{nd - p.ndim + i} if {name}.shape[{i}] != 1 else 0"
                        for i in range(p.ndim))
        body.append(f"{ind}{name}_ = {name}[{idx}]" if p.ndim else f"{ind}{name}_ = {name}")
    body += [f"{ind}{line}" for line in draw[:-1]]
    if nd:
        body.append(f"{ind}out[{', '.join(f'j{k}' for k in range(nd))}] = {draw[-1]}")
        body.append("    return g, out")
    else:
        body.append(f"    return g, {dt}({draw[-1]})")
    return _kernel(names, "\n".join(body) + "\n", what)


@numba_funcify.register(UniformRV)
def _uniform(op, node, ctx):
    return _elementwise(node, ["low", "high"], "uniform", [
        "lo = np.float64(low_)",
        "lo + (np.float64(high_) - lo) * g.random()"])


@numba_funcify.register(NormalRV)
def _normal(op, node, ctx):
    return _elementwise(node, ["avg", "std"], "normal", [
        "np.float64(avg_) + np.float64(std_) * g.standard_normal()"])


@numba_funcify.register(BinomialRV)
def _binomial(op, node, ctx):
    return _elementwise(node, ["n", "p"], "binomial", [
        "ni, pi = np.int64(n_), np.float64(p_)",
        "if not (pi >= 0.0 and pi <= 1.0):",
        "    raise ValueError('binomial: p must be in [0, 1]')",
        "if ni < 0:",
        "    raise ValueError('binomial: n must be >= 0')",
        "g.binomial(ni, pi)"])


@numba_funcify.register(IntegersRV)
def _integers(op, node, ctx):
    # One vectorized call, as in `draw`: NumPy's bounded-integer fill shares a
    # 32-bit buffer between elements, so it differs from scalar draws.
    nd = node.outputs[1].ndim
    dt = np_dtype(node.outputs[1].dtype)
    draw = f"{dt}(g.integers(lo, hi))" if nd == 0 else \
        f"g.integers(lo, hi, ({''.join(f'size[{k}], ' for k in range(nd))})).astype({dt})"
    return _kernel(["low", "high"], f"""\
    lo, hi = np.int64(low), np.int64(high)
    if hi <= lo:
        raise ValueError('integers: the range [low, high) is empty')
    return g, {draw}
""", "integers")


def _count(node):
    return " * ".join(["1"] + [f"size[{k}]" for k in range(_size_dims(node))])


@numba_funcify.register(PermutationRV)
def _permutation(op, node, ctx):
    dims = "".join(f"size[{k}], " for k in range(_size_dims(node)))
    return _kernel(["n"], f"""\
    m = np.int64(n)
    if m < 0:
        raise ValueError('permutation: n must be >= 0')
    rows = {_count(node)}
    out = np.empty((rows, m), {np_dtype(node.outputs[1].dtype)})
    for r in range(rows):
{SHUFFLE.format(ind='        ')}        for k in range(m):
            out[r, k] = a[k]
    return g, out.reshape(({dims}m))
""", "permutation")


_CHOICE_PICK = {
    "weighted": """\
    if p.shape[0] != m or np.any(p < 0) or not p.sum() > 0:
        raise ValueError('choice: p must have one non-negative entry per value and a positive sum')
    cdf = np.cumsum(p.astype(np.float64))
    cdf /= cdf[-1]
    idx = np.empty(total, np.int64)
    for r in range(total):
        u = g.random()
        k = 0
        while cdf[k] <= u:
            k += 1
        idx[r] = k
""",
    "replace": """\
    if m <= 0:
        raise ValueError('choice: cannot choose from an empty population')
    idx = g.integers(0, m, total)
""",
    "unique": """\
    if total > m:
        raise ValueError('choice: more samples than values, without replacement')
""" + SHUFFLE.format(ind="    ") + """\
    idx = a[:total]
""",
}


@numba_funcify.register(ChoiceRV)
def _choice(op, node, ctx):
    a = node.inputs[2]
    out = node.outputs[1]
    pick = "weighted" if op.weighted else ("replace" if op.replace else "unique")
    dt = np_dtype(out.dtype)
    dims = "".join(f"size[{k}], " for k in range(_size_dims(node)))
    ret = f"{dt}(vals[0])" if out.ndim == 0 else f"vals.astype({dt}).reshape(({dims}))"
    params = ["pop", "p"] if op.weighted else ["pop"]
    return _kernel(params, f"""\
    m = {'pop.shape[0]' if a.ndim else 'np.int64(pop)'}
    total = {_count(node)}
{_CHOICE_PICK[pick]}    vals = {'pop[idx]' if a.ndim else 'idx'}
    return g, {ret}
""", "choice")
