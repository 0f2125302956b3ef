"""Scalar operations: what one element of an `Elemwise` computes.

A scalar op knows four things: its dtypes (`signature`), its NumPy
implementation (`impl`), its numba expression (`numba_expr`) and its partial
derivatives (`partials`) as tensor expressions. `Elemwise` turns these into
the gradient (``g * partial``) and the forward-mode tangent
(``sum(partial * tangent)``), so no scalar op writes a gradient rule twice.

Derived operations (``a - b``, ``square``, ``clip``, ``mean``) are built from
these in `math.py` and have no rule of their own.
"""
from __future__ import annotations

import numpy as np

from .type import result_dtype, upgrade_to_float


def lit(value, dtype):
    """A numba source literal of the given dtype (bare literals would be float64/int64)."""
    if dtype == "bool":
        return "True" if value else "False"
    return f"np.{dtype}({value!r})"


class ScalarOp:
    """Base: `nin` inputs (-1: any number >= 1), one output."""

    nin = 1
    name = "scalar_op"
    #: NumPy ufunc (or function) applied by `impl`.
    ufunc = None
    #: Whether the output takes a float dtype even for integer inputs.
    float_valued = False

    def __eq__(self, other):
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self):
        return hash((type(self), tuple(sorted(self.__dict__.items()))))

    def __repr__(self):
        return self.name

    def signature(self, inputs):
        """(compute dtype of each input, output dtype) for these input variables."""
        common = result_dtype(*inputs)
        if self.float_valued:
            common = upgrade_to_float(common)
        return [common] * len(inputs), common

    def impl(self, *args):
        return self.ufunc(*args)

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        """Source of an expression computing the output from argument names."""
        return f"np.{self.ufunc.__name__}({', '.join(args)})"

    def partials(self, inputs, output):
        """d output / d input_i as tensors broadcastable to the output; None if disconnected."""
        raise NotImplementedError(f"{self.name} has no partial derivatives")


class _Binary(ScalarOp):
    nin = 2
    symbol = None

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        if self.symbol:
            return f"({f' {self.symbol} '.join(args)})"
        return super().numba_expr(args, dtypes, out_dtype, ndims)


class _Variadic(_Binary):
    nin = -1

    def impl(self, *args):
        out = args[0]
        for a in args[1:]:
            out = self.ufunc(out, a)
        return out


class Add(_Variadic):
    name, ufunc, symbol = "add", np.add, "+"

    def partials(self, inputs, output):
        return [1 for _ in inputs]


class Mul(_Variadic):
    name, ufunc, symbol = "mul", np.multiply, "*"

    def partials(self, inputs, output):
        from .math import mul

        return [mul(*[x for j, x in enumerate(inputs) if j != i]) if len(inputs) > 1 else 1
                for i in range(len(inputs))]


class TrueDiv(_Binary):
    name, ufunc, symbol, float_valued = "true_div", np.true_divide, "/", True

    def partials(self, inputs, output):
        a, b = inputs
        return [1 / b, -output / b]


class IntDiv(_Binary):
    name, ufunc = "int_div", np.floor_divide

    def partials(self, inputs, output):
        return [None, None] if output.dtype not in ("float32", "float64") else [0, 0]


class Mod(_Binary):
    name, ufunc = "mod", np.mod

    def partials(self, inputs, output):
        from .math import floor

        a, b = inputs
        return [1, -floor(a / b)]


class Pow(_Binary):
    name, ufunc = "pow", np.power

    def partials(self, inputs, output):
        from .math import log, switch, eq

        a, b = inputs
        # d/da a**b = b * a**(b-1); written so that b == 0 gives 0 instead of 0 * inf.
        da = switch(eq(b, 0), 0, b * a ** (b - 1))
        db = switch(eq(a, 0), 0, output * log(a))
        return [da, db]


class Maximum(_Binary):
    name, ufunc = "maximum", np.maximum

    def partials(self, inputs, output):
        from .math import ge, lt

        a, b = inputs
        return [ge(a, b), lt(a, b)]


class Minimum(_Binary):
    name, ufunc = "minimum", np.minimum

    def partials(self, inputs, output):
        from .math import le, gt

        a, b = inputs
        return [le(a, b), gt(a, b)]


class _Unary(ScalarOp):
    nin = 1


class Neg(_Unary):
    name, ufunc = "neg", np.negative

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        return f"(-{args[0]})"

    def partials(self, inputs, output):
        return [-1]


class Abs(_Unary):
    name, ufunc = "abs", np.abs

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        return f"np.abs({args[0]})"

    def partials(self, inputs, output):
        from .math import sgn

        return [sgn(inputs[0])]


class _Float(_Unary):
    float_valued = True


class Exp(_Float):
    name, ufunc = "exp", np.exp

    def partials(self, inputs, output):
        return [output]


class Log(_Float):
    name, ufunc = "log", np.log

    def partials(self, inputs, output):
        return [1 / inputs[0]]


class Log1p(_Float):
    name, ufunc = "log1p", np.log1p

    def partials(self, inputs, output):
        return [1 / (1 + inputs[0])]


class Expm1(_Float):
    name, ufunc = "expm1", np.expm1

    def partials(self, inputs, output):
        return [output + 1]


class Sqrt(_Float):
    name, ufunc = "sqrt", np.sqrt

    def partials(self, inputs, output):
        return [0.5 / output]


