"""Scalar operations: what one element of an `Elemwise` computes.

A scalar op knows four things: its dtypes (`signature`), its NumPy
implementation (`impl`), its numba expression (`numba_expr`) and its partial
derivatives (`partials`) as tensor expressions. `Elemwise` turns these into
the gradient (``g * partial``) and the forward-mode tangent
(``sum(partial * tangent)``), so no scalar op writes a gradient rule twice.

Derived operations (``a - b``, ``square``, ``clip``, ``mean``) are built from
these in `math.py` and have no rule of their own.

Dtypes follow NumPy 2: the computation dtype is the promotion of the inputs
(`result_dtype`, Python scalars weak); ops that NumPy refuses for some kinds
(``-bool``, ``float & float``) raise a TypeError when the node is made.

Integer corner cases, identical in both modes: division and modulo by zero
give 0 (NumPy's result, without its warning); ``MIN // -1`` wraps to MIN and
``MIN % -1`` is 0 (numba would trap on the CPU instruction, so the numba
expression routes ``b == -1`` around it); an integer to a negative integer
power raises ValueError, as NumPy does.
"""
from __future__ import annotations

import numpy as np

from .type import result_dtype, upgrade_to_float

_KIND_NAMES = {"b": "boolean", "i": "signed integer", "u": "unsigned integer", "f": "float"}


def lit(value, dtype):
    """A numba source literal of the given dtype (bare literals would be float64/int64)."""
    if dtype == "bool":
        return "True" if value else "False"
    return f"np.{dtype}({value!r})"


def numba_cast(arg, dtype, ndim, src=None):
    """Numba source converting `arg` (an array if `ndim`, else a scalar) to `dtype`."""
    if dtype == "uint16" and src in ("float32", "float64"):
        # numba's direct float -> uint16 conversion saturates; NumPy's wraps like this.
        arg = numba_cast(arg, "int32", ndim)
    if ndim:
        return f"{arg}.astype({'np.bool_' if dtype == 'bool' else 'np.' + dtype})"
    if dtype == "bool":
        return f"({arg} != 0)"
    return f"np.{dtype}({arg})"


def _kind(dtype):
    return np.dtype(dtype).kind


class ScalarOp:
    """Base: `nin` inputs (-1: any number >= 1), one output."""

    nin = 1
    name = "scalar_op"
    #: NumPy ufunc (or function) applied by `impl`.
    ufunc = None
    #: Whether the output takes a float dtype even for integer inputs.
    float_valued = False
    #: Dtype kinds of the computation this op accepts (b, i, u, f), as NumPy.
    kinds = "biuf"
    #: Computation dtype for boolean inputs (NumPy upcasts bool for some ops).
    bool_as = "bool"
    #: Whether Python evaluates this op on Python numbers itself (an operator),
    #: so that an application to weak constants only is again weak.
    python_operator = False

    def __eq__(self, other):
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self):
        return hash((type(self), tuple(sorted(self.__dict__.items()))))

    def __repr__(self):
        return self.name

    def signature(self, inputs):
        """(compute dtype of each input, output dtype) for these input variables."""
        common = self.check_kind(result_dtype(*inputs), inputs)
        if common == "bool":
            common = self.bool_as
        if self.float_valued:
            common = upgrade_to_float(common)
        return [common] * len(inputs), common

    def check_kind(self, dtype, inputs):
        if _kind(dtype) not in self.kinds:
            allowed = " or ".join(_KIND_NAMES[k] for k in self.kinds)
            got = ", ".join(str(x.type) for x in inputs)
            raise TypeError(f"{self.name}: expected {allowed} inputs, got {got} "
                            f"(computed in {dtype})")
        return dtype

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
    name, ufunc, symbol, python_operator = "add", np.add, "+", True

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        if out_dtype == "bool":      # numba's `+` on booleans gives integers
            return f"({' | '.join(args)})"
        return super().numba_expr(args, dtypes, out_dtype, ndims)

    def partials(self, inputs, output):
        return [1 for _ in inputs]


class Mul(_Variadic):
    name, ufunc, symbol, python_operator = "mul", np.multiply, "*", True

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        if out_dtype == "bool":
            return f"({' & '.join(args)})"
        return super().numba_expr(args, dtypes, out_dtype, ndims)

    def partials(self, inputs, output):
        from .math import mul

        return [mul(*[x for j, x in enumerate(inputs) if j != i]) if len(inputs) > 1 else 1
                for i in range(len(inputs))]


class TrueDiv(_Binary):
    name, ufunc, symbol, float_valued, python_operator = "true_div", np.true_divide, "/", True, True

    def partials(self, inputs, output):
        a, b = inputs
        return [1 / b, -output / b]


def _signed(dtype):
    return _kind(dtype) == "i"


def _safe_divisor(b, ndim, dtype):
    """`b` with -1 replaced by 1 (numba source; keeps the dtype)."""
    one = lit(1, dtype)
    return f"select({b} == -1, {one}, {b})" if ndim else f"({one} if {b} == -1 else {b})"


