"""``theano.tensor.basic``: broadcast-pattern helpers, ``diag`` and ``flatten``; ``roll``,
``nonzero``, ``flatnonzero``, ``nonzero_values`` and the special functions (``erf``,
``gammaln``, ``psi``...) as Theano kept them here."""
from __future__ import annotations

import functools

import bptt.tensor as _t
from bptt.tensor.extra_ops import roll as roll
from bptt.tensor.search import (flatnonzero as flatnonzero, nonzero as nonzero,
                                nonzero_values as nonzero_values)
from bptt.tensor.special import (erf as erf, erfc as erfc, erfcinv as erfcinv,
                                 erfinv as erfinv, gamma as gamma, gammaln as gammaln,
                                 psi as psi, tri_gamma as tri_gamma)


def patternbroadcast(x, broadcastable):
    """`x` with the dimensions marked True in `broadcastable` of static length 1
    (checked when the graph runs)."""
    x = _t.as_tensor_variable(x)
    if len(broadcastable) != x.ndim:
        raise ValueError(f"patternbroadcast: {len(broadcastable)} flags for a {x.ndim}-d tensor")
    if not any(b and s != 1 for b, s in zip(broadcastable, x.type.shape)):
        return x
    return _t.specify_shape(x, [1 if b else None for b in broadcastable])


def addbroadcast(x, *axes):
    """`x` with `axes` of static length 1."""
    x = _t.as_tensor_variable(x)
    return patternbroadcast(x, [i in axes or s == 1 for i, s in enumerate(x.type.shape)])


def unbroadcast(x, *axes):
    """`x` unchanged: bptt types broadcast where a length is 1 at run time too, so
    Theano's flag to forbid it has no counterpart."""
    return _t.as_tensor_variable(x)


def diag(x):
    """The diagonal of a matrix, or the diagonal matrix of a vector."""
    x = _t.as_tensor_variable(x)
    if x.ndim == 1:
        n = x.shape[0]
        return _t.eq(_t.arange(n).dimshuffle(0, "x"), _t.arange(n).dimshuffle("x", 0)) * x
    if x.ndim == 2:
        k = _t.minimum(x.shape[0], x.shape[1])
        i = _t.arange(k)
        return x[i, i]
    raise TypeError(f"diag: expected a vector or a matrix, got {x.type}")


def flatten(x, ndim=None, outdim=None):
    """`x` with its trailing dimensions collapsed into one, `ndim` dimensions in all
    (1 by default); `outdim` is Theano's older name for `ndim`."""
    if ndim is not None and outdim is not None:
        raise ValueError("flatten: give ndim or its older name outdim, not both")
    return _t.flatten(x, ndim or outdim or 1)


def _get_atol_rtol(a, b):
    import numpy as np

    narrow = any(np.asarray(v).dtype in (np.float16, np.float32) for v in (a, b))
    return (1e-5, 1e-5) if narrow else (1e-8, 1e-5)


def _allclose(a, b, rtol=None, atol=None):
    import numpy as np

    atol_, rtol_ = _get_atol_rtol(a, b)
    return np.allclose(a, b, rtol=rtol_ if rtol is None else rtol,
                       atol=atol_ if atol is None else atol)


# -- Theano's signatures and names over bptt's ops ----------------------------------
def _cast_to(x, dtype):
    return x if dtype is None else _t.cast(x, dtype)


def sum(input, axis=None, dtype=None, keepdims=False, acc_dtype=None):  # noqa: A001
    """Theano's ``sum``: `dtype` casts the result (`acc_dtype`: the sum is computed in
    it first; bptt accumulates float32 in float64 anyway)."""
    total = _t.sum(_cast_to(_t.as_tensor_variable(input), acc_dtype), axis, keepdims)
    return _cast_to(total, dtype)


def prod(input, axis=None, dtype=None, keepdims=False, acc_dtype=None,
         no_zeros_in_input=False):
    """Theano's ``prod``; `no_zeros_in_input` (a hint for its gradient) changes nothing."""
    out = _t.prod(_cast_to(_t.as_tensor_variable(input), acc_dtype), axis, keepdims)
    return _cast_to(out, dtype)


def mean(input, axis=None, dtype=None, op=False, keepdims=False, acc_dtype=None):
    """Theano's ``mean``: computed in `acc_dtype` when given (else as bptt's mean),
    the result cast to `dtype`."""
    x = _t.as_tensor_variable(input)
    return _cast_to(_t.mean(_cast_to(x, acc_dtype), axis, keepdims), dtype)


