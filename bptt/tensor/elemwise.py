"""`Elemwise`: a scalar op applied to every element, with NumPy broadcasting.

Broadcasting is decided at run time: a dimension of unknown static size may
turn out to be 1 and broadcast. Static shapes only catch what is certain to
fail (two different known sizes, neither 1).
"""
from __future__ import annotations

import numpy as np

from ..graph.basic import Apply
from ..graph.op import Op
from .stable_forms import STABLE_FORMS
from .type import TensorConstant, TensorType, as_tensor_variable


def broadcast_static_shape(types, what):
    """Static output shape of broadcasting `types`; ValueError when sizes cannot match."""
    ndim = max((t.ndim for t in types), default=0)
    shapes = [(1,) * (ndim - t.ndim) + t.shape for t in types]
    out = []
    for dim, sizes in enumerate(zip(*shapes)):
        known = {s for s in sizes if s is not None and s != 1}
        if len(known) > 1:
            raise ValueError(f"{what}: cannot broadcast static shapes "
                             f"{[t.shape for t in types]} (dimension {dim} has sizes {sorted(known)})")
        if known:
            out.append(known.pop())
        elif all(s == 1 for s in sizes):
            out.append(1)
        else:
            out.append(None)
    return tuple(out)


BROADCAST_ERROR = "operands could not be broadcast together with shapes"


def broadcast_message(padded):
    """The message for operands of `padded` shapes (aligned, -2 absent, -1 static 1).

    ``((-2, 3), (2, 4))`` (a vector of 3 and a 2 x 4 matrix) gives NumPy's
    ``operands could not be broadcast together with shapes (3,) (2,4)``, then the
    dimension whose sizes differ and what to change. PY mode (`Elemwise.perform`)
    and compiled loops (link/numba/errors.py) raise this same text.
    """
    shapes = [tuple(1 if d == -1 else d for d in s if d != -2) for s in padded]
    own = " ".join("(" + ",".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"
                   for s in shapes)
    nd = len(padded[0]) if padded else 0
    for d in range(nd):
        sizes = sorted({s[d] for s in padded if s[d] >= 0 and s[d] != 1})
        if len(sizes) > 1:
            which = ("the last dimension" if d == nd - 1
                     else f"dimension {d - nd} (counting from the right)")
            return (f"{BROADCAST_ERROR} {own}: {which} has sizes {' and '.join(map(str, sizes))}; "
                    "the operands must agree in each dimension, or have size 1 where they "
                    "broadcast (reshape, slice or dimshuffle an operand to match)")
    return f"{BROADCAST_ERROR} {own}"


def _check_broadcast(values):
    """ValueError with `broadcast_message` when the shapes of `values` do not broadcast."""
    shapes = [np.shape(v) for v in values]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        nd = max(len(s) for s in shapes)
        raise ValueError(broadcast_message([(-2,) * (nd - len(s)) + s for s in shapes])) from None


