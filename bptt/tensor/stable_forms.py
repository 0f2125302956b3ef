"""Exact identities applied when an elementwise node is built, for numerical stability.

A cost written from its textbook formula overflows where its value is still
finite: ``p = 1 / (1 + exp(-z))`` gives ``log(1 - p) = log(0)`` once ``z`` passes
37 (float64), and the gradient of that log is ``inf * 0 = nan``, so one step of
gradient descent turns every weight into NaN. Theano's tutorial programs rely on
its compiler recognising these formulas. Here the recognition happens when the
node is made, before any gradient is taken, so the graph the user evaluates, the
gradient built from it and the graph without rewrites are all the stable one:

* ``1 / (1 + exp(u))`` is ``sigmoid(-u)``;
* ``log(sigmoid(v))`` is ``-softplus(-v)`` and ``log(1 - sigmoid(v))`` is ``-softplus(v)``;
* ``log(exp(z) / s)`` is ``z - log(s)`` (the log of a softmax is a log-softmax).

Each form applies only when it keeps the node's dtype and shape; otherwise the
node is built as written. `Elemwise.__call__` consults `STABLE_FORMS`.
"""
from __future__ import annotations

import numpy as np

from ..graph.basic import Constant

__all__ = ["STABLE_FORMS"]


def _made_by(var, scalar_op_name):
    """The inputs of `var`'s elementwise node when its scalar op is `scalar_op_name`."""
    node = var.owner
    if node is None or getattr(node.op, "inplace_input", None) is not None:
        return None
    scalar_op = getattr(node.op, "scalar_op", None)
    if scalar_op is None or scalar_op.name != scalar_op_name:
        return None
    return node.inputs


def _is_one(var, rank):
    """A constant equal to 1 whose broadcasting adds no dimension to a rank-`rank` operand."""
    return (isinstance(var, Constant) and var.type.ndim <= rank
            and all(s == 1 for s in var.type.shape) and np.all(var.data == 1))


def _one_plus(var, inner):
    """``inner(t)`` for the term t of ``var = 1 + t`` (either order) for which it is not
    None and the 1 adds no dimension to its result; else None."""
    terms = _made_by(var, "add")
    if terms is None or len(terms) != 2:
        return None
    for one, other in (terms, terms[::-1]):
        found = inner(other)
        if found is not None and _is_one(one, found.type.ndim):
            return found
    return None


def _exp_argument(var):
    """`u` when `var` is ``exp(u)``, else None."""
    args = _made_by(var, "exp")
    return None if args is None else args[0]


def _sigmoid_argument(var):
    """`v` when `var` is ``sigmoid(v)``, else None."""
    args = _made_by(var, "sigmoid")
    return None if args is None else args[0]


def _negated_sigmoid_argument(var):
    """`v` when `var` is ``-sigmoid(v)``, else None."""
    args = _made_by(var, "neg")
    return None if args is None else _sigmoid_argument(args[0])


def _kept(result, like_inputs, like_dtype):
    """`result` if it has the dtype and rank the node would have had, else None."""
    rank = max(v.type.ndim for v in like_inputs)
    if result.type.dtype != like_dtype or result.type.ndim != rank:
        return None
    return result


def _reciprocal_form(numerator, denominator):
    from .math import neg, sigmoid
    from .type import result_dtype

    u = _one_plus(denominator, _exp_argument)
    if u is None or not _is_one(numerator, u.type.ndim) or u.type.dtype not in _FLOATS:
        return None
    dtype = result_dtype(numerator, denominator)
    if dtype != u.type.dtype:
        return None
    return _kept(sigmoid(neg(u)), [numerator, denominator], dtype)


def _log_form(x):
    from .math import log, neg, softplus, sub

    if x.type.dtype not in _FLOATS:
        return None
    v = _sigmoid_argument(x)
    if v is not None and v.type.dtype == x.type.dtype:
        return neg(softplus(neg(v)))
    v = _one_plus(x, _negated_sigmoid_argument)     # 1 - s is built as 1 + -s
    if v is not None and v.type.dtype == x.type.dtype:
        return _kept(neg(softplus(v)), [x], x.type.dtype)
    ratio = _made_by(x, "true_div")
    z = None if ratio is None else _exp_argument(ratio[0])
    if z is None or ratio[1].type.dtype != x.type.dtype or z.type.dtype != x.type.dtype:
        return None
    return _kept(sub(z, log(ratio[1])), [x], x.type.dtype)


_FLOATS = ("float32", "float64")

#: scalar op name -> function of the node's inputs giving the stable result, or None.
STABLE_FORMS = {"true_div": _reciprocal_form, "log": _log_form}
