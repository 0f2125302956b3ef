"""Constructors and array-building ops: cast, alloc, zeros/ones, arange, stack, concatenate."""
from __future__ import annotations

import numpy as np

from ..config import config
from ..graph.basic import Apply, Constant
from ..graph.op import Op
from . import scalar_ops as so
from .elemwise import Elemwise
from .shape import ValueToSizes
from .type import TensorType, _check_dtype, as_tensor_variable

_casts = {}


def cast(x, dtype):
    """`x` converted to `dtype` (no-op if it already has it)."""
    x = as_tensor_variable(x)
    dtype = _check_dtype(dtype)
    if x.dtype == dtype:
        return x
    if dtype not in _casts:
        _casts[dtype] = Elemwise(so.Cast(dtype))
    return _casts[dtype](x)


_identity = Elemwise(so.Identity())


def tensor_copy(x):
    """A fresh copy of `x`."""
    return _identity(x)


_zero_grad = Elemwise(so.ZeroGrad())


def zero_grad(x):
    """`x`, as a constant for `bptt.grad`: gradients do not flow through it (they are zero)."""
    return _zero_grad(x)


class GradClip(Op):
    """``x`` unchanged; its gradient is the incoming one clipped to [lower, upper]."""

    __props__ = ("lower", "upper")

    def __init__(self, lower, upper):
        self.lower, self.upper = float(lower), float(upper)

    def make_node(self, x):
        x = as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0]

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        from .math import clip

        return [clip(output_grads[0], self.lower, self.upper)]

    def R_op(self, inputs, eval_points):
        return [eval_points[0]]


def grad_clip(x, lower, upper):
    """`x`, whose gradient `bptt.grad` clips elementwise to [`lower`, `upper`] (numbers)
    before passing it on; the values of the graph are unchanged."""
    for what, bound in (("lower", lower), ("upper", upper)):
        if not isinstance(bound, (int, float, np.integer, np.floating)):
            raise TypeError(f"grad_clip: the {what} bound must be a number, got "
                            f"{type(bound).__name__}; the bounds are fixed when the graph is built")
    if lower > upper:
        raise ValueError(f"grad_clip: the lower bound {lower} is above the upper bound {upper}")
    return GradClip(lower, upper)(x)


class Alloc(ValueToSizes):
    """An array of the given shape filled with (a broadcast of) `value`."""

    __props__ = ()

    def make_node(self, value, *dims):
        value = as_tensor_variable(value)
        dims = [_as_dim(d) for d in dims]
        if value.ndim > len(dims):
            raise ValueError(f"alloc: value {value.type} has more dims than the shape ({len(dims)})")
        vs = (1,) * (len(dims) - value.ndim) + value.type.shape
        static = []
        for d, v in zip(dims, vs):
            size = int(d.data) if isinstance(d, Constant) else None
            if size is not None and size < 0:
                raise ValueError(f"alloc: negative size {size} in the shape")
            if None not in (size, v) and v not in (1, size):
                raise ValueError(f"alloc: cannot broadcast {value.type} to the shape "
                                 f"{[int(d.data) if isinstance(d, Constant) else '?' for d in dims]}")
            static.append(size if size is not None else (v if v != 1 else None))
        return Apply(self, [value, *dims], [TensorType(value.dtype, static)()])

    def perform(self, node, inputs, output_storage):
        value, *dims = inputs
        out = np.empty(tuple(int(d) for d in dims), dtype=node.outputs[0].dtype)
        out[...] = value
        output_storage[0][0] = out

    def L_op(self, inputs, outputs, output_grads):
        from ..graph.gradient_types import disconnected_grad
        from .shape import shape_tuple, sum_to

        value = inputs[0]
        return [sum_to(output_grads[0], shape_tuple(value))] + \
            [disconnected_grad() for _ in inputs[1:]]



def _as_dim(d):
    d = as_tensor_variable(d)
    if d.ndim != 0 or d.dtype.startswith("float") or d.dtype == "bool":
        raise TypeError(f"alloc: a shape entry must be an integer scalar, got {d.type}")
    return cast(d, "int64")


alloc = Alloc()


