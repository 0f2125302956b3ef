"""numba's type of an array argument, without importing ``numpy.ma``.

A compiled function's first call types each array argument once
(``numba.core.typing.typeof``; the dispatcher then remembers the type per
dtype, dimension count and layout). numba's rule starts with
``isinstance(val, np.ma.MaskedArray)`` to refuse masked arrays, and under
NumPy 2 the attribute ``np.ma`` imports ``numpy.ma`` on first use: 0.04-0.05
CPU s (its import builds signatures with ``inspect``, which compiles the
tokenizer's regular expressions), a tenth of the budget for loading a cached
function in a fresh process, spent on a check that cannot succeed for a plain
``ndarray`` (a masked array is an instance of a subclass).

`typeof_ndarray` replaces numba's rule for ``np.ndarray`` (registered on
numba's ``typeof_impl`` at import): an argument whose type is exactly
``np.ndarray`` gets the type numba's own rule gives it, computed the same way
without the check; anything else (subclasses, masked arrays) goes to numba's
rule unchanged. tests/link/test_argtypes.py compares the two over dtypes,
dimensions, layouts, read-only arrays and an unsupported dtype.
"""
from __future__ import annotations

import numpy as np
from numba.core import errors, types
from numba.core.typing.typeof import typeof_impl
from numba.np import numpy_support

_numba_typeof_ndarray = typeof_impl.dispatch(np.ndarray)


def typeof_ndarray(val, c):
    """numba's type for `val`: its own rule except for the masked-array check."""
    if type(val) is not np.ndarray:
        return _numba_typeof_ndarray(val, c)
    try:
        dtype = numpy_support.from_dtype(val.dtype)
    except errors.NumbaNotImplementedError:
        raise errors.NumbaValueError(f"Unsupported array dtype: {val.dtype}")
    return types.Array(dtype, val.ndim, numpy_support.map_layout(val),
                       readonly=not val.flags.writeable)


typeof_impl.register(np.ndarray)(typeof_ndarray)