class IntDiv(_Binary):
    name, ufunc, bool_as, python_operator = "int_div", np.floor_divide, "int8", True

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        a, b = args
        if not _signed(out_dtype):
            return f"np.floor_divide({a}, {b})"
        # MIN // -1 traps in machine code; -a wraps to MIN as NumPy does.
        if not any(ndims):
            return f"(-{a} if {b} == -1 else np.floor_divide({a}, {b}))"
        neg_a = f"-{a}" if ndims[0] else f"np.{out_dtype}(-{a})"
        return (f"select({b} == -1, {neg_a}, "
                f"np.floor_divide({a}, {_safe_divisor(b, ndims[1], out_dtype)}))")

    def partials(self, inputs, output):
        return [None, None] if _kind(output.dtype) != "f" else [0, 0]


class Mod(_Binary):
    name, ufunc, bool_as, python_operator = "mod", np.mod, "int8", True

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        a, b = args
        if not _signed(out_dtype):
            return f"np.mod({a}, {b})"
        # MIN % -1 traps in machine code; anything modulo -1 is 0 (and so modulo 1).
        return f"np.mod({a}, {_safe_divisor(b, ndims[1], out_dtype)})"

    def partials(self, inputs, output):
        from .math import floor

        a, b = inputs
        return [1, -floor(a / b)]


#: Placeholders for helper kernels; the numba lowering substitutes their names.
NEGATIVE_POWER_CHECK, NEGATIVE_POWER_CHECK_0D = "__check_exponents__", "__check_exponent__"


class Pow(_Binary):
    name, ufunc, bool_as, python_operator = "pow", np.power, "int8", True

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        a, b = args
        if not _signed(out_dtype):
            return f"np.power({a}, {b})"
        # NumPy refuses negative integer powers; numba would return 0.
        helper = NEGATIVE_POWER_CHECK if ndims[1] else NEGATIVE_POWER_CHECK_0D
        return f"np.power({a}, {helper}({b}))"

    def partials(self, inputs, output):
        from .math import eq, log, switch

        a, b = inputs
        # d/da a**b = b * a**(b-1); written so that b == 0 gives 0 instead of 0 * inf.
        da = switch(eq(b, 0), 0, b * a ** (b - 1))
        db = switch(eq(a, 0), 0, output * log(a))
        return [da, db]


_SIGNED = ("int8", "int16", "int32", "int64")


def _int_extremum(fn, ufunc, args, dtypes, out_dtype):
    """`fn` (imin / imax, intrinsics written into the caller) for signed integers: numba
    types a scalar np.maximum through the ufunc machinery, the bulk of a shape program's
    compile time; the ufunc otherwise (floats: NaN handling)."""
    if all(str(d) in _SIGNED for d in dtypes) and str(out_dtype) in _SIGNED:
        return f"{fn}({', '.join(args)})"
    return f"np.{ufunc.__name__}({', '.join(args)})"


class Maximum(_Binary):
    name, ufunc = "maximum", np.maximum

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        return _int_extremum("imax", self.ufunc, args, dtypes, out_dtype)

    def partials(self, inputs, output):
        from .math import ge, lt

        a, b = inputs
        return [ge(a, b), lt(a, b)]


class Minimum(_Binary):
    name, ufunc = "minimum", np.minimum

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        return _int_extremum("imin", self.ufunc, args, dtypes, out_dtype)

    def partials(self, inputs, output):
        from .math import gt, le

        a, b = inputs
        return [le(a, b), gt(a, b)]


class _Unary(ScalarOp):
    nin = 1


class Neg(_Unary):
    name, ufunc, kinds, python_operator = "neg", np.negative, "iuf", True

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        return f"(-{args[0]})"

    def partials(self, inputs, output):
        return [-1]


class Abs(_Unary):
    name, ufunc, python_operator = "abs", np.abs, True

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        if out_dtype == "bool" or _kind(out_dtype) == "u":
            return args[0]
        return f"np.abs({args[0]})"

    def partials(self, inputs, output):
        from .math import sgn

        return [sgn(inputs[0])]


class _Float(_Unary):
    float_valued = True


class _Transcendental(_Float):
    """A float op whose scalar form in numba calls ``fast_<name>`` (link/numba/fastmath.py).

    numba would call the C library per element, which no loop vectorizes; the
    fast functions are branch-free arithmetic, within a few ulp of NumPy.
    Array forms keep NumPy's ufunc.
    """

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        if not any(ndims):
            return f"fast_{self.name}({args[0]})"
        return super().numba_expr(args, dtypes, out_dtype, ndims)


class Exp(_Transcendental):
    name, ufunc = "exp", np.exp

    def partials(self, inputs, output):
        return [output]


class Log(_Transcendental):
    name, ufunc = "log", np.log

    def partials(self, inputs, output):
        return [1 / inputs[0]]


class Log1p(_Transcendental):
    name, ufunc = "log1p", np.log1p

    def partials(self, inputs, output):
        return [1 / (1 + inputs[0])]


class Expm1(_Transcendental):
    name, ufunc = "expm1", np.expm1

    def partials(self, inputs, output):
        return [output + 1]


