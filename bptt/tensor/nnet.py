"""Neural-network functions (``T.nnet``), all derived from the op library.

`sigmoid` and `softplus` are scalar ops of their own (stable formulas, simple
partials); the rest are compositions, so their gradients come from the rules
of the ops they are made of. `conv2d` (conv.py) and `pool_2d` (pool.py) are
built on the windows op of patches.py.
"""
from __future__ import annotations

from .basic import arange, cast
from .conv import conv2d as conv2d
from .math import clip, eq, exp, log, max as _max, maximum, sigmoid, sum as _sum
from .math import softplus as softplus  # re-exported: T.nnet.softplus
from .pool import pool_2d as pool_2d
from .shape import shape_padleft, shape_padright, shape_i
from .type import as_tensor_variable

__all__ = ["sigmoid", "ultra_fast_sigmoid", "hard_sigmoid", "softplus", "softmax",
           "log_softmax", "relu", "binary_crossentropy", "categorical_crossentropy", "conv2d",
           "pool_2d"]

#: Theano's approximation; here the exact sigmoid (as fast in compiled code).
ultra_fast_sigmoid = sigmoid


def hard_sigmoid(x):
    """Piecewise linear sigmoid: clip(0.2 * x + 0.5, 0, 1)."""
    return clip(0.2 * as_tensor_variable(x) + 0.5, 0, 1)


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along `axis`, shifted by the max for stability."""
    x = as_tensor_variable(x)
    e = exp(x - _max(x, axis=axis, keepdims=True))
    return e / _sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    """log(softmax(x)) without forming softmax (no log of an underflowed 0)."""
    x = as_tensor_variable(x)
    z = x - _max(x, axis=axis, keepdims=True)
    return z - log(_sum(exp(z), axis=axis, keepdims=True))


def relu(x, alpha=0):
    """max(x, 0), or max(x, alpha * x) (leaky) for 0 < alpha < 1."""
    x = as_tensor_variable(x)
    if alpha == 0:
        return maximum(x, 0)
    return maximum(x, alpha * x)


def binary_crossentropy(output, target):
    """-(t log(o) + (1 - t) log(1 - o)), elementwise."""
    return -(target * log(output) + (1 - target) * log(1 - output))


def categorical_crossentropy(coding_dist, true_dist):
    """-sum(t * log(p)) over the last axis.

    `true_dist` is either a distribution of the shape of `coding_dist`, or an
    integer vector of class indices (one per row of a matrix `coding_dist`).
    """
    p = as_tensor_variable(coding_dist)
    t = as_tensor_variable(true_dist)
    if t.ndim == p.ndim - 1 and t.dtype not in ("float32", "float64"):
        classes = arange(shape_i(p, -1))
        t = cast(eq(shape_padleft(classes), shape_padright(t)), p.dtype)
    return -_sum(t * log(p), axis=-1)
