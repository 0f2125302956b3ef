"""The `Op` contract.

An op is a small immutable class. Its ``__props__`` name the attributes that
define it: two ops of the same class with equal props are equal, hash equal,
and are merged and cached as one.

``make_node(*inputs) -> Apply``
    Check input types, raise a clear TypeError naming the bad input, and
    create output variables.
``perform(node, inputs, output_storage)``
    The NumPy reference: store output ``i`` in ``output_storage[i][0]``.
``L_op(inputs, outputs, output_grads) -> list``
    Vector-Jacobian product: one symbolic gradient per input. A rule returns
    `disconnected_grad()` for an input the outputs do not depend on and
    `undefined_grad(...)` where the derivative does not exist. Gradients are
    never summed or unbroadcast here: the reverse sweep does that.
``R_op(inputs, eval_points) -> list``
    Jacobian-vector product: one tangent per output (``None`` entries in
    `eval_points` mean a zero tangent).
``infer_shape(fgraph, node, input_shapes) -> list``
    Symbolic output shapes (tuples of scalar variables) from input shapes.
``connection_pattern(node) -> list[list[bool]]``
    ``[i][j]``: whether output j depends on input i differentiably.

An op that has no gradient says so by setting ``no_gradient`` to the reason.
"""
from __future__ import annotations


class Op:
    __props__: tuple = ()
    #: Reason the op has no gradient rule (e.g. "integer output"), or None.
    no_gradient: str | None = None
    #: Which output `__call__` returns for multi-output ops (None: all).
    default_output: int | None = None
    #: Whether L_op accepts disconnected output gradients as `None` instead of zeros.
    accepts_disconnected_output_grads = False

    def _props(self):
        return tuple(getattr(self, p) for p in self.__props__)

    def __eq__(self, other):
        return type(self) is type(other) and self._props() == other._props()

    def __hash__(self):
        return hash((type(self), self._props()))

    def __str__(self):
        if not self.__props__:
            return type(self).__name__
        args = ", ".join(f"{p}={getattr(self, p)!r}" for p in self.__props__)
        return f"{type(self).__name__}{{{args}}}"

    __repr__ = __str__

    def __call__(self, *inputs, **kwargs):
        node = self.make_node(*inputs, **kwargs)
        if self.default_output is not None:
            return node.outputs[self.default_output]
        if len(node.outputs) == 1:
            return node.outputs[0]
        return node.outputs

    def make_node(self, *inputs):
        raise NotImplementedError(f"{type(self).__name__}.make_node")

    def perform(self, node, inputs, output_storage):
        raise NotImplementedError(f"{type(self).__name__}.perform")

    def L_op(self, inputs, outputs, output_grads):
        raise NotImplementedError(f"{type(self).__name__} has no gradient rule")

    def R_op(self, inputs, eval_points):
        raise NotImplementedError(
            f"{type(self).__name__} has no R_op (forward-mode) rule")

    def connection_pattern(self, node):
        return [[True] * len(node.outputs) for _ in node.inputs]
