"""Elementwise loops read and write every array through `elem_view` (a flat view with
element strides): views of any strides, broadcast size-1 dimensions, empty arrays and
inputs whose strides are not whole elements give NumPy's values. NUMBA only: PY mode has
no loop."""
import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
from bptt.link.numba.elemwise_runtime import elem_view

T = bptt.tensor


@numba.njit
def _view(x):
    flat, offset, strides = elem_view(x)
    return flat.copy(), offset, strides


def test_elem_view_starts_at_the_lowest_address_with_element_strides():
    x = np.arange(24.0).reshape(4, 6)
    flat, offset, strides = _view(x[::-1, 1::2])
    assert strides == (-6, 2) and offset == 18 and flat[0] == 1.0 and flat[offset] == 19.0
    assert _view(x[:1, ::-1])[2] == (0, -1)                 # size 1: stride 0
    assert len(_view(x[:0])[0]) == 0
    rec = np.zeros(3, dtype=[("v", "f8"), ("c", "i1")])
    with pytest.raises(ValueError, match="not whole elements"):
        _view(rec["v"])    # the function wrapper copies such inputs (linker.call_glue)


@pytest.fixture(scope="module")
def fused():
    x, y, b = T.matrix("x"), T.matrix("y"), T.vector("b")
    return bptt.function([x, y, b], x * y + b, mode="NUMBA")


_steps = st.sampled_from([1, 2, -1, -2])


@given(st.integers(0, 4), st.integers(0, 5), _steps, _steps, _steps, st.booleans(),
       st.booleans(), st.booleans(), st.integers(0, 3))
def test_values_equal_numpy_for_views_of_any_strides(fused, rows, cols, s0, s1, s2, row1, col1,
                                                     field, seed):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(2 * rows + 1, 2 * cols + 1))
    x = base[::s0, ::s1][:rows, :cols]
    y = rng.normal(size=(1 if row1 else rows, 1 if col1 else cols))
    b = rng.normal(size=2 * cols + 1)[::s2][:cols]
    if field:    # strides of 9 bytes: not whole float64 elements (the wrapper copies it)
        rec = np.zeros((rows, cols), dtype=[("v", "f8"), ("c", "i1")])
        rec["v"] = x
        x = rec["v"]
    np.testing.assert_array_equal(fused(x, y, b), x * y + b)
