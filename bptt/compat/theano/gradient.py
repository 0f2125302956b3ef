"""``theano.gradient``: bptt's differentiation under Theano's names and meanings.

Two differ from `bptt.gradient`: `disconnected_grad` and `zero_grad` are
Theano's (identity forward, no gradient through it: `bptt.tensor.zero_grad`),
and `grad` accepts an integer cost as Theano did (its gradient is zero).
"""
from __future__ import annotations

from bptt.errors import (DisconnectedInputError as DisconnectedInputError,
                         GradientError as GradientError, NullTypeGradError as NullTypeGradError)
from bptt.grad import (Lop as Lop, Rop as Rop, hessian as hessian, jacobian as jacobian,
                       verify_grad as verify_grad)
from bptt.grad import grad as _bptt_grad
from bptt.tensor import zero_grad as zero_grad

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
    from bptt.tensor import as_tensor_variable, zeros_like

    if cost is not None:
        cost = as_tensor_variable(cost)
        if cost.ndim == 0 and cost.dtype[0] in "iub":
            single = not isinstance(wrt, (list, tuple))
            zeros = [zeros_like(w, dtype=w.dtype if w.dtype[0] == "f" else None)
                     for w in ([wrt] if single else wrt)]
            return zeros[0] if single else zeros
    return _bptt_grad(cost, wrt, consider_constant=consider_constant,
                      disconnected_inputs=disconnected_inputs,
                      return_disconnected=return_disconnected, known_grads=known_grads,
                      null_gradients=null_gradients)
