"""``theano.gradient``: bptt's differentiation under Theano's names and meanings.

Two differ from `bptt.gradient`: `disconnected_grad` and `zero_grad` are
Theano's (identity forward, no gradient through it: `bptt.tensor.zero_grad`),
and `grad` accepts an integer cost as Theano did (its gradient is zero).
"""
from __future__ import annotations

from bptt.errors import (DisconnectedInputError as DisconnectedInputError,
                         GradientError as GradientError, NullTypeGradError as NullTypeGradError)
from bptt.grad import Lop as Lop, Rop as Rop, hessian as hessian, jacobian as jacobian
from bptt.grad import verify_grad as _bptt_verify_grad
from bptt.grad import grad as _bptt_grad
from bptt.tensor import grad_clip as grad_clip, zero_grad as zero_grad

#: Theano's ``disconnected_grad(x)``: `x` forward, treated as a constant by `grad`.
disconnected_grad = zero_grad
consider_constant = zero_grad


def grad(cost, wrt, consider_constant=None, disconnected_inputs="raise",
         add_names=True, known_grads=None, return_disconnected="zero",
         null_gradients="raise"):
    """`bptt.grad` with Theano's signature.

    An integer cost is allowed, as in Theano: it is not differentiable, so
    every gradient of it is zero (bptt's own `grad` asks for a float cost).
    """
    from bptt.tensor import as_tensor_variable

    if cost is not None:
        cost = as_tensor_variable(cost)
        if cost.ndim == 0 and cost.dtype[0] in "iub":
            return _integer_cost_grad(cost, wrt, disconnected_inputs)
    return _bptt_grad(cost, wrt, consider_constant=consider_constant,
                      disconnected_inputs=disconnected_inputs,
                      return_disconnected=return_disconnected, known_grads=known_grads,
                      null_gradients=null_gradients)


def _integer_cost_grad(cost, wrt, disconnected_inputs):
    """Zeros for every `wrt` entry the integer `cost` depends on; the others are
    disconnected, as for a float cost."""
    from bptt.errors import report_disconnected_wrt
    from bptt.graph.traversal import ancestors
    from bptt.tensor import zeros_like

    single = not isinstance(wrt, (list, tuple))
    reached = set(ancestors([cost]))
    out = []
    for i, w in enumerate([wrt] if single else wrt):
        if w not in reached:
            report_disconnected_wrt(i, w, disconnected_inputs, stacklevel=3)
        out.append(zeros_like(w))
    return out[0] if single else out


def verify_grad(fun, pt, n_tests=2, rng=None, eps=None, out_type=None, abs_tol=None,
                rel_tol=None, mode=None, cast_to_output_type=False, no_debug_ref=True):
    """`bptt.verify_grad` with Theano's signature (`out_type`, `cast_to_output_type`
    and `no_debug_ref` change nothing). Raises ``verify_grad.E_grad``, which is
    `bptt.GradientError`."""
    from .compile.mode import bptt_mode

    return _bptt_verify_grad(fun, pt, n_tests=n_tests, rng=rng, eps=eps, abs_tol=abs_tol,
                             rel_tol=rel_tol, mode=bptt_mode(mode))


verify_grad.E_grad = GradientError
