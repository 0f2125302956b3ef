"""Run-time checks inside a graph: `check(x, cond, message, *values)` is `x`, or an error.

Graph builders (scan's inlined step, for one) use it where a condition can
only be decided at run time and the user must learn which of *their*
variables is wrong: the message names it, instead of the index error some
op deep in the graph would raise.
"""
from __future__ import annotations

import string

from ..graph.basic import Apply
from ..graph.op import Op
from .type import as_tensor_variable


class Check(Op):
    """``x`` unchanged if ``cond`` holds at run time, else `error`(`message`).

    `message` is a ``str.format`` template with one ``{}`` per value input
    (literal braces doubled); the values (scalars) fill it in when the check
    fails, so the message reports what came.

    With `shape` (a tuple of int or None, one per dimension of ``x``), the
    output's static shape is ``shape`` where it gives a size: `cond` must
    then test those sizes (`check_shape` builds such a check), so the static
    shape is proven by the time compiled code relies on it.

    `error` names the exception class, ``"ValueError"`` or ``"IndexError"``
    (what NumPy raises for the same mistake, a mask of the wrong shape say).
    """

    __props__ = ("message", "shape", "error")

    def __init__(self, message, shape=None, error="ValueError"):
        if error not in _ERRORS:
            raise ValueError(f"check: error must be one of {sorted(_ERRORS)}, got {error!r}")
        self.message = message
        self.shape = None if shape is None else tuple(shape)
        self.error = error

    def make_node(self, x, cond, *values):
        x, cond = as_tensor_variable(x), as_tensor_variable(cond)
        values = [as_tensor_variable(v) for v in values]
        if cond.ndim != 0 or cond.dtype != "bool":
            raise TypeError(f"check: the condition must be a boolean scalar, got {cond.type}")
        if any(v.ndim != 0 for v in values):
            raise TypeError("check: the message values must be scalars")
        slots = sum(field is not None for _, field, _, _ in string.Formatter().parse(self.message))
        if slots != len(values):
            raise ValueError(f"check: the message has {slots} slots for {len(values)} values")
        out = x.type
        if self.shape is not None:
            if len(self.shape) != x.ndim:
                raise ValueError(f"check: shape {self.shape} for a {x.ndim}-d value")
            out = out.clone(shape=tuple(s if s is not None else d
                                        for s, d in zip(self.shape, out.shape)))
        return Apply(self, [x, cond, *values], [out()])

    def perform(self, node, inputs, output_storage):
        x, cond, *values = inputs
        if not cond:
            raise _ERRORS[self.error](self.message.format(*(v.item() for v in values)))
        output_storage[0][0] = x

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        from ..graph.gradient_types import disconnected_grad

        return [output_grads[0]] + [disconnected_grad() for _ in inputs[1:]]

    def R_op(self, inputs, eval_points):
        return [eval_points[0]]

    def connection_pattern(self, node):
        return [[True]] + [[False] for _ in node.inputs[1:]]


_ERRORS = {"ValueError": ValueError, "IndexError": IndexError}


def check(x, cond, message, *values, error="ValueError"):
    """`x`, after checking `cond` at run time (see `Check`)."""
    return Check(message, error=error)(x, cond, *values)


def check_shape(x, shape, what):
    """`x` with the static sizes of `shape`, checked at run time where `x`'s type lacks them.

    `what` names the value in the error (``"the update of shared variable 'W'"``).
    Returns `x` itself when its type already proves every size; raises
    ValueError at build time when a static size of `x` differs.
    """
    x = as_tensor_variable(x)
    shape = tuple(shape)
    for i, (want, got) in enumerate(zip(shape, x.type.shape)):
        if want is not None and got is not None and want != got:
            raise ValueError(f"{what} has static shape {x.type.shape}; expected size {want} "
                             f"in dimension {i} ({_dims(shape)})")
    unknown = [i for i, (want, got) in enumerate(zip(shape, x.type.shape))
               if want is not None and got is None]
    if not unknown:
        return x
    from .math import eq, logical_and

    cond = None
    for i in unknown:
        same = eq(x.shape[i], shape[i])
        cond = same if cond is None else logical_and(cond, same)
    message = (f"{_escaped(what)} has shape ({', '.join('{}' for _ in shape)}"
               f"{',' if len(shape) == 1 else ''}); its type needs {_escaped(_dims(shape))}")
    return Check(message, shape)(x, cond, *[x.shape[i] for i in range(x.ndim)])


def _dims(shape):
    dims = ", ".join("?" if s is None else str(s) for s in shape)
    return f"({dims}{',' if len(shape) == 1 else ''})"


def _escaped(text):
    return text.replace("{", "{{").replace("}", "}}")
