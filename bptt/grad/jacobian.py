"""`jacobian` and `hessian`, built with `scan` as Theano builds them.

The Jacobian of an expression with n entries is n gradients: a scan over
``arange(n)`` whose step takes the gradient of entry i of the (flattened)
expression. The step function closes over the expression and `wrt` instead
of receiving them as non-sequences, so the gradient inside the step reaches
`wrt` through the outer graph; scan turns the forward values it reads into
non-sequences and keeps the per-entry backward pass inside the loop. A
Hessian is the Jacobian of a gradient.

Because the loop is a `Scan`, its own gradient, lowering and rewrites need
nothing special, and an expression that contains scans gets a scan of
backward scans.

Reference: Theano's ``theano.gradient.jacobian`` / ``hessian``.
"""
from __future__ import annotations

from ..graph.basic import Variable
from .reverse import grad


def _as_list(wrt):
    if isinstance(wrt, (list, tuple)):
        return list(wrt), type(wrt)
    return [wrt], None


def _format(results, kind):
    if kind is None:
        return results[0]
    return kind(results)


def jacobian(expression, wrt, consider_constant=None, disconnected_inputs="raise"):
    """The Jacobian of `expression` with respect to each entry of `wrt`.

    Parameters
    ----------
    expression : TensorVariable
        Any number of dimensions; a scalar gives its gradient.
    wrt : Variable or list/tuple of Variable
    consider_constant : list of Variable, optional
        Passed to `grad`: no gradient flows through these.
    disconnected_inputs : {'raise', 'warn', 'ignore'}
        Passed to `grad`, for an entry of `wrt` the expression does not depend on.

    Returns
    -------
    TensorVariable or list/tuple of them (as `wrt` was given)
        For each ``w``, an array of shape ``expression.shape + w.shape`` whose
        entry ``[i..., j...]`` is d expression[i...] / d w[j...].
    """
    from ..scan import scan
    from ..tensor.basic import arange, concatenate
    from ..tensor.shape import reshape, shape
    from ..tensor.type import as_tensor_variable

    wrt_list, kind = _as_list(wrt)
    for w in wrt_list:
        if not isinstance(w, Variable):
            raise TypeError(f"jacobian: wrt must contain variables, got {type(w).__name__}")
    expression = as_tensor_variable(expression)
    options = dict(consider_constant=consider_constant, disconnected_inputs=disconnected_inputs)
    if expression.ndim == 0:
        return _format(grad(expression, wrt_list, **options), kind)
    flat = expression.flatten() if expression.ndim > 1 else expression

    def entry_gradients(i):
        return grad(flat[i], wrt_list, **options)

    rows, updates = scan(entry_gradients, sequences=arange(flat.shape[0]), return_list=True,
                         name="jacobian")
    if updates:
        raise ValueError("jacobian: the expression draws random numbers or updates shared "
                         "variables; its gradients cannot be taken entry by entry")
    if expression.ndim > 1:
        rows = [reshape(r, concatenate([shape(expression), shape(w)]),
                        ndim=expression.ndim + w.ndim) for r, w in zip(rows, wrt_list)]
    return _format(rows, kind)


def hessian(cost, wrt, consider_constant=None, disconnected_inputs="raise"):
    """The Hessian of a scalar `cost` with respect to each entry of `wrt`.

    Parameters
    ----------
    cost : scalar TensorVariable
    wrt : Variable or list/tuple of Variable
    consider_constant, disconnected_inputs
        As for `jacobian`.

    Returns
    -------
    TensorVariable or list/tuple of them (as `wrt` was given)
        For each ``w``, an array of shape ``w.shape + w.shape``: the Jacobian
        of ``grad(cost, w)`` with respect to ``w`` (blocks between different
        entries of `wrt` are not computed, as in Theano).
    """
    from ..tensor.type import as_tensor_variable

    cost = as_tensor_variable(cost)
    if cost.ndim != 0:
        raise TypeError(f"hessian: the cost must be a scalar, got {cost.type}; use jacobian of "
                        "its gradient for a non-scalar expression")
    wrt_list, kind = _as_list(wrt)
    options = dict(consider_constant=consider_constant, disconnected_inputs=disconnected_inputs)
    results = []
    for w in wrt_list:
        g = grad(cost, w, **options)
        results.append(jacobian(g, w, **options))
    return _format(results, kind)


__all__ = ["jacobian", "hessian"]