def _shape_args(shape):
    if isinstance(shape, (int, np.integer)):
        return [shape]
    if hasattr(shape, "ndim") and getattr(shape, "ndim") == 1:
        from .shape import _shape_entries

        n = shape.type.shape[0]
        if n is None:
            raise ValueError("zeros/ones: a symbolic shape vector needs a static length")
        return _shape_entries(shape, n)
    return list(shape)


def zeros(shape, dtype=None):
    return alloc(np.asarray(0, dtype=_check_dtype(dtype)), *_shape_args(shape))


def ones(shape, dtype=None):
    return alloc(np.asarray(1, dtype=_check_dtype(dtype)), *_shape_args(shape))


def full(shape, value, dtype=None):
    value = as_tensor_variable(value)
    if dtype is not None:
        value = cast(value, dtype)
    return alloc(value, *_shape_args(shape))


def _like(x, value, dtype):
    from .shape import shape_tuple

    x = as_tensor_variable(x)
    dtype = x.dtype if dtype is None else _check_dtype(dtype)
    return alloc(np.asarray(value, dtype=dtype), *shape_tuple(x))


def zeros_like(x, dtype=None):
    return _like(x, 0, dtype)


def ones_like(x, dtype=None):
    return _like(x, 1, dtype)


def second(x, value):
    """An array shaped like `x` filled with `value` (broadcast)."""
    from .shape import shape_tuple

    return alloc(value, *shape_tuple(as_tensor_variable(x)))