class Sqrt(_Float):
    name, ufunc = "sqrt", np.sqrt

    def partials(self, inputs, output):
        return [0.5 / output]


class Tanh(_Transcendental):
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


class Sigmoid(_Transcendental):
    """1 / (1 + exp(-x)): exp overflows to inf for very negative x, giving 0."""

    name = "sigmoid"

    def impl(self, x):
        one = np.asarray(1, dtype=x.dtype)
        return one / (one + np.exp(-x))

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        if not any(ndims):
            return super().numba_expr(args, dtypes, out_dtype, ndims)
        one = lit(1.0, out_dtype)
        return f"({one} / ({one} + np.exp(-{args[0]})))"

    def partials(self, inputs, output):
        return [output * (1 - output)]


class Softplus(_Transcendental):
    """log(1 + exp(x)), computed as max(x, 0) + log1p(exp(-|x|)) so it never overflows."""

    name = "softplus"

    def impl(self, x):
        return np.maximum(x, np.asarray(0, x.dtype)) + np.log1p(np.exp(-np.abs(x)))

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        if not any(ndims):
            return super().numba_expr(args, dtypes, out_dtype, ndims)
        x = args[0]
        return f"(np.maximum({x}, {lit(0.0, out_dtype)}) + np.log1p(np.exp(-np.abs({x}))))"

    def partials(self, inputs, output):
        from .math import sigmoid

        return [sigmoid(inputs[0])]


class _PiecewiseConstant(_Unary):
    """Rounding-like ops: zero derivative almost everywhere, identity on integers."""

    def impl(self, x):
        return x if x.dtype.kind != "f" else self.ufunc(x)

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        return args[0] if _kind(out_dtype) != "f" else super().numba_expr(
            args, dtypes, out_dtype, ndims)

    def partials(self, inputs, output):
        return [0]


class Floor(_PiecewiseConstant):
    name, ufunc = "floor", np.floor


class Ceil(_PiecewiseConstant):
    name, ufunc = "ceil", np.ceil


class RoundHalfEven(_PiecewiseConstant):
    name, ufunc = "round", np.rint


class Sign(_PiecewiseConstant):
    name, ufunc, kinds = "sgn", np.sign, "iuf"

    def impl(self, x):
        return np.sign(x)

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        if _kind(out_dtype) == "u":     # numba's sign reads large unsigned values as negative
            return numba_cast(f"({args[0]} != 0)", out_dtype, ndims[0])
        return f"np.sign({args[0]})"


class _Boolean(ScalarOp):
    """Comparisons and logic: bool output, no derivative."""

    def signature(self, inputs):
        common = self.check_kind(result_dtype(*inputs), inputs)
        return [common] * len(inputs), "bool"

    def partials(self, inputs, output):
        return [None] * len(inputs)


class _Comparison(_Boolean, _Binary):
    python_operator = True


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
    """and/or/xor: logical on bools, bitwise on integers; no derivative."""

    kinds, python_operator = "biu", True

    def partials(self, inputs, output):
        return [None, None]


class And(_Bitwise):
    name, ufunc, symbol = "and", np.bitwise_and, "&"


class Or(_Bitwise):
    name, ufunc, symbol = "or", np.bitwise_or, "|"


class Xor(_Bitwise):
    name, ufunc, symbol = "xor", np.bitwise_xor, "^"


class Invert(_Unary):
    name, ufunc, kinds, python_operator = "invert", np.invert, "biu", True

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
    """``switch(cond, a, b)``: a where cond is true (nonzero), else b."""

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
        # `select` is the runtime's ufunc: numba compiles np.where in ~2 s, it in ~0.3 s.
        return f"select({c}, {a}, {b})"

    def partials(self, inputs, output):
        from .math import invert, neq

        # The condition selects by its non-zero-ness (a float dropout mask of 0.0 / 2.0
        # too), so the partials are that boolean and its negation, and the condition
        # itself gets no gradient (piecewise constant).
        c = inputs[0] if inputs[0].dtype == "bool" else neq(inputs[0], 0)
        return [None, c, invert(c)]


class Cast(ScalarOp):
    """Conversion to `dtype`: float to int truncates toward zero and integers
    wrap, as NumPy's ``astype``; NaN and out-of-range floats give an unspecified
    integer (they do in NumPy too)."""

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
        return numba_cast(args[0], self.dtype, ndims[0], src=dtypes[0])

    def partials(self, inputs, output):
        float_in = _kind(inputs[0].type.dtype) == "f"
        return [1 if float_in and _kind(self.dtype) == "f" else None]


class Identity(_Unary):
    name = "identity"

    def impl(self, x):
        return np.array(x, copy=True)

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        return f"{args[0]}.copy()" if ndims[0] else args[0]

    def partials(self, inputs, output):
        return [1]


class ZeroGrad(Identity):
    """The identity whose derivative is zero (a value the gradient treats as constant)."""

    name = "zero_grad"

    def impl(self, x):
        return np.array(x, copy=True)

    def partials(self, inputs, output):
        return [0]
