"""The chunk helpers of link/numba/chunk_runtime.py, called from jitted code, against NumPy.

One chunk of a sequence read as ``x_t @ W`` (`seq_product_call`), and a loop's summed
nit_sots (`chunk_stage_call` at every step, `chunk_product_call` and `chunk_row_sum_call` at
a chunk's last step, as a scan loop calls them): steps in memory order and reversed (the backward scan's
``x[::-1]``), steps one row stride apart (one gemm) or not (a product per step), staged
rows or a sequence's own rows, one batch row, a partial last chunk, float32 and float64;
hypothesis draws the sizes.
"""
import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bptt.link.numba.runtime import (alloc_empty, chunk_product_call, chunk_row_sum_call,
                                     chunk_stage_call, seq_product_call)


@numba.njit
def _chunk(out, x, lo, kk, w):
    return seq_product_call(out, x, lo, kk, w)


def _sequence(rng, t, b, n_in, dtype, layout):
    """A (t, b, n_in) sequence: C-contiguous, reversed, or a slice of wider batch rows
    (its steps are not b rows apart: no single gemm), reversed or not."""
    wide = b + 1 if layout.startswith("gap") else b
    x = rng.standard_normal((t, wide, n_in)).astype(dtype)[:, :b]
    return x[::-1] if layout.endswith("reversed") else x


@settings(max_examples=60, deadline=None)
@given(t=st.integers(1, 7), b=st.integers(1, 4), n_in=st.integers(1, 5), n=st.integers(1, 6),
       lo_frac=st.floats(0, 1), k=st.integers(1, 4),
       layout=st.sampled_from(["c", "reversed", "gap", "gap_reversed"]),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 2 ** 16))
def test_chunk_rows_are_the_products_of_the_steps(t, b, n_in, n, lo_frac, k, layout, dtype,
                                                  seed):
    rng = np.random.default_rng(seed)
    x = _sequence(rng, t, b, n_in, dtype, layout)
    w = rng.standard_normal((n_in, n)).astype(dtype)
    lo = min(int(lo_frac * t), t - 1)
    kk = min(k, t - lo)
    out = np.full((k, b, n), np.nan, dtype=dtype)
    _chunk(out, x, lo, kk, w)
    rev = x.strides[0] < 0
    tol = 1e-5 if dtype == "float32" else 1e-12
    for m in range(kk):
        row = out[kk - 1 - m] if rev else out[m]
        np.testing.assert_allclose(row, x[lo + m] @ w, rtol=tol, atol=tol,
                                   err_msg=f"step {lo + m} of the chunk")
    # rows past the chunk's steps are not written
    assert np.isnan(out[kk:]).all()


@pytest.mark.parametrize("layout", ["c", "reversed"])
def test_the_chunk_is_one_block_of_rows(layout):
    # 3 steps of 2 rows as one (6, 3) x (3, 4) product: equal to the stacked rows' product
    rng = np.random.default_rng(0)
    x = _sequence(rng, 5, 2, 3, "float64", layout)
    w = rng.standard_normal((3, 4))
    out = np.empty((3, 2, 4))
    _chunk(out, x, 1, 3, w)
    expected = x[1:4] @ w
    np.testing.assert_allclose(out[::-1] if layout == "reversed" else out, expected,
                               rtol=1e-13, atol=1e-13)


def test_no_step_writes_nothing():
    x = np.ones((3, 2, 2))
    out = np.full((2, 2, 5), 7.0)
    _chunk(out, x, 0, 0, np.ones((2, 5)))
    assert (out == 7.0).all()


@numba.njit
def _summed_loop(x, ys, k, home):
    """A scan loop's two sums of step rows y_t: sum_t x[t].T @ y_t and the column sums."""
    n = x.shape[0]
    rev = x.strides[0] < 0
    acc = np.zeros((x.shape[2], ys.shape[2]), ys.dtype)
    col = np.zeros(ys.shape[2], ys.dtype)
    stg = alloc_empty((k, ys.shape[1], ys.shape[2]), ys.dtype)
    for t in range(n):
        rows = ys if home else stg
        if not home and not chunk_stage_call(stg, ys[t], t, rev):
            return acc, col, False
        if t % k == k - 1 or t == n - 1:      # a chunk's last step, as the loop calls
            chunk_product_call(acc, x, rows, t, k, home, rev)
            chunk_row_sum_call(col, rows, t, k, home, rev)
    return acc, col, True


@settings(max_examples=60, deadline=None)
@given(t=st.integers(1, 7), b=st.integers(1, 4), n_in=st.integers(1, 5), h=st.integers(1, 5),
       k=st.integers(1, 8), home=st.booleans(),
       layout=st.sampled_from(["c", "reversed", "gap", "gap_reversed"]),
       dtype=st.sampled_from(["float32", "float64"]), seed=st.integers(0, 2 ** 16))
def test_summed_rows_are_the_sums_over_the_steps(t, b, n_in, h, k, home, layout, dtype, seed):
    rng = np.random.default_rng(seed)
    x = _sequence(rng, t, b, n_in, dtype, layout)
    ys = _sequence(rng, t, b, h, dtype, "c")
    k = min(k, t)
    acc, col, ok = _summed_loop(x, ys, k, home)
    assert ok
    tol = 1e-4 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(acc, np.einsum("tbi,tbh->ih", x, ys), rtol=tol, atol=tol)
    np.testing.assert_allclose(col, ys.sum(axis=(0, 1)), rtol=tol, atol=tol)


@numba.njit
def _stage(stg, row, t, rev):
    return chunk_stage_call(stg, row, t, rev)


@pytest.mark.parametrize("rev", [False, True])
def test_a_step_row_is_staged_at_its_chunk_position_in_memory_order(rev):
    stg = np.zeros((3, 2, 2))
    assert _stage(stg, np.full((2, 2), 5.0), 4, rev)       # step 4 is position 1 of 3
    np.testing.assert_array_equal(stg[1], 5.0)
    assert _stage(stg, np.full((2, 2), 7.0), 6, rev)       # position 0, or 2 when reversed
    np.testing.assert_array_equal(stg[2 if rev else 0], 7.0)


def test_a_row_of_another_shape_is_not_staged():
    stg = np.zeros((2, 2, 3))
    assert not _stage(stg, np.ones((3, 2)), 0, False)
    assert (stg == 0).all()