class Elemwise(Op):
    """Apply `scalar_op` elementwise, broadcasting inputs as NumPy does.

    Weak constants (Python numbers) are converted to the computation dtype
    when the node is made, so lowering never sees mixed literal dtypes. An
    operator (``+``, ``<``, ``//``...) applied to weak constants only is
    evaluated at once into a weak constant, as Python would (`_fold_weak`).
    """

    __props__ = ("scalar_op", "inplace_input")

    def __init__(self, scalar_op, inplace_input=None):
        self.scalar_op = scalar_op
        # Set only by the late `inplace_elemwise` rewrite: the output is written into the
        # buffer of input `inplace_input`, which nothing reads afterwards.
        self.inplace_input = inplace_input

    def __str__(self):
        if self.inplace_input is None:
            return self.scalar_op.name
        return f"{self.scalar_op.name}{{inplace_input={self.inplace_input}}}"

    def __call__(self, *inputs):
        inputs = [_as_input(x, self.scalar_op.name, k) for k, x in enumerate(inputs)]
        if self.scalar_op.python_operator and inputs and all(_is_weak(x) for x in inputs):
            return _fold_weak(self, inputs)
        form = STABLE_FORMS.get(self.scalar_op.name) if self.inplace_input is None else None
        stable = None if form is None else form(*inputs)
        return super().__call__(*inputs) if stable is None else stable

    def make_node(self, *inputs):
        so = self.scalar_op
        if so.nin != -1 and len(inputs) != so.nin:
            raise TypeError(f"{so.name} takes {so.nin} inputs, got {len(inputs)}")
        if not inputs:
            raise TypeError(f"{so.name} needs at least one input")
        inputs = [_as_input(x, so.name, k) for k, x in enumerate(inputs)]
        in_dtypes, out_dtype = so.signature(inputs)
        inputs = [_settle_weak(x, dt) for x, dt in zip(inputs, in_dtypes)]
        shape = broadcast_static_shape([x.type for x in inputs], so.name)
        return Apply(self, inputs, [TensorType(out_dtype, shape)()])

    def compute_dtypes(self, node):
        return self.scalar_op.signature(node.inputs)

    def perform(self, node, inputs, output_storage):
        in_dtypes, out_dtype = self.compute_dtypes(node)
        args = [np.asarray(x, dtype=dt) if x.dtype.name != dt else x
                for x, dt in zip(inputs, in_dtypes)]
        with np.errstate(all="ignore"):
            try:
                out = self.scalar_op.impl(*args)
            except ValueError:
                _check_broadcast(args)   # NumPy's message names neither dimension nor fix
                raise
        out = np.asarray(out, dtype=out_dtype)
        target = None if self.inplace_input is None else inputs[self.inplace_input]
        if target is not None and target.shape == out.shape:   # as the numba loop does
            np.copyto(target, out)
            out = target
        output_storage[0][0] = out

    def L_op(self, inputs, outputs, output_grads):
        from .basic import zeros_like
        from ..graph.gradient_types import disconnected_grad

        (g,) = output_grads
        grads = []
        for x, p in zip(inputs, self.scalar_op.partials(inputs, outputs[0])):
            if p is None:
                grads.append(disconnected_grad())
            elif isinstance(p, (int, float)) and p == 0:
                grads.append(zeros_like(x, dtype=g.dtype))
            elif isinstance(p, (int, float)) and p == 1:
                grads.append(g)
            else:
                grads.append(g * p)
        return grads

    def R_op(self, inputs, eval_points):
        from .basic import zeros_like

        out = Elemwise(self.scalar_op)(*inputs)   # never a flagged node in a new graph
        total = None
        for p, ev in zip(self.scalar_op.partials(inputs, out), eval_points):
            if ev is None or p is None or (isinstance(p, (int, float)) and p == 0):
                continue
            term = ev if isinstance(p, (int, float)) and p == 1 else ev * p
            total = term if total is None else total + term
        if total is None:
            return [zeros_like(out)]
        if total.dtype != out.dtype:
            from .basic import cast

            total = cast(total, out.dtype)
        return [total]

    def infer_shape(self, fgraph, node, input_shapes):
        from .shape import broadcast_shapes

        return [broadcast_shapes(*input_shapes)]


class ScalarOverflowError(OverflowError, ValueError):
    """A Python integer that does not fit the dtype it would adopt (NumPy 2 raises too)."""


def _is_weak(x):
    return isinstance(x, TensorConstant) and x.weak


def _as_input(x, what, k):
    try:
        return as_tensor_variable(x)
    except TypeError as exc:
        raise TypeError(f"{what}: input {k} must be a tensor or a number, got "
                        f"{type(x).__name__} ({exc})") from exc


def _fold_weak(op, inputs):
    """Python evaluates an operator on Python numbers itself: the result is a Python
    number again, hence weak. Folding keeps ``x * (2 * 3.0)`` in x's dtype."""
    node = op.make_node(*inputs)
    cell = [[None]]
    op.perform(node, [x.data for x in node.inputs], cell)
    return TensorConstant(node.outputs[0].type, cell[0][0], weak=True)


def _settle_weak(x, dtype):
    """Give a weak constant the dtype it meets (NumPy 2's rule for Python scalars)."""
    if not _is_weak(x) or x.type.dtype == dtype:
        return x
    value = x.data.item()
    if np.dtype(dtype).kind in "iu" and not isinstance(value, bool):
        info = np.iinfo(dtype)
        if not info.min <= value <= info.max:
            raise ScalarOverflowError(f"Python integer {value} is out of bounds for {dtype}")
    with np.errstate(over="ignore"):
        data = np.asarray(value, dtype=dtype)
    return TensorConstant(TensorType(dtype, ()), data)
