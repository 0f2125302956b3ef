"""Array arguments get numba's own type without ``numpy.ma`` (`bptt.link.numba.argtypes`)."""
import subprocess
import sys

import numpy as np
import pytest
from numba.core import errors
from numba.core.typing.typeof import Purpose, _TypeofContext

from bptt.link.numba import argtypes  # noqa: F401  (registers the rule)
from bptt.link.numba.argtypes import _numba_typeof_ndarray, typeof_ndarray
from numba.core.typing.typeof import typeof

CONTEXT = _TypeofContext(Purpose.argument)


def _arrays():
    base = np.arange(24.0).reshape(2, 3, 4)
    readonly = base.copy()
    readonly.flags.writeable = False
    yield from (base, base.astype(np.float32), base.astype(np.int8), base.astype(bool),
                base.astype(np.complex64), base[0], base[:, 1], base.T, base[..., ::2],
                np.asfortranarray(base), readonly, np.ones(()),
                np.empty((0, 5)), base.view(np.int64), np.array(["a"], dtype=object),
                np.zeros(2, "M8[s]"))


def test_a_plain_array_gets_the_type_numbas_own_rule_gives():
    for a in _arrays():
        assert typeof_ndarray(a, CONTEXT) == _numba_typeof_ndarray(a, CONTEXT)
        assert typeof(a) == _numba_typeof_ndarray(a, CONTEXT)


def test_unsupported_dtypes_and_masked_arrays_are_refused_as_numba_refuses_them():
    with pytest.raises(errors.NumbaValueError, match="Unsupported array dtype"):
        typeof(np.zeros(2, dtype="V3"))
    with pytest.raises(errors.NumbaTypeError, match="MaskedArray"):
        typeof(np.ma.masked_array([1.0, 2.0], mask=[0, 1]))


def test_typing_arguments_imports_no_numpy_ma():
    code = ("import sys, numpy as np, bptt.link.numba.runtime\n"
            "from numba.core.typing.typeof import typeof\n"
            "typeof(np.ones((2, 3))); typeof(np.ones(3, np.float32)[::2])\n"
            "print('numpy.ma' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"]
