"""``theano.tensor.basic``: broadcast-pattern helpers, ``diag`` and ``flatten``."""
from __future__ import annotations

import bptt.tensor as _t


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