class Tanh(_Float):
    name, ufunc = "tanh", np.tanh

    def partials(self, inputs, output):
        return [1 - output * output]


class Sin(_Float):
    name, ufunc = "sin", np.sin

    def partials(self, inputs, output):
        from .math import cos

        return [cos(inputs[0])]


class Cos(_Float):
    name, ufunc = "cos", np.cos

    def partials(self, inputs, output):
        from .math import sin

        return [-sin(inputs[0])]


class Sigmoid(_Float):
    name = "sigmoid"

    def impl(self, x):
        # Split by sign so neither branch overflows.
        with np.errstate(over="ignore"):
            return np.where(x >= 0, 1 / (1 + np.exp(-x)), np.exp(x) / (1 + np.exp(x)))

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        one = lit(1.0, out_dtype)
        return f"({one} / ({one} + np.exp(-{args[0]})))"

    def partials(self, inputs, output):
        return [output * (1 - output)]


class Softplus(_Float):
    name = "softplus"

    def impl(self, x):
        return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        x = args[0]
        return f"(np.maximum({x}, {lit(0.0, out_dtype)}) + np.log1p(np.exp(-np.abs({x}))))"

    def partials(self, inputs, output):
        from .math import sigmoid

        return [sigmoid(inputs[0])]


class _PiecewiseConstant(_Unary):
    """Ops whose derivative is zero almost everywhere."""

    def partials(self, inputs, output):
        return [0]


class Floor(_PiecewiseConstant):
    name, ufunc = "floor", np.floor


class Ceil(_PiecewiseConstant):
    name, ufunc = "ceil", np.ceil


class RoundHalfEven(_PiecewiseConstant):
    name, ufunc = "round", np.rint


class Sign(_PiecewiseConstant):
    name, ufunc = "sgn", np.sign


class _Boolean(ScalarOp):
    """Comparisons and logic: bool output, no derivative."""

    def signature(self, inputs):
        common = result_dtype(*inputs)
        return [common] * len(inputs), "bool"

    def partials(self, inputs, output):
        return [None] * len(inputs)


class _Comparison(_Boolean, _Binary):
    pass


class LT(_Comparison):
    name, ufunc, symbol = "lt", np.less, "<"


class GT(_Comparison):
    name, ufunc, symbol = "gt", np.greater, ">"


class LE(_Comparison):
    name, ufunc, symbol = "le", np.less_equal, "<="


class GE(_Comparison):
    name, ufunc, symbol = "ge", np.greater_equal, ">="


class EQ(_Comparison):
    name, ufunc, symbol = "eq", np.equal, "=="


class NEQ(_Comparison):
    name, ufunc, symbol = "neq", np.not_equal, "!="


class _Bitwise(_Binary):
    """and/or/xor: logical on bools, bitwise on ints; no derivative."""

    def partials(self, inputs, output):
        return [None, None]


class And(_Bitwise):
    name, ufunc, symbol = "and", np.bitwise_and, "&"


class Or(_Bitwise):
    name, ufunc, symbol = "or", np.bitwise_or, "|"


class Xor(_Bitwise):
    name, ufunc, symbol = "xor", np.bitwise_xor, "^"


class Invert(_Unary):
    name, ufunc = "invert", np.invert

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        if out_dtype == "bool" and not ndims[0]:
            return f"(not {args[0]})"
        return f"np.invert({args[0]})"

    def partials(self, inputs, output):
        return [None]


class IsNan(_Boolean, _Unary):
    name, ufunc = "isnan", np.isnan


class IsInf(_Boolean, _Unary):
    name, ufunc = "isinf", np.isinf


class Switch(ScalarOp):
    """``switch(cond, a, b)``: a where cond is true, else b."""

    nin = 3
    name = "switch"

    def signature(self, inputs):
        common = result_dtype(*inputs[1:])
        return ["bool", common, common], common

    def impl(self, c, a, b):
        return np.where(c, a, b)

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        c, a, b = args
        if not any(ndims):
            return f"({a} if {c} else {b})"
        return f"np.where({c}, {a}, {b})"

    def partials(self, inputs, output):
        from .math import switch

        c = inputs[0]
        return [None, switch(c, 1, 0), switch(c, 0, 1)]


class Cast(ScalarOp):
    """Conversion to `dtype` (float to int truncates toward zero, as NumPy)."""

    nin = 1

    def __init__(self, dtype):
        self.dtype = dtype

    @property
    def name(self):
        return f"cast_{self.dtype}"

    def signature(self, inputs):
        return [inputs[0].type.dtype], self.dtype

    def impl(self, x):
        return np.asarray(x).astype(self.dtype)

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        if ndims[0]:
            return f"{args[0]}.astype(np.{'bool_' if self.dtype == 'bool' else self.dtype})"
        if self.dtype == "bool":
            return f"({args[0]} != 0)"
        return f"np.{self.dtype}({args[0]})"

    def partials(self, inputs, output):
        float_in = inputs[0].type.dtype in ("float32", "float64")
        return [1 if float_in and self.dtype in ("float32", "float64") else None]


class Identity(_Unary):
    name = "identity"

    def impl(self, x):
        return np.array(x, copy=True)

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        return f"{args[0]}.copy()" if ndims[0] else args[0]

    def partials(self, inputs, output):
        return [1]
