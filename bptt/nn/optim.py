"""Optimizers as update dictionaries (as Lasagne's ``updates``), clipping, schedules.

Each optimizer takes the loss (or a list of gradients) and the parameters
and returns an ``OrderedDict`` ``{shared variable: new value}`` for
``bptt.function(..., updates=...)``; the state it needs (moments, step
count) lives in new shared variables named after each parameter. The
learning rate may be a Python float or a shared scalar (set it between
calls to follow a schedule; `Schedule` objects compute the values).

Update rules, ``g`` the gradient, ``t`` the step number from 1:

- sgd: ``p -= lr g``
- momentum: ``v = mu v - lr g;  p += v``
- nesterov_momentum: ``v = mu v - lr g;  p += mu v - lr g``
- adagrad: ``a += g²;  p -= lr g / sqrt(a + eps)``
- rmsprop: ``a = rho a + (1 - rho) g²;  p -= lr g / sqrt(a + eps)``
- adam (Kingma & Ba 2015, as torch.optim.Adam): ``m = b1 m + (1 - b1) g;
  v = b2 v + (1 - b2) g²;  p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)``
- adamw (Loshchilov & Hutter 2019, as torch.optim.AdamW): ``p *= 1 - lr wd``,
  then the adam step.
"""
from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np

from .. import tensor as T
from ..compile import shared
from ..grad import grad as _grad

__all__ = ["get_or_compute_grads", "sgd", "momentum", "nesterov_momentum", "adagrad",
           "rmsprop", "adam", "adamw", "clip_by_global_norm", "clip_by_value", "global_norm",
           "Schedule", "constant_schedule", "step_schedule", "cosine_schedule",
           "warmup_schedule"]


def get_or_compute_grads(loss_or_grads, params):
    """The gradients of a scalar loss with respect to `params`, or the given list checked."""
    params = list(params)
    if not params:
        raise ValueError("optimizer: no parameters given (model.params() is empty?)")
    if isinstance(loss_or_grads, (list, tuple)):
        if len(loss_or_grads) != len(params):
            raise ValueError(f"optimizer: {len(loss_or_grads)} gradients for "
                             f"{len(params)} parameters")
        return list(loss_or_grads)
    return _grad(loss_or_grads, params)


def _like(p, suffix, value=0.0):
    v = p.get_value(borrow=True)
    return shared(np.full(v.shape, value, dtype=v.dtype), name=f"{p.name}.{suffix}")


def _lr(learning_rate, dtype):
    if isinstance(learning_rate, (int, float)):
        return T.constant(np.asarray(learning_rate, dtype=dtype))
    return T.cast(learning_rate, dtype)


def sgd(loss_or_grads, params, learning_rate):
    """``p -= lr g``."""
    updates = OrderedDict()
    for p, g in zip(params, get_or_compute_grads(loss_or_grads, params)):
        updates[p] = p - _lr(learning_rate, p.dtype) * g
    return updates


def momentum(loss_or_grads, params, learning_rate, momentum=0.9):
    """Heavy ball: ``v = mu v - lr g;  p += v``."""
    return _momentum(loss_or_grads, params, learning_rate, momentum, nesterov=False)


def nesterov_momentum(loss_or_grads, params, learning_rate, momentum=0.9):
    """Nesterov's momentum (Sutskever et al. 2013 form): ``v = mu v - lr g;  p += mu v - lr g``."""
    return _momentum(loss_or_grads, params, learning_rate, momentum, nesterov=True)


def _momentum(loss_or_grads, params, learning_rate, mu, nesterov):
    updates = OrderedDict()
    for p, g in zip(params, get_or_compute_grads(loss_or_grads, params)):
        lr = _lr(learning_rate, p.dtype)
        v = _like(p, "velocity")
        v_new = mu * v - lr * g
        updates[v] = v_new
        updates[p] = p + (mu * v_new - lr * g if nesterov else v_new)
    return updates


def adagrad(loss_or_grads, params, learning_rate=0.01, epsilon=1e-6):
    """``a += g²;  p -= lr g / sqrt(a + eps)`` (Duchi et al. 2011)."""
    updates = OrderedDict()
    for p, g in zip(params, get_or_compute_grads(loss_or_grads, params)):
        a = _like(p, "accumulator")
        a_new = a + T.sqr(g)
        updates[a] = a_new
        updates[p] = p - _lr(learning_rate, p.dtype) * g / T.sqrt(a_new + epsilon)
    return updates


def rmsprop(loss_or_grads, params, learning_rate=0.001, rho=0.9, epsilon=1e-6):
    """``a = rho a + (1 - rho) g²;  p -= lr g / sqrt(a + eps)`` (Tieleman & Hinton 2012)."""
    updates = OrderedDict()
    for p, g in zip(params, get_or_compute_grads(loss_or_grads, params)):
        a = _like(p, "accumulator")
        a_new = rho * a + (1 - rho) * T.sqr(g)
        updates[a] = a_new
        updates[p] = p - _lr(learning_rate, p.dtype) * g / T.sqrt(a_new + epsilon)
    return updates


