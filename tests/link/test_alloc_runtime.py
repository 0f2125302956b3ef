"""Copies and views written into the caller (link/numba/alloc_runtime.py) against NumPy.

`copy_into`, `c_copy`, `c_contiguous`, `strided_view`, `same_view` and `fits_rows` over arrays
of every layout generated code meets (C, transposed, row and column slices, reversed),
with hypothesis choosing sizes including 0 and 1; one compiled function each. Also the
integer `imin` / `imax`, and the region writes (`region_values` with region_runtime.py's
`copy_into_call` and `add_into_call`, `add_into` of a scalar).
"""
import re

import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bptt.link.numba.errors import reformat
from bptt.link.numba.runtime import (add_into, add_into_call, c_contiguous, c_copy, copy_into,
                                     copy_into_call, data_address, fits_rows, imax, imin,
                                     is_c_contiguous, region_values, same_view, strided_view)

VIEWS = ["C", "T", "rows", "cols", "neg"]


def _view(x, kind):
    if kind == "T":
        return x.T.copy().T
    if kind == "rows":
        big = np.zeros((2 * x.shape[0], x.shape[1]))
        big[::2] = x
        return big[::2]
    if kind == "cols":
        big = np.zeros((x.shape[0], 2 * x.shape[1]))
        big[:, ::2] = x
        return big[:, ::2]
    if kind == "neg":
        return x[::-1].copy()[::-1]
    return x.copy()


@numba.njit
def _copies(src, dst):
    """Every argument typed 'A' (as generated code's views are): one compile."""
    src = strided_view(src, src.shape, src.strides)
    dst = strided_view(dst, dst.shape, dst.strides)
    copy_into(dst, src)
    t = strided_view(src, (src.shape[1], src.shape[0]), (src.strides[1], src.strides[0]))
    return c_copy(src), c_contiguous(src), t, c_contiguous(t)


@given(st.integers(0, 3), st.integers(0, 3), st.sampled_from(VIEWS), st.sampled_from(VIEWS))
def test_copies_and_views_match_numpy_for_every_layout(rows, cols, src_kind, dst_kind):
    x = np.arange(rows * cols, dtype=float).reshape(rows, cols) + 1
    src, dst = _view(x, src_kind), _view(np.zeros((rows, cols)), dst_kind)
    copied, contiguous, t, t_contiguous = _copies(src, dst)
    np.testing.assert_array_equal(dst, x)                     # written through its strides
    for got, want in ((copied, x), (contiguous, x), (t, x.T), (t_contiguous, x.T)):
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    assert copied.flags.c_contiguous and not np.shares_memory(copied, src)
    assert contiguous.flags.c_contiguous and t_contiguous.flags.c_contiguous
    # c_contiguous copies only what is not C-contiguous already
    assert np.shares_memory(contiguous, src) == (src.flags.c_contiguous and x.size > 0)
    assert x.size == 0 or np.shares_memory(t, src)           # a view, not a copy


@numba.njit
def _flags(x):
    x = strided_view(x, x.shape, x.strides)   # typed 'A': checked at run time
    return is_c_contiguous(x), is_c_contiguous(x[:0]), data_address(x)


@given(st.integers(0, 3), st.integers(0, 3), st.sampled_from(VIEWS))
def test_is_c_contiguous_and_data_address_match_numpy(rows, cols, kind):
    x = _view(np.arange(rows * cols, dtype=float).reshape(rows, cols), kind)
    contiguous, empty_contiguous, address = _flags(x)
    assert contiguous == x.flags.c_contiguous and empty_contiguous
    assert address == x.ctypes.data


def test_copy_into_refuses_another_shape():
    with pytest.raises(ValueError, match="differ in shape"):
        _copies(np.ones((2, 3)), np.zeros((3, 2)))


@numba.njit
def _copy_strided(buf, strides):
    dst = c_copy(strided_view(buf, (2, 2), (16, 8)))
    copy_into(strided_view(dst, (2, 2), (16, 8)), strided_view(buf, (2, 2), strides))
    return dst


def test_copy_into_refuses_strides_that_are_not_whole_elements():
    # views are copied by element offsets: a stride between elements cannot be one
    buf = np.arange(8.0)
    np.testing.assert_array_equal(_copy_strided(buf, (32, 8)), [[0, 1], [4, 5]])
    with pytest.raises(ValueError, match="not whole elements"):
        _copy_strided(buf, (24, 12))