def round(a, mode=None):  # noqa: A001
    """Theano's ``round``: half to even by default (as NumPy), or half away from zero."""
    if mode in (None, "half_to_even"):
        return _t.round(a)
    if mode == "half_away_from_zero":
        return round_half_away_from_zero(a)
    raise ValueError(f"round: mode must be 'half_to_even' or 'half_away_from_zero', "
                     f"got {mode!r}")


def round_half_away_from_zero(a):
    """``sign(a) * floor(|a| + 0.5)``."""
    a = _t.as_tensor_variable(a)
    return _t.sgn(a) * _t.floor(abs(a) + 0.5)


round_half_to_even = _t.round


def iround(a, mode=None):
    """`round`, cast to int64."""
    return _t.cast(round(a, mode), "int64")


def largest(*args):
    """The elementwise maximum of all the arguments."""
    return functools.reduce(_t.maximum, args)


def smallest(*args):
    """The elementwise minimum of all the arguments."""
    return functools.reduce(_t.minimum, args)


def horizontal_stack(*args):
    """Concatenation along axis 1 (matrices) or 0 (vectors), as NumPy's hstack."""
    return _t.concatenate(args, axis=1 if _t.as_tensor_variable(args[0]).ndim > 1 else 0)


def vertical_stack(*args):
    """Concatenation of matrices along axis 0."""
    return _t.concatenate(args, axis=0)


def swapaxes(y, axis1, axis2):
    """`y` with two axes exchanged."""
    y = _t.as_tensor_variable(y)
    order = list(range(y.ndim))
    order[axis1], order[axis2] = order[axis2], order[axis1]
    return y.dimshuffle(order)


def _row_and_column_indices(n, m):
    """arange(n) as a column and arange(m) (n when None) as a row, which broadcast to n x m."""
    return _t.arange(n).dimshuffle(0, "x"), _t.arange(n if m is None else m).dimshuffle("x", 0)


def eye(n, m=None, k=0, dtype=None):
    """An n x m matrix with ones on diagonal k."""
    from bptt.config import config

    rows, cols = _row_and_column_indices(n, m)
    return _t.cast(_t.eq(rows + k, cols), dtype or config.floatX)


def identity_like(x):
    """The identity matrix of `x`'s shape and dtype."""
    x = _t.as_tensor_variable(x)
    return eye(x.shape[0], x.shape[1], dtype=x.dtype)


def tri(N, M=None, k=0, dtype=None):
    """Ones at and below diagonal k."""
    from bptt.config import config

    rows, cols = _row_and_column_indices(N, M)
    return _t.cast(_t.le(cols, rows + k), dtype or config.floatX)


def tril(m, k=0):
    """`m` with the entries above diagonal k zeroed."""
    m = _t.as_tensor_variable(m)
    return m * tri(m.shape[0], m.shape[1], k=k, dtype=m.dtype)


def triu(m, k=0):
    """`m` with the entries below diagonal k zeroed."""
    m = _t.as_tensor_variable(m)
    return m * (1 - tri(m.shape[0], m.shape[1], k=k - 1, dtype=m.dtype))


def isclose(a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False):
    """NumPy's ``isclose``: ``|a - b| <= atol + rtol |b|`` elementwise."""
    a, b = _t.as_tensor_variable(a), _t.as_tensor_variable(b)
    close = _t.le(abs(a - b), atol + rtol * abs(b))
    both_inf = _t.and_(_t.eq(a, b), _t.isinf(a))
    out = _t.or_(close, both_inf)
    return _t.or_(out, _t.and_(_t.isnan(a), _t.isnan(b))) if equal_nan else out


def allclose(a, b, rtol=1.0e-5, atol=1.0e-8, equal_nan=False):
    """Whether `isclose` holds everywhere (a boolean scalar)."""
    return _t.all(isclose(a, b, rtol, atol, equal_nan))


def stacklists(arg):
    """A tensor from nested lists of tensors of one shape (Theano's ``stacklists``)."""
    if isinstance(arg, (list, tuple)):
        return _t.stack([stacklists(a) for a in arg])
    return arg


inv = _t.reciprocal
abs_ = _t.abs
floor_div = _t.int_div
