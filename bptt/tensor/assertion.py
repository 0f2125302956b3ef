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
    """``x`` unchanged if ``cond`` holds at run time, else ValueError(`message`).

    `message` is a ``str.format`` template with one ``{}`` per value input
    (literal braces doubled); the values (scalars) fill it in when the check
    fails, so the message reports what came.
    """

    __props__ = ("message",)

    def __init__(self, message):
        self.message = message

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
        return Apply(self, [x, cond, *values], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, cond, *values = inputs
        if not cond:
            raise ValueError(self.message.format(*(v.item() for v in values)))
        output_storage[0][0] = x

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        from ..grad.types import disconnected_grad

        return [output_grads[0]] + [disconnected_grad() for _ in inputs[1:]]

    def R_op(self, inputs, eval_points):
        return [eval_points[0]]

    def connection_pattern(self, node):
        return [[True]] + [[False] for _ in node.inputs[1:]]


def check(x, cond, message, *values):
    """`x`, after checking `cond` at run time (see `Check`)."""
    return Check(message)(x, cond, *values)