class ARange(Op):
    """``np.arange(start, stop, step)`` with a fixed output dtype."""

    __props__ = ("dtype",)
    no_gradient = "integer-valued positions"

    def __init__(self, dtype):
        self.dtype = dtype

    def make_node(self, start, stop, step):
        args = [as_tensor_variable(a) for a in (start, stop, step)]
        for a in args:
            if a.ndim != 0:
                raise TypeError(f"arange: bounds must be scalars, got {a.type}")
        static = None
        if all(isinstance(a, Constant) for a in args):
            static = _arange_length(*[a.data for a in args])
        return Apply(self, args, [TensorType(self.dtype, (static,))()])

    def perform(self, node, inputs, output_storage):
        # NumPy scalars, not Python numbers: NumPy computes the length in the
        # bounds' own type, so float32 bounds give float32 rounding of it.
        start, stop, step = (np.asarray(a)[()] for a in inputs)
        if step == 0:
            raise ValueError("arange: step must not be 0")
        output_storage[0][0] = np.arange(start, stop, step, dtype=self.dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        from .math import ceil, maximum

        start, stop, step = node.inputs
        n = maximum(ceil((stop - start) / step), 0)
        return [(cast(n, "int64"),)]


def _arange_length(start, stop, step):
    """The length of ``np.arange(start, stop, step)`` without building it (None if step is 0)."""
    bounds = [np.asarray(a)[()] for a in (start, stop, step)]
    if bounds[2] == 0:
        return None
    if all(np.issubdtype(np.asarray(b).dtype, np.integer) for b in bounds):
        return len(range(*(int(b) for b in bounds)))
    estimate = np.ceil((float(bounds[1]) - float(bounds[0])) / float(bounds[2]))
    if not np.isfinite(estimate) or estimate > 1_000_000:
        return None   # NumPy's rounding in the bounds' dtype decides; too long to build here
    return len(np.arange(*bounds))


def arange(start, stop=None, step=1, dtype=None):
    """Like ``np.arange``; the dtype follows the bounds (int64 for ints, floatX for floats)."""
    if stop is None:
        start, stop = 0, start
    args = [as_tensor_variable(a) for a in (start, stop, step)]
    if dtype is None:
        from .type import result_dtype

        dtype = result_dtype(*args)
        if dtype.startswith("float"):
            dtype = config.floatX if all(getattr(a, "weak", False) for a in args) else dtype
    return ARange(_check_dtype(dtype))(*args)


class MakeVector(Op):
    """A vector from scalars of one dtype."""

    __props__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype

    def make_node(self, *scalars):
        scalars = [cast(as_tensor_variable(s), self.dtype) for s in scalars]
        for s in scalars:
            if s.ndim != 0:
                raise TypeError(f"MakeVector takes scalars, got {s.type}")
        return Apply(self, scalars, [TensorType(self.dtype, (len(scalars),))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs, dtype=self.dtype).reshape(len(inputs))

    def L_op(self, inputs, outputs, output_grads):
        from .subtensor import getitem

        return [getitem(output_grads[0], i) for i in range(len(inputs))]

    def R_op(self, inputs, eval_points):
        evs = [zeros_like(x) if e is None else e for x, e in zip(inputs, eval_points)]
        return [self(*evs)]

    def infer_shape(self, fgraph, node, input_shapes):
        return [(as_tensor_variable(np.int64(len(node.inputs))),)]


class Join(Op):
    """Concatenate tensors of equal ndim along a fixed `axis`."""

    __props__ = ("axis",)

    def __init__(self, axis):
        self.axis = int(axis)

    def make_node(self, *xs):
        xs = [as_tensor_variable(x) for x in xs]
        if not xs:
            raise TypeError("concatenate needs at least one tensor")
        ndim = xs[0].ndim
        if any(x.ndim != ndim for x in xs) or not 0 <= self.axis < ndim:
            raise TypeError(f"concatenate along axis {self.axis}: inputs must share a number "
                            f"of dims > axis, got {[x.type for x in xs]}")
        from .type import result_dtype

        dtype = result_dtype(*xs)
        xs = [cast(x, dtype) for x in xs]
        shape = []
        for d in range(ndim):
            sizes = [x.type.shape[d] for x in xs]
            if d == self.axis:
                shape.append(None if None in sizes else sum(sizes))
            else:
                known = {s for s in sizes if s is not None}
                if len(known) > 1:
                    raise TypeError(f"concatenate: dimension {d} differs: {sizes}")
                shape.append(known.pop() if known else None)
        return Apply(self, xs, [TensorType(dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.concatenate(inputs, axis=self.axis)

    def L_op(self, inputs, outputs, output_grads):
        from .shape import shape_i
        from .subtensor import getitem

        (g,) = output_grads
        grads, start = [], as_tensor_variable(np.int64(0))
        for x in inputs:
            stop = start + shape_i(x, self.axis)
            idx = (slice(None),) * self.axis + (slice(start, stop),)
            grads.append(getitem(g, idx))
            start = stop
        return grads

    def R_op(self, inputs, eval_points):
        evs = [zeros_like(x) if e is None else e for x, e in zip(inputs, eval_points)]
        return [self(*evs)]

    def infer_shape(self, fgraph, node, input_shapes):
        from .math import add

        out = list(input_shapes[0])
        out[self.axis] = add(*[s[self.axis] for s in input_shapes]) if len(input_shapes) > 1 \
            else input_shapes[0][self.axis]
        return [tuple(out)]


def concatenate(tensors, axis=0):
    tensors = [as_tensor_variable(t) for t in tensors]
    if len(tensors) == 1:
        return tensors[0]
    return Join(axis % tensors[0].ndim)(*tensors)


def join(axis, *tensors):
    """Theano's argument order for concatenate."""
    return concatenate(tensors, axis)


def stack(*tensors, axis=0):
    """Stack tensors of one shape along a new axis.

    Called as ``stack([a, b], axis)`` (NumPy's form) or ``stack(a, b, c)`` (Theano's
    older form, tensors as separate arguments, as Theano still accepts).
    """
    from .shape import shape_padaxis
    from .type import result_dtype

    if tensors and isinstance(tensors[0], (list, tuple)):
        if len(tensors) > 2 or len(tensors) == 2 and not isinstance(tensors[1], (int, np.integer)):
            raise TypeError("stack: pass the tensors as one list, then the axis: "
                            "stack([a, b], axis=1)")
        tensors, axis = tensors[0], tensors[1] if len(tensors) == 2 else axis
    tensors = [as_tensor_variable(t) for t in tensors]
    if not tensors:
        raise ValueError("stack needs at least one tensor")
    if all(t.ndim == 0 for t in tensors) and axis == 0:
        return MakeVector(result_dtype(*tensors))(*tensors)
    return concatenate([shape_padaxis(t, axis) for t in tensors], axis=axis)
