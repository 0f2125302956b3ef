"""Losses from logits, each with a mask and a reduction.

Every loss computes one value per element (``reduction="none"``), multiplies
by the mask when one is given, and reduces:

- ``"mean"``: the sum over elements divided by the number of elements, or,
  with a mask, by the sum of the mask (the mean over real positions);
- ``"sum"``: the sum;
- ``"none"``: the per-element values (zeros where the mask is 0).
"""
from __future__ import annotations

from .. import tensor as T

__all__ = ["cross_entropy", "binary_cross_entropy_with_logits", "mse"]

_REDUCTIONS = ("mean", "sum", "none")


def _reduce(loss, mask, reduction, what):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{what}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    if mask is not None:
        mask = T.as_tensor_variable(mask)
        if mask.ndim != loss.ndim:
            raise ValueError(f"{what}: the mask has {mask.ndim} dimension(s), the per-element "
                             f"loss {loss.ndim} (it has the targets' shape)")
        loss = loss * T.cast(mask, loss.dtype)
    if reduction == "none":
        return loss
    total = T.sum(loss)
    if reduction == "sum":
        return total
    if mask is None:
        return T.mean(loss)
    return total / T.maximum(T.sum(T.cast(mask, loss.dtype)), 1)


def cross_entropy(logits, targets, mask=None, reduction="mean"):
    """``-log_softmax(logits)[..., target]`` for integer class targets.

    Parameters
    ----------
    logits : tensor ``(..., C)``
        Unnormalised scores over C classes (any rank; e.g. ``(T, B, C)``).
    targets : integer tensor ``(...)``
        Class indices in ``[0, C)``, one rank fewer than `logits`.
    mask : tensor of the targets' shape, optional
    reduction : "mean", "sum" or "none"

    The log-softmax subtracts the maximum before exponentiating, so large
    logits neither overflow nor lose the gradient.
    """
    logits, targets = T.as_tensor_variable(logits), T.as_tensor_variable(targets)
    if targets.ndim != logits.ndim - 1 or targets.dtype.startswith("float"):
        raise TypeError(f"cross_entropy: targets must be integer class indices with one "
                        f"dimension fewer than the logits ({logits.ndim}-d), got a "
                        f"{targets.ndim}-d {targets.dtype} tensor")
    logp = T.nnet.log_softmax(logits, axis=-1)
    classes = T.arange(logits.shape[-1])
    onehot = T.eq(targets.dimshuffle(*range(targets.ndim), "x"), classes)
    loss = -T.sum(logp * T.cast(onehot, logp.dtype), axis=-1)
    return _reduce(loss, mask, reduction, "cross_entropy")


def binary_cross_entropy_with_logits(logits, targets, mask=None, reduction="mean"):
    """``-(t log sigmoid(x) + (1 - t) log(1 - sigmoid(x)))``, computed as ``softplus(x) - t x``.

    `targets` are probabilities in [0, 1] of the logits' shape.
    """
    x, t = T.as_tensor_variable(logits), T.as_tensor_variable(targets)
    loss = T.nnet.softplus(x) - T.cast(t, x.dtype) * x
    return _reduce(loss, mask, reduction, "binary_cross_entropy_with_logits")


def mse(predictions, targets, mask=None, reduction="mean"):
    """Squared error ``(predictions - targets) ** 2``, elementwise."""
    p, t = T.as_tensor_variable(predictions), T.as_tensor_variable(targets)
    return _reduce(T.sqr(p - t), mask, reduction, "mse")