def adam(loss_or_grads, params, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8):
    """Adam with bias correction, exactly as ``torch.optim.Adam`` (see the module docstring)."""
    return _adam(loss_or_grads, params, learning_rate, beta1, beta2, epsilon, 0.0)


def adamw(loss_or_grads, params, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
          weight_decay=0.01):
    """Adam with decoupled weight decay, as ``torch.optim.AdamW``: ``p *= 1 - lr wd`` first."""
    return _adam(loss_or_grads, params, learning_rate, beta1, beta2, epsilon, weight_decay)


def _adam(loss_or_grads, params, learning_rate, beta1, beta2, epsilon, weight_decay):
    params = list(params)
    grads = get_or_compute_grads(loss_or_grads, params)
    updates = OrderedDict()
    # an integer count, as torch's: exact at any step, and the bias corrections'
    # beta ** t stay float64 (a Python float to an int64 power)
    step = shared(np.asarray(0, dtype="int64"), name=f"{params[0].name}.adam_step")
    t = step + 1
    updates[step] = t
    for p, g in zip(params, grads):
        lr = _lr(learning_rate, p.dtype)
        m, v = _like(p, "adam_m"), _like(p, "adam_v")
        m_new = beta1 * m + (1 - beta1) * g
        v_new = beta2 * v + (1 - beta2) * T.sqr(g)
        c1 = T.cast(1 - beta1 ** t, p.dtype)
        c2 = T.cast(1 - beta2 ** t, p.dtype)
        base = p * (1 - lr * weight_decay) if weight_decay else p
        updates[m], updates[v] = m_new, v_new
        updates[p] = base - lr * (m_new / c1) / (T.sqrt(v_new / c2) + epsilon)
    return updates


def global_norm(grads):
    """``sqrt(sum of every gradient's squared entries)``."""
    return T.sqrt(sum(T.sum(T.sqr(g)) for g in grads))


def clip_by_global_norm(grads, max_norm, return_norm=False, epsilon=1e-6):
    """Scale every gradient by ``min(1, max_norm / (norm + eps))`` (as torch's clip_grad_norm_).

    Returns the clipped list, and the norm before clipping with `return_norm`.
    """
    grads = list(grads)
    norm = global_norm(grads)
    scale = T.minimum(1.0, max_norm / (norm + epsilon))
    clipped = [g * T.cast(scale, g.dtype) for g in grads]
    return (clipped, norm) if return_norm else clipped


def clip_by_value(grads, low, high=None):
    """Clip every entry of every gradient to ``[low, high]`` (``[-low, low]`` when high is None)."""
    if high is None:
        low, high = -abs(low), abs(low)
    return [T.clip(g, low, high) for g in grads]


class Schedule:
    """A learning rate as a function of the step number (from 0): ``schedule(step) -> float``.

    ``schedule.apply(shared_lr, step)`` stores the value in a shared learning rate.
    """

    def __init__(self, fn, description):
        self._fn, self._description = fn, description

    def __call__(self, step):
        return float(self._fn(int(step)))

    def apply(self, lr, step):
        """Set the shared scalar `lr` to this schedule's value at `step`."""
        lr.set_value(np.asarray(self(step), dtype=lr.dtype))

    def __repr__(self):
        return f"Schedule({self._description})"


def constant_schedule(value):
    """The same rate at every step."""
    return Schedule(lambda s: value, f"constant {value}")


def step_schedule(base, step_size, gamma=0.1):
    """``base * gamma ** (step // step_size)`` (torch's StepLR)."""
    return Schedule(lambda s: base * gamma ** (s // step_size),
                    f"step base={base} every {step_size} x{gamma}")


def cosine_schedule(base, total_steps, minimum=0.0):
    """``min + (base - min) (1 + cos(pi s / total)) / 2``, then `minimum` past the end."""
    def fn(s):
        s = min(s, total_steps)
        return minimum + (base - minimum) * (1 + math.cos(math.pi * s / total_steps)) / 2
    return Schedule(fn, f"cosine base={base} over {total_steps} to {minimum}")


def warmup_schedule(schedule, warmup_steps):
    """Linear warm-up to `schedule`: ``schedule(s) * (s + 1) / warmup`` for the first steps.

    `schedule` may be a Schedule or a float; after the warm-up it is followed,
    its step counted from the start of training.
    """
    inner = schedule if callable(schedule) else constant_schedule(schedule)

    def fn(s):
        return inner(s) * min(1.0, (s + 1) / warmup_steps)
    return Schedule(fn, f"warm-up {warmup_steps} steps then {inner!r}")
