"""Arithmetic, elementwise math, matrix products and reductions.

Primitive elementwise functions are `Elemwise` instances of scalar ops;
derived ones (``sub``, ``sqr``, ``clip``, ``mean``, ``var``) are compositions
and carry no gradient rule of their own.
"""
from __future__ import annotations

import builtins

import numpy as np

from ..graph.basic import Apply
from ..graph.op import Op
from . import scalar_ops as so
from .elemwise import Elemwise, _is_weak, _settle_weak
from .type import TensorType, as_tensor_variable, constant, result_dtype

add = Elemwise(so.Add())
mul = Elemwise(so.Mul())
true_div = Elemwise(so.TrueDiv())
int_div = Elemwise(so.IntDiv())
mod = Elemwise(so.Mod())
pow = Elemwise(so.Pow())
maximum = Elemwise(so.Maximum())
minimum = Elemwise(so.Minimum())
neg = Elemwise(so.Neg())
abs = Elemwise(so.Abs())
exp = Elemwise(so.Exp())
log = Elemwise(so.Log())
log1p = Elemwise(so.Log1p())
expm1 = Elemwise(so.Expm1())
sqrt = Elemwise(so.Sqrt())
tanh = Elemwise(so.Tanh())
sin = Elemwise(so.Sin())
cos = Elemwise(so.Cos())
sigmoid = Elemwise(so.Sigmoid())
softplus = Elemwise(so.Softplus())
floor = Elemwise(so.Floor())
ceil = Elemwise(so.Ceil())
round = Elemwise(so.RoundHalfEven())
sgn = Elemwise(so.Sign())
lt = Elemwise(so.LT())
gt = Elemwise(so.GT())
le = Elemwise(so.LE())
ge = Elemwise(so.GE())
eq = Elemwise(so.EQ())
neq = Elemwise(so.NEQ())
and_ = Elemwise(so.And())
or_ = Elemwise(so.Or())
xor = Elemwise(so.Xor())
invert = Elemwise(so.Invert())
isnan = Elemwise(so.IsNan())
isinf = Elemwise(so.IsInf())
switch = Elemwise(so.Switch())
where = switch
bitwise_and, bitwise_or, bitwise_xor = and_, or_, xor


def sub(a, b):
    """``a - b``, as ``a + (-b)`` with `b` negated in the result dtype.

    Negating first in the result dtype keeps NumPy's results: ``int8 - uint8``
    is int16, ``uint8 - 1`` stays uint8 and wraps, ``0.0 - int64 MIN`` is positive.
    """
    from .basic import cast

    a, b = as_tensor_variable(a), as_tensor_variable(b)
    dtype = result_dtype(a, b)
    if dtype == "bool":
        raise TypeError(f"sub: NumPy's boolean subtract is not supported, got {a.type} and "
                        f"{b.type}; use xor (^) or cast to an integer first")
    if _is_weak(b) and not _is_weak(a):
        with np.errstate(over="ignore"):
            return add(a, constant(-_settle_weak(b, dtype).data))
    if _is_weak(b):
        return add(a, neg(b))
    return add(a, neg(cast(b, dtype)))


def sqr(x):
    """``x * x``."""
    x = as_tensor_variable(x)
    return mul(x, x)


square = sqr
power = pow


def reciprocal(x):
    return true_div(1, x)


def clip(x, lo, hi):
    """Elements of x limited to [lo, hi] (``minimum(maximum(x, lo), hi)``, as NumPy)."""
    return minimum(maximum(x, lo), hi)


def log_sigmoid(x):
    return -softplus(-x)


def _as_bool(x):
    from .basic import cast

    return cast(x, "bool")


def logical_and(a, b):
    """Elementwise truth of ``a and b`` (nonzero is true)."""
    return and_(_as_bool(a), _as_bool(b))


def logical_or(a, b):
    return or_(_as_bool(a), _as_bool(b))


def logical_xor(a, b):
    return xor(_as_bool(a), _as_bool(b))


def logical_not(x):
    return invert(_as_bool(x))


# -- matrix products ----------------------------------------------------------

