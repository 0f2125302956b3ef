"""`TensorType` (dtype + static shape) and the variables that carry it.

Static shape entries are ints where known and None where not; an entry of 1
marks a dimension that broadcasts. Python scalars become *weak* constants:
like NumPy 2 (NEP 50), they adopt the dtype of the arrays they meet.
"""
from __future__ import annotations

import numpy as np

from ..config import config
from ..graph.basic import Constant, Variable
from ..graph.type import Type

_DTYPES = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
    "uint64", "float32", "float64",
}


def _check_dtype(dtype):
    if dtype is None:
        return config.floatX
    if dtype == "floatX":
        return config.floatX
    name = np.dtype(dtype).name
    if name not in _DTYPES:
        raise TypeError(f"unsupported dtype {name!r}; bptt supports {sorted(_DTYPES)}")
    return name


def _exact_cast(src, dst):
    """Whether every value of dtype `src` converts to `dst` exactly.

    NumPy calls int64 to float64 "safe", but float64 holds integers exactly
    only up to 2**53: such a conversion is checked on the values instead.
    """
    if not np.can_cast(src, dst, "safe"):
        return False
    if src.kind in "iu" and dst.kind in "fc":
        return np.iinfo(src).bits - (src.kind == "i") <= np.finfo(dst).nmant + 1
    return True


class TensorType(Type):
    """N-dimensional arrays of one dtype.

    Parameters
    ----------
    dtype : str or numpy dtype
    shape : tuple of int or None
        Static sizes; None where unknown. Its length is the number of dimensions.
    """

    def __init__(self, dtype, shape=()):
        self.dtype = _check_dtype(dtype)
        self.shape = tuple(None if s is None else int(s) for s in shape)
        if any(s is not None and s < 0 for s in self.shape):
            raise ValueError(f"static shape entries must be >= 0 or None, got {shape}")

    variable_class = None  # set below
    constant_class = None

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def broadcastable(self):
        return tuple(s == 1 for s in self.shape)

    @property
    def numpy_dtype(self):
        return np.dtype(self.dtype)

    def clone(self, dtype=None, shape=None):
        return TensorType(self.dtype if dtype is None else dtype,
                          self.shape if shape is None else shape)

    def __eq__(self, other):
        return type(other) is TensorType and self.dtype == other.dtype and self.shape == other.shape

    def __hash__(self):
        return hash((TensorType, self.dtype, self.shape))

    def __repr__(self):
        dims = ",".join("?" if s is None else str(s) for s in self.shape)
        return f"Tensor({self.dtype}, ({dims}{',' if self.ndim == 1 else ''}))"

    def is_super(self, other):
        """Whether every value of `other` is a value of this type."""
        return (isinstance(other, TensorType) and other.dtype == self.dtype
                and other.ndim == self.ndim
                and all(a is None or a == b for a, b in zip(self.shape, other.shape)))

    def filter(self, value, strict=False, allow_downcast=None, what=None,
               downcast_fix="compile with allow_input_downcast=True"):
        """Convert `value` to an array of this type or raise a TypeError that says why.

        A conversion that changes no value (a list of ints to float64, an int64
        array of small numbers to int32) is accepted; one that loses
        information needs `allow_downcast`, and so does any float value for an
        integer or boolean type (a float is never truncated silently, even
        when it happens to be integral). `downcast_fix` ends the message of a
        refused conversion: how the caller allows it.
        """
        what = what or "value"
        if isinstance(value, np.ndarray) and value.dtype.name == self.dtype:
            arr = value
        elif strict:
            raise TypeError(f"{what}: expected a numpy array of dtype {self.dtype}, "
                            f"got {type(value).__name__}"
                            f"{' of dtype ' + value.dtype.name if hasattr(value, 'dtype') else ''}")
        else:
            arr = self._convert(value, allow_downcast, what, downcast_fix)
        if arr.ndim != self.ndim:
            raise TypeError(f"{what}: expected {self.ndim} dimension(s) for {self}, got an "
                            f"array of shape {arr.shape} ({arr.ndim} dimension(s))")
        for i, (want, got) in enumerate(zip(self.shape, arr.shape)):
            if want is not None and want != got:
                raise ValueError(f"{what}: dimension {i} must have size {want} for {self}, "
                                 f"got shape {arr.shape}")
        return arr

    def _convert(self, value, allow_downcast, what, downcast_fix):
        try:
            src = np.asarray(value)
        except Exception as exc:
            raise TypeError(f"{what}: cannot convert {type(value).__name__} to an array") from exc
        if src.dtype == object or src.dtype.kind in "USVMm":   # objects, text, bytes, dates
            raise TypeError(f"{what}: cannot convert {type(value).__name__} "
                            f"{'' if src.dtype == object else f'({src.dtype}) '}"
                            f"to a {self.dtype} array")
        if src.dtype.kind == "c":     # no complex dtypes: never drop an imaginary part silently
            if not allow_downcast:
                raise TypeError(f"{what}: bptt has no complex dtypes; pass the real part "
                                f"(np.real(x)), or {downcast_fix}")
            src = src.real
        if src.dtype.name == self.dtype:
            return src
        if _exact_cast(src.dtype, self.numpy_dtype) or allow_downcast:
            return src.astype(self.dtype)
        with np.errstate(all="ignore"):
            arr = src.astype(self.dtype)
            same = np.array_equal(arr.astype(src.dtype), src, equal_nan=src.dtype.kind == "f")
        if same and src.dtype.kind != "f" or (same and self.numpy_dtype.kind == "f"):
            return arr
        raise TypeError(
            f"{what}: converting {src.dtype.name} to {self.dtype} would lose information; "
            f"pass a {self.dtype} array, or {downcast_fix}")

    def value_signature(self, value):
        return (value.dtype.name, value.shape, value.tobytes())

    def value_repr(self, value):
        if value.ndim == 0:
            return repr(value.item())
        if value.size <= 6:
            return f"Constant{{{value.tolist()}}}"
        return f"Constant{{{self.dtype} shape={value.shape}}}"

    def values_eq(self, a, b):
        return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


