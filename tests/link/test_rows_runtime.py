"""Advanced indexing by one integer array on axis 0 (region_runtime.py's row helpers).

``x[idx]``, ``set_subtensor(x[idx], y)`` and ``inc_subtensor(x[idx], y)`` in NUMBA
mode (``take_rows_call``, ``write_rows_call``) against NumPy, over value dtypes
(float32, float64, int32, int8, bool), index dtypes (int8 to int64, uint8), ranks 1
to 4, index vectors and matrices, empty indices, negative and repeated indices
(inc accumulates, set keeps the last), values full, broadcast or scalar, and an
out-of-range index.
"""
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.link.numba.errors import reformat

# (value dtype, index dtype, rank, index ndim): every dtype and rank at least once
CASES = [("float64", "int64", 2, 1), ("float32", "int8", 1, 1), ("int32", "int16", 3, 1),
         ("bool", "int32", 2, 1), ("float64", "uint8", 3, 2), ("float32", "int64", 1, 2),
         ("int8", "int64", 4, 1)]
_FUNCTIONS = {}


def _function(dtype, idx_dtype, rank, k, y_kind):
    key = (dtype, idx_dtype, rank, k, y_kind)
    if key not in _FUNCTIONS:
        x = T.TensorType(dtype, (None,) * rank)("x")
        idx = T.TensorType(idx_dtype, (None,) * k)("idx")
        nd = {"full": k + rank - 1, "row": max(rank - 1, 1), "one": 0}[y_kind]
        y = T.TensorType(dtype, (None,) * nd)("y")
        _FUNCTIONS[key] = bptt.function(
            [x, idx, y], [x[idx], T.set_subtensor(x[idx], y), T.inc_subtensor(x[idx], y)],
            mode="NUMBA")
    return _FUNCTIONS[key]


def _values(shape, dtype, seed):
    return np.random.default_rng(seed).integers(-3, 4, size=shape).astype(dtype)


@pytest.mark.parametrize("dtype,idx_dtype,rank,k", CASES)
@given(st.lists(st.integers(-4, 3), max_size=6), st.sampled_from(["full", "row", "one"]))
def test_rows_indexing_matches_numpy(dtype, idx_dtype, rank, k, index, y_kind):
    x = _values((4, 3, 2, 2)[:rank], dtype, 0)
    index = [i % 4 for i in index] if idx_dtype.startswith("u") else index
    idx = np.array(index, idx_dtype)
    if k == 2:
        idx = idx[:len(idx) // 2 * 2].reshape(-1, 2)
    region = idx.shape + x.shape[1:]
    y = {"full": _values(region, dtype, 1), "row": _values(x.shape[1:] or (1,), dtype, 2),
         "one": _values((), dtype, 3)}[y_kind]
    got = _function(dtype, idx_dtype, rank, k, y_kind)(x, idx, y)
    want_set, want_inc = x.copy(), x.copy()
    want_set[idx] = np.broadcast_to(y, region)   # NumPy keeps the last of a repeated index
    np.add.at(want_inc, idx, np.broadcast_to(y, region))
    for g, w in zip(got, (x[idx], want_set, want_inc)):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_inc_accumulates_repeated_indices():
    x = np.zeros((3, 2))
    _, s, a = _function("float64", "int64", 2, 1, "full")(
        x, np.array([1, 1, -2, 0, 1]), np.arange(10.0).reshape(5, 2))
    np.testing.assert_array_equal(a, [[6, 7], [14, 18], [0, 0]])
    np.testing.assert_array_equal(s, [[6, 7], [8, 9], [0, 0]])


@pytest.mark.parametrize("bad", [3, -4])
def test_an_index_out_of_range_raises(bad):
    f = _function("float64", "int64", 2, 1, "row")
    with pytest.raises(IndexError, match="out of bounds for axis 0"):
        f(np.zeros((3, 2)), np.array([0, bad]), np.ones(2))


def test_values_of_another_shape_name_both_shapes():
    with pytest.raises(ValueError) as err:
        _function("float64", "int64", 2, 1, "full")(np.zeros((3, 2)), np.array([0, 1]),
                                                    np.ones((2, 3)))
    assert re.search(r"shape \(2, 3\) c.* broadcast to .* shape \(2, 2\)",
                     str(reformat(err.value)))