class Dot(Op):
    """``np.dot`` of vectors and matrices (inputs of 1 or 2 dimensions).

    Higher-dimensional products are built by `dot` from reshapes around it.
    """

    __props__ = ()

    def make_node(self, a, b):
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        if a.ndim not in (1, 2) or b.ndim not in (1, 2):
            raise TypeError(f"Dot: expected 1-d or 2-d inputs, got {a.type} and {b.type}")
        ka, kb = a.type.shape[-1], b.type.shape[0]
        if ka is not None and kb is not None and ka != kb:
            raise ValueError(f"Dot: inner dimensions differ: {a.type} has {ka} columns, "
                             f"{b.type} has {kb} rows")
        dtype = np.result_type(a.dtype, b.dtype).name
        if dtype == "bool":
            raise TypeError(f"Dot: boolean inputs are not supported, got {a.type} and {b.type}; "
                            "cast them to a number type first")
        shape = a.type.shape[:-1] + b.type.shape[1:]
        return Apply(self, [a, b], [TensorType(dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        dtype = node.outputs[0].dtype
        output_storage[0][0] = np.asarray(np.dot(*inputs), dtype=dtype)

    def L_op(self, inputs, outputs, output_grads):
        from .shape import dimshuffle

        a, b = inputs
        (g,) = output_grads
        if a.ndim == 1 and b.ndim == 1:      # scalar g
            return [g * b, g * a]
        if a.ndim == 2 and b.ndim == 1:      # g: (m,)
            return [outer(g, b), _dot(g, a)]
        if a.ndim == 1 and b.ndim == 2:      # g: (n,)
            return [_dot(b, g), outer(a, g)]
        return [_dot(g, dimshuffle(b, (1, 0))), _dot(dimshuffle(a, (1, 0)), g)]

    def R_op(self, inputs, eval_points):
        a, b = inputs
        ea, eb = eval_points
        terms = []
        if ea is not None:
            terms.append(_dot(ea, b))
        if eb is not None:
            terms.append(_dot(a, eb))
        if not terms:
            from .basic import zeros_like

            return [zeros_like(_dot(a, b))]
        return [terms[0] if len(terms) == 1 else add(*terms)]

    def infer_shape(self, fgraph, node, input_shapes):
        sa, sb = input_shapes
        return [tuple(sa[:-1]) + tuple(sb[1:])]


_dot = Dot()


def outer(a, b):
    """Outer product of two vectors."""
    from .shape import dimshuffle

    return mul(dimshuffle(a, (0, "x")), dimshuffle(b, ("x", 0)))


def _size(x, axes):
    """Product of the sizes of `axes` of `x` (an int64 scalar; 1 for no axes)."""
    from .shape import shape_i

    sizes = [shape_i(x, a) for a in axes]
    if not sizes:
        return as_tensor_variable(np.int64(1))
    return sizes[0] if len(sizes) == 1 else mul(*sizes)


def dot(a, b):
    """NumPy's ``dot``: sums over the last axis of `a` and the first (1-d) or
    second-to-last axis of `b`; a 0-d operand multiplies.

    Inputs of more than 2 dimensions are folded into matrices around `Dot`:
    ``a`` of shape (A..., k) becomes (prod(A), k); ``b`` of shape (B..., k, n)
    is moved to (k, B..., n) and becomes (k, prod(B) * n); the product is
    unfolded to (A..., B..., n).
    """
    from .shape import dimshuffle, reshape, shape_i

    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim == 0 or b.ndim == 0:
        return mul(a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return _dot(a, b)
    out_shape = [shape_i(a, i) for i in range(a.ndim - 1)]
    out_shape += [shape_i(b, i) for i in range(b.ndim - 2)] + [shape_i(b, -1)][: b.ndim - 1]
    if a.ndim > 2:
        a = reshape(a, [_size(a, range(a.ndim - 1)), shape_i(a, -1)], ndim=2)
    if b.ndim > 2:
        rest = [*range(b.ndim - 2), b.ndim - 1]
        moved = dimshuffle(b, (b.ndim - 2, *rest))
        b = reshape(moved, [shape_i(b, -2), _size(b, rest)], ndim=2)
    return reshape(_dot(a, b), out_shape, ndim=len(out_shape))


def matmul(a, b):
    """``a @ b`` with NumPy's rules: 1-d operands are promoted and the added axis
    removed again; leading (batch) axes broadcast. Batched products (right
    operand of more than 2 dimensions) are a broadcast multiply and a sum."""
    from .shape import shape_padaxis

    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: operands must have at least one dimension, got {a.type} "
                         f"and {b.type}; use * to multiply by a scalar")
    if b.ndim <= 2:
        return dot(a, b)
    if "bool" in (a.dtype, b.dtype):
        raise TypeError(f"matmul: boolean inputs are not supported, got {a.type} and {b.type}")
    dtype = np.result_type(a.dtype, b.dtype).name   # small integers wrap as NumPy's
    if a.ndim == 1:     # (k,) @ (..., k, n) -> (..., n)
        return sum(shape_padaxis(a, 1) * b, axis=-2, dtype=dtype)
    # (..., m, k, 1) * (..., 1, k, n) summed over k -> (..., m, n)
    return sum(shape_padaxis(a, -1) * shape_padaxis(b, -3), axis=-2, dtype=dtype)


# -- reductions ---------------------------------------------------------------

def normalize_axis(axis, ndim, what):
    """A sorted tuple of non-negative axes; every axis for None."""
    if axis is None:
        return tuple(range(ndim))
    if not isinstance(axis, (int, np.integer, list, tuple)):
        raise TypeError(f"{what}: axis must be an int, a tuple of ints or None, got {axis!r}")
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise TypeError(f"{what}: axis must be an int, a tuple of ints or None, got {axis!r}")
        a = int(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"{what}: axis {a} is out of range for a {ndim}-d input")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{what}: repeated axis in {axis!r}")
    return tuple(sorted(out))


class Reduce(Op):
    """Reduce over `axis` (a sorted tuple) without keeping the reduced dimensions."""

    __props__ = ("axis",)
    abstract = True
    name = "reduce"
    #: NumPy function computing the reduction (called with ``axis=``).
    np_func = None

    def __init__(self, axis):
        axis = tuple(int(a) for a in axis)
        if builtins.any(a < 0 for a in axis) or len(set(axis)) != len(axis):
            raise ValueError(f"{self.name}: axis must be distinct non-negative ints, got {axis}")
        self.axis = tuple(sorted(axis))

    def __str__(self):
        return f"{self.name}{{axis={self.axis}}}"

    def out_dtype(self, dtype):
        return dtype

    def make_node(self, x):
        x = as_tensor_variable(x)
        if self.axis and self.axis[-1] >= x.ndim:
            raise ValueError(f"{self.name}: axis {self.axis[-1]} is out of range for {x.type}")
        shape = tuple(s for i, s in enumerate(x.type.shape) if i not in self.axis)
        return Apply(self, [x], [TensorType(self.out_dtype(x.dtype), shape)()])

    def perform(self, node, inputs, output_storage):
        dtype = node.outputs[0].dtype
        out = self.np_func(inputs[0], axis=self.axis) if self.axis else inputs[0]
        output_storage[0][0] = np.asarray(out, dtype=dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(s for i, s in enumerate(input_shapes[0]) if i not in self.axis)]

    def _expand(self, y, x):
        """`y` (reduced) with the reduced axes put back as broadcastable dims."""
        return _keep(y, x, self.axis, True)


def _accumulated_dtype(dtype):
    """NumPy's dtype for sums and products: small integers accumulate in 64 bits."""
    if dtype == "bool" or dtype.startswith("int"):
        return "int64"
    if dtype.startswith("uint"):
        return "uint64"
    return dtype


class Sum(Reduce):
    name = "sum"

    def out_dtype(self, dtype):
        return _accumulated_dtype(dtype)

    def np_func(self, x, axis):
        return np.sum(x, axis=axis, dtype=_accumulated_dtype(x.dtype.name))

    def L_op(self, inputs, outputs, output_grads):
        from .shape import broadcast_to, shape

        (x,), (g,) = inputs, output_grads
        return [broadcast_to(self._expand(g, x), shape(x))]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            from .basic import zeros_like

            return [zeros_like(self(inputs[0]))]
        return [self(eval_points[0])]


class Prod(Reduce):
    name = "prod"

    out_dtype = Sum.out_dtype

    def np_func(self, x, axis):
        return np.prod(x, axis=axis, dtype=_accumulated_dtype(x.dtype.name))

    def _others(self, x, out):
        """d prod / d x_i: the product of the other elements, without dividing by 0."""
        zero = eq(x, 0)
        x_nz = switch(zero, 1, x)
        one_zero = self._expand(eq(Sum(self.axis)(zero), 1), x)
        prod_nz = self._expand(Prod(self.axis)(x_nz), x)
        return switch(zero, switch(one_zero, prod_nz, 0), self._expand(out, x) / x_nz)

    def L_op(self, inputs, outputs, output_grads):
        (x,), (g,) = inputs, output_grads
        return [self._expand(g, x) * self._others(x, outputs[0])]

    def R_op(self, inputs, eval_points):
        (x,), (ev,) = inputs, eval_points
        out = self(x)
        if ev is None:
            from .basic import zeros_like

            return [zeros_like(out)]
        return [Sum(self.axis)(ev * self._others(x, out))]


class _Extremum(Reduce):
    """Max and Min; the gradient goes to every position equal to the extremum."""

    abstract = True

    def L_op(self, inputs, outputs, output_grads):
        (x,), (g,) = inputs, output_grads
        hit = eq(x, self._expand(self._of_this(x, outputs[0]), x))
        return [self._expand(g, x) * hit]

    def _of_this(self, x, out):
        """The extremum the gradient compares x with, computed from this x.

        Not the output itself: a scan's backward step reads its forward loop's
        recorded outputs while it recomputes x, and a rewrite may compute that x
        another way (a product batched out of the backward loop, not out of a
        forward loop with ``until``, rounds differently), so x would miss the
        recorded extremum. Nor the op applied again, which the merge pass makes
        the output. For floats the other extremum of -x, negated: equal bit for
        bit, and computed wherever x is."""
        if not x.dtype.startswith("float"):
            return out
        other = Min if isinstance(self, Max) else Max
        return -other(self.axis)(-x)

    def R_op(self, inputs, eval_points):
        # The transpose of L_op: the tangents at every extremal position, summed.
        (x,), (ev,) = inputs, eval_points
        out = self(x)
        if ev is None:
            from .basic import zeros_like

            return [zeros_like(out)]
        return [Sum(self.axis)(ev * eq(x, self._expand(self._of_this(x, out), x)))]


class Max(_Extremum):
    name, np_func = "max", staticmethod(np.max)


class Min(_Extremum):
    name, np_func = "min", staticmethod(np.min)


class All(Reduce):
    name, np_func = "all", staticmethod(np.all)
    no_gradient = "boolean output"

    def out_dtype(self, dtype):
        return "bool"


class Any(Reduce):
    name, np_func = "any", staticmethod(np.any)
    no_gradient = "boolean output"

    def out_dtype(self, dtype):
        return "bool"


class Argmax(Op):
    """Index of the maximum (`which` "max") or minimum ("min") along one axis, or of
    the flattened input for axis None. NaN counts as the extremum, as in NumPy."""

    __props__ = ("axis", "which")
    no_gradient = "integer output"

    def __init__(self, axis, which="max"):
        if which not in ("max", "min"):
            raise ValueError(f"Argmax: which must be 'max' or 'min', got {which!r}")
        self.axis, self.which = (None if axis is None else int(axis)), which

    def __str__(self):
        return f"arg{self.which}{{axis={self.axis}}}"

    def make_node(self, x):
        x = as_tensor_variable(x)
        if self.axis is not None and not 0 <= self.axis < x.ndim:
            raise ValueError(f"arg{self.which}: axis {self.axis} is out of range for {x.type}")
        shape = () if self.axis is None else tuple(
            s for i, s in enumerate(x.type.shape) if i != self.axis)
        return Apply(self, [x], [TensorType("int64", shape)()])

    def perform(self, node, inputs, output_storage):
        fn = np.argmax if self.which == "max" else np.argmin
        output_storage[0][0] = np.asarray(fn(inputs[0], axis=self.axis), dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        if self.axis is None:
            return [()]
        return [tuple(s for i, s in enumerate(input_shapes[0]) if i != self.axis)]


class Argsort(Op):
    """The indices that sort `x` along `axis` (stably: ties keep their order; NaN
    last, as NumPy), or that sort the flattened input for axis None."""

    __props__ = ("axis",)
    no_gradient = "integer output"

    def __init__(self, axis):
        self.axis = None if axis is None else int(axis)

    def make_node(self, x):
        x = as_tensor_variable(x)
        if self.axis is not None and not 0 <= self.axis < x.ndim:
            raise ValueError(f"argsort: axis {self.axis} is out of range for {x.type}")
        if x.ndim == 0:
            raise ValueError("argsort: the input must have at least one dimension")
        shape = (_flat_size(x.type.shape),) if self.axis is None else x.type.shape
        return Apply(self, [x], [TensorType("int64", shape)()])

    def perform(self, node, inputs, output_storage):
        out = np.argsort(inputs[0], axis=self.axis, kind="stable")
        output_storage[0][0] = out.astype("int64", copy=False)

    def infer_shape(self, fgraph, node, input_shapes):
        if self.axis is None:
            from .shape import _product

            return [(_product(input_shapes[0]),)]
        return [input_shapes[0]]


def _flat_size(shape):
    return None if None in shape else int(np.prod(shape, dtype="int64"))


def _keep(out, x, axes, keepdims):
    """`out` with size-1 dimensions where `axes` of `x` were reduced (if keepdims)."""
    if not keepdims:
        return out
    from .shape import dimshuffle

    pattern, j = [], 0
    for i in range(x.ndim):
        if i in axes:
            pattern.append("x")
        else:
            pattern.append(j)
            j += 1
    return dimshuffle(out, pattern)


def _reduce(cls, x, axis, keepdims, what):
    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.ndim, what)
    return _keep(cls(axes)(x), x, axes, keepdims)


def sum(x, axis=None, keepdims=False, dtype=None):
    """Sum over `axis` (int, tuple, negative allowed; None: all). Booleans and small
    integers accumulate in int64/uint64 as NumPy; `dtype` casts the result."""
    out = _reduce(Sum, x, axis, keepdims, "sum")
    if dtype is not None:
        from .basic import cast

        out = cast(out, dtype)
    return out


def prod(x, axis=None, keepdims=False):
    return _reduce(Prod, x, axis, keepdims, "prod")


def max(x, axis=None, keepdims=False):
    return _reduce(Max, x, axis, keepdims, "max")


def min(x, axis=None, keepdims=False):
    return _reduce(Min, x, axis, keepdims, "min")


def all(x, axis=None, keepdims=False):
    return _reduce(All, x, axis, keepdims, "all")


def any(x, axis=None, keepdims=False):
    return _reduce(Any, x, axis, keepdims, "any")


def mean(x, axis=None, keepdims=False):
    """Arithmetic mean (derived: sum / count). Integers are summed as floats, as in
    NumPy (float64, or floatX for small integers, as Theano)."""
    from .basic import cast
    from .type import upgrade_to_float

    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.ndim, "mean")
    dtype = upgrade_to_float(x.dtype)
    return sum(cast(x, dtype), axes, keepdims) / cast(_size(x, axes), dtype)


def var(x, axis=None, keepdims=False):
    """Population variance (derived)."""
    x = as_tensor_variable(x)
    d = x - mean(x, axis, keepdims=True)
    return mean(d * d, axis, keepdims)


def std(x, axis=None, keepdims=False):
    return sqrt(var(x, axis, keepdims))


def _arg(which, x, axis, keepdims):
    x = as_tensor_variable(x)
    if axis is None:
        return _keep(Argmax(None, which)(x), x, tuple(range(x.ndim)), keepdims)
    if not isinstance(axis, (int, np.integer)):
        raise TypeError(f"arg{which}: axis must be an int or None, got {axis!r}")
    (a,) = normalize_axis(axis, x.ndim, f"arg{which}")
    return _keep(Argmax(a, which)(x), x, (a,), keepdims)


def argmax(x, axis=None, keepdims=False):
    return _arg("max", x, axis, keepdims)


def argmin(x, axis=None, keepdims=False):
    return _arg("min", x, axis, keepdims)