def tensor(dtype=None, shape=None, name=None, ndim=None):
    """A new input variable; `shape` entries None where unknown (or give only ndim)."""
    if shape is None:
        shape = (None,) * (ndim or 0)
    return TensorType(dtype, shape).make_variable(name)


def upgrade_to_float(dtype):
    """The float dtype an integer dtype becomes in float-valued ops (Theano's rule)."""
    dtype = np.dtype(dtype).name
    if dtype in ("float32", "float64"):
        return dtype
    if dtype in ("bool", "int8", "uint8", "int16", "uint16"):
        return "float32" if config.floatX == "float32" else "float64"
    return "float64"


def result_dtype(*variables):
    """The dtype NumPy 2 would give, with weak (Python-scalar) constants weak."""
    strong = [v.type.dtype for v in variables if not _is_weak(v)]
    weak = [v for v in variables if _is_weak(v)]
    if not strong:
        dts = [v.type.dtype for v in variables]
        return np.result_type(*dts).name
    kinds = [np.dtype(d).kind for d in strong]
    proxies = []
    for v in weak:
        k = np.dtype(v.type.dtype).kind
        proxies.append(0.0 if k == "f" else (False if k == "b" else 0))
    out = np.result_type(*strong, *proxies).name
    if any(isinstance(p, float) for p in proxies) and not any(k == "f" for k in kinds):
        out = config.floatX
    return out


def _is_weak(v):
    return isinstance(v, TensorConstant) and v.weak


