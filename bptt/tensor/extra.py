"""NumPy array functions Theano offered, composed of existing ops: `tile`, `repeat`,
`tensordot`, `batched_dot`, `max_and_argmax`, `argsort`, `sort`.

Each is a graph of `DimShuffle`, `BroadcastTo`, `Reshape`, `Dot`, indexing and
reductions, so it has no op, lowering or gradient rule of its own (STYLE rule
3): the gradients, shapes and numba code are those of the parts.

- ``tile(x, reps)``: ``x`` viewed as ``(1, n0, 1, n1, ...)``, broadcast to
  ``(r0, n0, r1, n1, ...)`` and reshaped to ``(r0 n0, r1 n1, ...)``.
- ``repeat(x, r, axis)``: ``x`` viewed with a unit axis after `axis`,
  broadcast to ``r`` there and the two axes merged; a constant vector of
  repeats picks rows by index (``np.repeat(arange(n), r)``).
- ``tensordot(a, b, axes)``: the summed axes moved to the end of `a` and the
  front of `b`, both folded into matrices, one `Dot`, the result unfolded.
- ``batched_dot(a, b)``: ``dot(a[i], b[i])`` for every i of the first axis,
  as a broadcast product summed over the contracted axis.
- ``sort(x, axis)``: `x` indexed by ``argsort(x, axis)`` (the `Argsort` op)
  along `axis` and by aranges along the others (NumPy's ``take_along_axis``),
  so its gradient is the indexing's: each entry's gradient goes back to the
  position it came from.
"""
from __future__ import annotations

import builtins

import numpy as np

from .basic import arange
from .math import Argsort, _size, argmax, dot, max, sum
from .shape import broadcast_to, dimshuffle, reshape, shape_i, shape_padaxis
from .type import as_tensor_variable

__all__ = ["tile", "repeat", "tensordot", "batched_dot", "max_and_argmax", "argsort", "sort"]


def tile(x, reps, ndim=None):
    """NumPy's ``tile``: `x` repeated ``reps[i]`` times along axis i.

    `reps` is a sequence of ints or integer scalars; when it is longer than
    ``x.ndim`` (or `ndim` asks for more), `x` gains leading axes of length 1.
    """
    x = as_tensor_variable(x)
    reps = list(reps) if isinstance(reps, (list, tuple)) else [reps]
    ndim = builtins.max(len(reps), x.ndim, ndim or 0)
    x = dimshuffle(x, ("x",) * (ndim - x.ndim) + tuple(range(x.ndim)))
    reps = [1] * (ndim - len(reps)) + reps
    pattern = [d for i in range(ndim) for d in ("x", i)]
    sizes = [shape_i(x, i) for i in range(ndim)]
    spread = broadcast_to(dimshuffle(x, pattern), [e for r, n in zip(reps, sizes) for e in (r, n)])
    return reshape(spread, [r * n for r, n in zip(reps, sizes)], ndim=ndim)


def repeat(x, repeats, axis=None):
    """NumPy's ``repeat``: each entry of `x` along `axis` (flattened when None)
    repeated `repeats` times; `repeats` an int, an integer scalar, or a constant
    vector with one count per entry."""
    x = as_tensor_variable(x)
    if axis is None:
        x, axis = reshape(x, [_size(x, range(x.ndim))], ndim=1), 0
    axis = int(axis) % x.ndim
    counts = np.asarray(repeats) if isinstance(repeats, (list, tuple, np.ndarray)) else None
    if counts is not None and counts.ndim == 1:
        rows = np.repeat(np.arange(len(counts)), counts)
        return x[(slice(None),) * axis + (rows,)]
    repeats = as_tensor_variable(repeats)
    if repeats.ndim != 0 or repeats.dtype.startswith("float"):
        raise TypeError(f"repeat: repeats must be an integer, an integer scalar or a constant "
                        f"vector of counts, got {repeats.type}")
    sizes = [shape_i(x, i) for i in range(x.ndim)]
    spread = broadcast_to(shape_padaxis(x, axis + 1),
                          sizes[: axis + 1] + [repeats] + sizes[axis + 1:])
    return reshape(spread, sizes[:axis] + [sizes[axis] * repeats] + sizes[axis + 1:],
                   ndim=x.ndim)


