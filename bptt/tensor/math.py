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
from .elemwise import Elemwise
from .type import TensorType, as_tensor_variable

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
    """``a - b``, as ``a + (-b)``."""
    return add(a, neg(b))


def sqr(x):
    """``x * x``."""
    x = as_tensor_variable(x)
    return mul(x, x)


square = sqr


def reciprocal(x):
    return true_div(1, x)


def clip(x, lo, hi):
    """Elements of x limited to [lo, hi]."""
    return minimum(maximum(x, lo), hi)


def log_sigmoid(x):
    return -softplus(-x)


# -- matrix products ----------------------------------------------------------

class Dot(Op):
    """``np.dot`` of vectors and matrices (inputs of 1 or 2 dimensions).

    Higher-dimensional products are built by `dot` from reshapes around it.
    """

    __props__ = ()

    def make_node(self, a, b):
        a, b = as_tensor_variable(a), as_tensor_variable(b)
        if a.ndim not in (1, 2) or b.ndim not in (1, 2):
            raise TypeError(f"Dot takes 1-d or 2-d inputs, got {a.type} and {b.type}")
        ka, kb = a.type.shape[-1], b.type.shape[0]
        if ka is not None and kb is not None and ka != kb:
            raise TypeError(f"dot: inner dimensions differ ({a.type} and {b.type})")
        dtype = np.result_type(a.dtype, b.dtype).name
        if dtype == "bool":
            raise TypeError("dot of boolean arrays is not supported; cast them first")
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


def dot(a, b):
    """NumPy's ``dot``: sums over the last axis of `a` and the first (1-d) or
    second-to-last axis of `b`; scalars multiply."""
    from .shape import reshape, dimshuffle, shape as shape_of

    a, b = as_tensor_variable(a), as_tensor_variable(b)
    if a.ndim == 0 or b.ndim == 0:
        return mul(a, b)
    if a.ndim <= 2 and b.ndim <= 2:
        return _dot(a, b)
    if b.ndim <= 2:
        # (..., k) . (k[, n]): fold the leading axes of a into one.
        lead = shape_of(a)[:-1]
        flat = reshape(a, (-1, shape_of(a)[-1]), ndim=2)
        out = _dot(flat, b)
        tail = [shape_of(b)[1]] if b.ndim == 2 else []
        from .basic import concatenate

        return reshape(out, concatenate([lead, *[as_tensor_variable(t).dimshuffle("x") for t in tail]]),
                       ndim=a.ndim - 1 + b.ndim - 1)
    raise NotImplementedError("dot with a right operand of more than 2 dimensions is not supported")


def matmul(a, b):
    """``a @ b`` (vectors and matrices, or a batch of rows times a matrix)."""
    return dot(a, b)


# -- reductions ---------------------------------------------------------------