class TensorVariable(Variable):
    """A symbolic array; supports NumPy-style operators and methods."""

    from ._operators import (  # noqa: E402  (mixin methods defined in one place)
        __abs__, __add__, __and__, __bool__, __floordiv__, __ge__, __getitem__, __gt__,
        __invert__, __iter__, __le__, __len__, __lt__, __matmul__, __mod__, __mul__,
        __neg__, __or__, __pos__, __pow__, __radd__, __rand__, __rfloordiv__, __rmatmul__,
        __rmod__, __rmul__, __ror__, __rpow__, __rsub__, __rtruediv__, __rxor__, __sub__,
        __truediv__, __xor__, T, all, any, argmax, argmin, astype, clip, dimshuffle, dot,
        eval, flatten, max, mean, min, ndim, nonzero, nonzero_values, prod, reshape, shape, size, std, sum,
        transpose, var, dtype, broadcastable, squeeze, cumsum, cumprod, copy, round,
    )
    __hash__ = Variable.__hash__
    # NumPy defers to the variable's reflected operators: ``array + x`` is ``x.__radd__``,
    # a tensor, not an object array holding one graph per element.
    __array_ufunc__ = None


class TensorConstant(TensorVariable, Constant):
    """A constant array. `weak` marks Python scalars, which adopt their partners' dtype."""

    def __init__(self, type, data, name=None, weak=False):
        Constant.__init__(self, type, data, name)
        self.weak = weak

    def clone(self, name=None):
        return TensorConstant(self.type, self.data, self.name if name is None else name, self.weak)

    def signature(self):
        return (self.type, self.type.value_signature(self.data), self.weak)


TensorType.variable_class = TensorVariable
TensorType.constant_class = TensorConstant


def constant(value, name=None, dtype=None, ndim=None):
    """A constant tensor; static shape is the value's shape."""
    if isinstance(value, TensorConstant) and dtype is None:
        return value
    arr = np.asarray(value, dtype=dtype)
    if dtype is None and arr.dtype == np.float64 and not isinstance(value, np.ndarray) \
            and not isinstance(value, np.generic):
        arr = arr.astype(config.floatX)
    if ndim is not None:
        if arr.ndim > ndim:
            raise ValueError(f"constant of shape {arr.shape} has more than {ndim} dimensions")
        arr = arr.reshape((1,) * (ndim - arr.ndim) + arr.shape)
    return TensorConstant(TensorType(arr.dtype, arr.shape), arr, name)


def as_tensor_variable(x, name=None, ndim=None, dtype=None):
    """Turn `x` (a variable, array, list or Python number) into a TensorVariable.

    Python ``int``/``float``/``bool`` become weak constants (int64, floatX,
    bool) that adopt the dtype of the arrays they are combined with.
    """
    if isinstance(x, TensorVariable):
        out = x
    elif isinstance(x, Variable):
        raise TypeError(f"expected a tensor, got {x.describe()}")
    elif isinstance(x, (bool, np.bool_)) and not isinstance(x, np.ndarray):
        out = TensorConstant(TensorType("bool", ()), np.asarray(bool(x)), name, weak=isinstance(x, bool))
    elif isinstance(x, int) and not isinstance(x, bool):
        out = TensorConstant(TensorType("int64", ()), _int_array(x), name, weak=True)
    elif isinstance(x, float):
        out = TensorConstant(TensorType(config.floatX, ()), np.asarray(x, config.floatX), name,
                             weak=True)
    elif isinstance(x, (list, tuple)) and any(isinstance(e, Variable) for e in _flat(x)):
        from .basic import stack

        out = stack([as_tensor_variable(e) for e in x])
    else:
        try:
            out = constant(x, name=name)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"cannot turn {type(x).__name__} into a tensor: {exc}") from exc
    if dtype is not None and out.type.dtype != _check_dtype(dtype):
        from .basic import cast

        out = cast(out, dtype)
    if ndim is not None and out.ndim != ndim:
        if out.ndim < ndim and all(s == 1 for s in out.type.shape):
            from .shape import shape_padleft

            out = shape_padleft(out, ndim - out.ndim)
        else:
            raise TypeError(f"expected a {ndim}-d tensor, got {out.type}")
    return out


def _int_array(x):
    if not -(2**63) <= x < 2**63:
        raise OverflowError(f"integer {x} does not fit in int64")
    return np.asarray(x, dtype="int64")


def _flat(xs):
    for e in xs:
        if isinstance(e, (list, tuple)):
            yield from _flat(e)
        else:
            yield e
