"""Neural-network functions (``T.nnet``): sigmoid, softplus, softmax, relu."""
from __future__ import annotations

from .math import exp, log, max as _max, maximum, sigmoid, softplus, sum as _sum
from .type import as_tensor_variable

__all__ = ["sigmoid", "softplus", "softmax", "log_softmax", "relu", "binary_crossentropy"]


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along `axis`, shifted by the max for stability (derived)."""
    x = as_tensor_variable(x)
    e = exp(x - _max(x, axis=axis, keepdims=True))
    return e / _sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis=-1):
    x = as_tensor_variable(x)
    z = x - _max(x, axis=axis, keepdims=True)
    return z - log(_sum(exp(z), axis=axis, keepdims=True))


def relu(x, alpha=0):
    x = as_tensor_variable(x)
    if alpha == 0:
        return maximum(x, 0)
    return maximum(x, alpha * x)


def binary_crossentropy(output, target):
    return -(target * log(output) + (1 - target) * log(1 - output))