def normalize_axis(axis, ndim, what):
    """A sorted tuple of non-negative axes; every axis for None."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"{what}: axis {a} is out of range for a {ndim}-d input")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"{what}: repeated axis in {axis}")
    return tuple(sorted(out))


class Reduce(Op):
    """Reduce over `axis` (a sorted tuple) without keeping the reduced dimensions."""

    __props__ = ("axis",)
    name = "reduce"
    ufunc = None

    def __init__(self, axis):
        self.axis = tuple(axis)

    def __str__(self):
        return f"{self.name}{{axis={self.axis}}}"

    def out_dtype(self, dtype):
        return dtype

    def make_node(self, x):
        x = as_tensor_variable(x)
        for a in self.axis:
            if a >= x.ndim:
                raise ValueError(f"{self.name}: axis {a} is out of range for {x.type}")
        shape = tuple(s for i, s in enumerate(x.type.shape) if i not in self.axis)
        return Apply(self, [x], [TensorType(self.out_dtype(x.dtype), shape)()])

    def perform(self, node, inputs, output_storage):
        out = self.ufunc.reduce(inputs[0], axis=self.axis) if self.axis else inputs[0]
        output_storage[0][0] = np.asarray(out, dtype=node.outputs[0].dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(s for i, s in enumerate(input_shapes[0]) if i not in self.axis)]

    def _expand(self, y, x):
        """`y` (reduced) with the reduced axes put back as broadcastable dims."""
        from .shape import dimshuffle

        pattern, j = [], 0
        for i in range(x.ndim):
            if i in self.axis:
                pattern.append("x")
            else:
                pattern.append(j)
                j += 1
        return dimshuffle(y, pattern)


class Sum(Reduce):
    name, ufunc = "sum", np.add

    def out_dtype(self, dtype):
        if dtype == "bool" or dtype.startswith("int") and dtype != "int64":
            return "int64"
        if dtype.startswith("uint") and dtype != "uint64":
            return "uint64"
        return dtype

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
    name, ufunc = "prod", np.multiply

    out_dtype = Sum.out_dtype

    def L_op(self, inputs, outputs, output_grads):
        # d prod / d x_i = prod / x_i where x_i != 0; correct with exactly one zero
        # by taking the product of the others. Written with switch, no division by 0.
        from .shape import broadcast_to, shape

        (x,), (g,) = inputs, output_grads
        out = self._expand(outputs[0], x)
        nz = neq(x, 0)
        nzero = Sum(self.axis)(1 - nz)
        prod_nz = Prod(self.axis)(switch(nz, x, 1))
        others = switch(nz, out / switch(nz, x, 1),
                        switch(eq(self._expand(nzero, x), 1), self._expand(prod_nz, x), 0))
        return [broadcast_to(self._expand(g, x), shape(x)) * others]


class _Extremum(Reduce):
    def L_op(self, inputs, outputs, output_grads):
        # The gradient goes to every position equal to the extremum.
        (x,), (g,) = inputs, output_grads
        hit = eq(x, self._expand(outputs[0], x))
        return [self._expand(g, x) * hit]

    def R_op(self, inputs, eval_points):
        (x,), (ev,) = inputs, eval_points
        from .basic import cast

        out = self(x)
        hit = cast(eq(x, self._expand(out, x)), out.dtype)
        return [Sum(self.axis)(ev * hit) / Sum(self.axis)(hit)]


class Max(_Extremum):
    name, ufunc = "max", np.maximum


class Min(_Extremum):
    name, ufunc = "min", np.minimum


class All(Reduce):
    name, ufunc = "all", np.logical_and
    no_gradient = "boolean output"

    def out_dtype(self, dtype):
        return "bool"


class Any(Reduce):
    name, ufunc = "any", np.logical_or
    no_gradient = "boolean output"

    def out_dtype(self, dtype):
        return "bool"


class Argmax(Op):
    """Index of the maximum along one axis (or of the flattened input for axis None)."""

    __props__ = ("axis", "which")
    no_gradient = "integer output"

    def __init__(self, axis, which="max"):
        self.axis, self.which = axis, which

    def make_node(self, x):
        x = as_tensor_variable(x)
        shape = () if self.axis is None else tuple(
            s for i, s in enumerate(x.type.shape) if i != self.axis)
        return Apply(self, [x], [TensorType("int64", shape)()])

    def perform(self, node, inputs, output_storage):
        fn = np.argmax if self.which == "max" else np.argmin
        output_storage[0][0] = np.asarray(fn(inputs[0], axis=self.axis), dtype="int64")


def _keep(out, x, axes, keepdims):
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


def _count(x, axis):
    from .shape import shape
    from .basic import cast

    x = as_tensor_variable(x)
    axes = normalize_axis(axis, x.ndim, "mean")
    n = 1
    for a in axes:
        n = n * shape(x)[a]
    return cast(n, "float64" if x.dtype != "float32" else "float32") if axes else 1


def mean(x, axis=None, keepdims=False):
    """Arithmetic mean (derived: sum / count)."""
    x = as_tensor_variable(x)
    s = sum(x, axis, keepdims)
    if s.dtype not in ("float32", "float64"):
        from .basic import cast
        from .type import upgrade_to_float

        s = cast(s, upgrade_to_float(x.dtype))
    return s / _count(x, axis)


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
        out = Argmax(None, which)(x)
        return out
    (a,) = normalize_axis(axis, x.ndim, f"arg{which}")
    return _keep(Argmax(a, which)(x), x, (a,), keepdims)


def argmax(x, axis=None, keepdims=False):
    return _arg("max", x, axis, keepdims)


def argmin(x, axis=None, keepdims=False):
    return _arg("min", x, axis, keepdims)


def cumsum(x, axis=None):
    raise NotImplementedError("cumsum is not implemented yet; use bptt.scan")


_builtin_abs = builtins.abs