def _tensordot_axes(axes, a, b):
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0 or n > a.ndim or n > b.ndim:
            raise ValueError(f"tensordot: cannot sum over {n} axes of a {a.ndim}-d and a "
                             f"{b.ndim}-d tensor")
        return list(range(a.ndim - n, a.ndim)), list(range(n))
    axes_a, axes_b = ([int(ax)] if np.ndim(ax) == 0 else [int(i) for i in ax] for ax in axes)
    if len(axes_a) != len(axes_b):
        raise ValueError(f"tensordot: {len(axes_a)} axes of a paired with {len(axes_b)} of b")
    return [ax % a.ndim for ax in axes_a], [ax % b.ndim for ax in axes_b]


def tensordot(a, b, axes=2):
    """NumPy's ``tensordot``: the sum over `axes` of ``a * b`` (an int n: the last
    n axes of `a` with the first n of `b`; a pair of sequences: those axes)."""
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    sum_a, sum_b = _tensordot_axes(axes, a, b)
    free_a = [i for i in range(a.ndim) if i not in sum_a]
    free_b = [i for i in range(b.ndim) if i not in sum_b]
    a2 = reshape(dimshuffle(a, free_a + sum_a), [_size(a, free_a), _size(a, sum_a)], ndim=2)
    b2 = reshape(dimshuffle(b, sum_b + free_b), [_size(b, sum_b), _size(b, free_b)], ndim=2)
    out_shape = [shape_i(a, i) for i in free_a] + [shape_i(b, i) for i in free_b]
    return reshape(dot(a2, b2), out_shape, ndim=len(out_shape))


def batched_dot(a, b):
    """``dot(a[i], b[i])`` for every i along the first axis (Theano's ``batched_dot``).

    Both operands have at least 2 dimensions: the last axis of ``a[i]`` is summed
    with the first (``b[i]`` a vector) or second-to-last axis of ``b[i]``.
    """
    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim < 2 or b.ndim < 2:
        raise TypeError(f"batched_dot: both operands need a batch axis and at least one "
                        f"more, got {a.type} and {b.type}; multiply vectors with a * b")
    k_b = 1 if b.ndim == 2 else b.ndim - 2
    rest_a, rest_b = a.ndim - 2, b.ndim - 2
    # a: (B, A..., k) -> (B, A..., k, 1 per free axis of b)
    # b: (B, k at k_b, rest) -> (B, 1 per free axis of a, k, rest of b in order)
    a_full = dimshuffle(a, tuple(range(a.ndim)) + ("x",) * rest_b)
    b_order = [0] + ["x"] * rest_a + [k_b] + [i for i in range(1, b.ndim) if i != k_b]
    return sum(a_full * dimshuffle(b, b_order), axis=a.ndim - 1)


def max_and_argmax(x, axis=None, keepdims=False):
    """``(max(x, axis), argmax(x, axis))``, as Theano's ``max_and_argmax``."""
    return max(x, axis, keepdims), argmax(x, axis, keepdims)


def _no_order(order, what):
    if order is not None:
        raise ValueError(f"{what}: order (fields of a structured array) is not supported")


def _sort_axis(x, axis, what):
    x = as_tensor_variable(x)
    if x.ndim == 0:
        raise ValueError(f"{what}: the input must have at least one dimension, got {x.type}")
    if axis is None:
        return reshape(x, [_size(x, range(x.ndim))], ndim=1), 0
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{what}: axis must be an int in [-{x.ndim}, {x.ndim}) or None, "
                         f"got {axis!r}")
    return x, int(axis) % x.ndim


def argsort(x, axis=-1, kind=None, order=None):
    """NumPy's ``argsort`` (stable: equal entries keep their order; NaN last); with
    axis None, the indices that sort the flattened input. `kind` is accepted for
    NumPy's and Theano's signature (every kind's result is a stable sort's)."""
    _no_order(order, "argsort")
    x, axis = _sort_axis(x, axis, "argsort")
    return Argsort(axis)(x)


def sort(x, axis=-1, kind=None, order=None):
    """NumPy's ``sort`` along `axis` (the flattened input for None); `kind` as in
    `argsort`."""
    _no_order(order, "sort")
    x, axis = _sort_axis(x, axis, "sort")
    order = Argsort(axis)(x)
    index = []
    for i in range(x.ndim):
        if i == axis:
            index.append(order)
        else:   # arange along axis i, broadcast against the order's other axes
            pattern = ["x"] * x.ndim
            pattern[i] = 0
            index.append(dimshuffle(arange(shape_i(x, i)), pattern))
    return x[tuple(index)]