@numba.njit
def _same_views(a, b):
    return same_view(a, b), same_view(a, strided_view(b, b.shape, b.strides))


@given(st.integers(1, 3), st.integers(1, 3), st.sampled_from(["same", "copy", "row", "T",
                                                               "shifted", "reshaped"]))
def test_same_view_is_one_address_shape_and_strides(rows, cols, other):
    x = np.arange(2 * rows * cols, dtype=float).reshape(2 * rows, cols)[:rows]
    y = {"same": x[:], "copy": x.copy(), "row": x[:1], "T": x.T, "shifted": x[1:] if rows > 1
         else x[:, 1:], "reshaped": x.reshape(1, rows * cols)}[other]
    want = (x.ctypes.data == y.ctypes.data and x.shape == y.shape and x.strides == y.strides)
    assert _same_views(x, y) == (want, want)


@numba.njit
def _same_view_of_ranks(a, b):
    return same_view(a, b)


def test_same_view_of_arrays_of_two_ranks_is_false():
    x = np.zeros(4)
    assert not _same_view_of_ranks(x.reshape(4, 1), x)


@numba.njit
def _fits(buf, row):
    return fits_rows(buf, row), fits_rows(strided_view(buf, buf.shape, buf.strides), row)


@given(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)),
       st.tuples(st.integers(0, 3), st.integers(0, 3)))
def test_fits_rows_compares_a_row_with_the_rows_of_a_buffer(buf_shape, row_shape):
    want = buf_shape[1:] == row_shape
    assert _fits(np.zeros(buf_shape), np.zeros(row_shape)) == (want, want)


@numba.njit
def _fits_ranks(buf, row):
    return fits_rows(buf, row)


def test_fits_rows_of_another_rank_is_false():
    assert not _fits_ranks(np.zeros((2, 3, 4)), np.zeros(12))
    assert _fits_ranks(np.zeros(3), 1.5)    # a 0-d value fits a vector's rows


@numba.njit
def _int_bounds(a, b):
    return imin(a, b), imax(a, b), imin(a, np.int32(b))   # mixed widths: intp


@given(st.integers(-2 ** 40, 2 ** 40), st.integers(-2 ** 31, 2 ** 31 - 1))
def test_imin_imax_are_min_and_max_of_integers(a, b):
    assert _int_bounds(a, b) == (min(a, b), max(a, b), min(a, b))


@numba.njit
def _region_writes(dst, y):
    """`dst` viewed 'A' (a region of generated code): its values set to y, then y added twice."""
    d = strided_view(dst, dst.shape, dst.strides)
    copy_into_call(d, region_values(d, y))
    add_into_call(d, region_values(d, y))
    add_into_call(d, region_values(d, y))


@given(st.integers(0, 3), st.integers(0, 3), st.sampled_from(VIEWS),
       st.sampled_from(["full", "row", "col", "vector", "one"]))
def test_region_writes_broadcast_values_into_every_layout(rows, cols, dst_kind, y_kind):
    x = np.arange(rows * cols, dtype=float).reshape(rows, cols) + 1
    y = {"full": x, "row": x[:1], "col": x[:, :1], "vector": x[0] if rows else np.ones(cols),
         "one": np.full((1, 1), 2.5)}[y_kind]
    dst = _view(np.zeros((rows, cols)), dst_kind)
    if y.size == 0 and y.shape[-1:] != (cols,):
        return   # a (0, 1) column or (0, cols) row of an empty x broadcast only to size 0
    _region_writes(dst, y)
    np.testing.assert_array_equal(dst, 3 * np.broadcast_to(y, (rows, cols)))


@numba.njit
def _add_scalar(dst, s):
    add_into(strided_view(dst, dst.shape, dst.strides), s)


def test_add_into_adds_a_scalar_in_the_array_dtype():
    for dtype in ("int32", "uint8", "float32", "bool"):
        x = (np.arange(6).reshape(2, 3) % 2).astype(dtype)
        want = x[:, ::-1].copy()
        want += np.ones((), dtype)
        got = x[:, ::-1]
        _add_scalar(got, np.ones((), dtype)[()])
        np.testing.assert_array_equal(got, want)


def test_region_values_names_both_shapes():
    with pytest.raises(ValueError) as err:
        _region_writes(np.zeros((2, 3)), np.ones((2, 2)))
    assert re.match(r"shape mismatch: values of shape \(2, 2\) cannot be broadcast to the "
                    r"indexed region of shape \(2, 3\); give values", str(reformat(err.value)))
