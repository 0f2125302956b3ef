"""The BLAS runtime of generated code (`bptt.link.numba.blas`) against NumPy.

Operands take every layout generated code hands over: C-contiguous,
transposed (F-contiguous), row and column slices, a sub-block (rows longer
than the matrix), reversed rows (negative stride: the copy fallback), with
empty and one-row shapes, in float32 and float64, through both strategies
(loops for small products, BLAS for the rest).
"""
import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bptt.link.numba import blas
from tests.strategies import assert_same

LAYOUTS = ["C", "T", "rows", "cols", "sub", "neg"]
DTYPES = ["float64", "float32"]


def laid_out(value, layout):
    """A view with the values of `value` (2-d) in `layout`."""
    r, c = value.shape
    if layout == "C":
        return value.copy()
    if layout == "T":
        return value.T.copy().T
    if layout == "rows":
        big = np.zeros((2 * r, c), value.dtype)
        big[::2] = value
        return big[::2]
    if layout == "cols":
        big = np.zeros((r, 2 * c), value.dtype)
        big[:, ::2] = value
        return big[:, ::2]
    if layout == "sub":
        big = np.zeros((r + 1, c + 3), value.dtype)
        big[1:, 2:-1] = value
        return big[1:, 2:-1]
    return value[::-1].copy()[::-1]          # "neg": negative row stride


def _scale(dtype, k):
    return 1.0 + k


@numba.njit
def as_any(x):
    """`x` itself, typed with layout 'A' as generated code's views are: one
    compiled signature of the runtime then serves every layout."""
    return np.lib.stride_tricks.as_strided(x, shape=(x.shape[0], x.shape[1]),
                                           strides=(x.strides[0], x.strides[1]))


@given(m=st.integers(0, 11), k=st.integers(0, 11), n=st.integers(0, 11),
       la=st.sampled_from(LAYOUTS), lb=st.sampled_from(LAYOUTS), dtype=st.sampled_from(DTYPES),
       seed=st.integers(0, 2 ** 16))
def test_dot_mm_every_layout(m, k, n, la, lb, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    x, y = laid_out(a, la), laid_out(b, lb)
    out = blas.dot_mm(as_any(x), as_any(y))
    assert out.flags.c_contiguous
    assert_same(out, a @ b, scale=_scale(dtype, k))
    assert_same(x, a) and assert_same(y, b)             # operands untouched


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("la,lb", [("C", "C"), ("T", "T"), ("sub", "neg")])
def test_dot_mm_blas_sizes(la, lb, dtype):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((33, 70)).astype(dtype)
    b = rng.standard_normal((70, 45)).astype(dtype)
    assert 33 * 70 * 45 > blas.SMALL
    assert_same(blas.dot_mm(laid_out(a, la), laid_out(b, lb)), a @ b, scale=70)


@given(m=st.integers(0, 11), k=st.integers(0, 11), n=st.integers(0, 11),
       la=st.sampled_from(LAYOUTS), lb=st.sampled_from(LAYOUTS), lc=st.sampled_from(LAYOUTS),
       beta=st.sampled_from([0.0, 1.0, -0.5]), seed=st.integers(0, 2 ** 16))
def test_gemm_into_accumulates_in_place(m, k, n, la, lb, lc, beta, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    c0 = rng.standard_normal((m, n))
    c = laid_out(c0, lc)
    got = blas.gemm_into(2.0, as_any(laid_out(a, la)), as_any(laid_out(b, lb)), beta,
                         as_any(c))
    assert got.size == 0 or np.shares_memory(got, c)
    assert_same(c, beta * c0 + 2.0 * (a @ b), scale=_scale("float64", k))


def test_gemm_into_beta_zero_never_reads_c():
    a, b = np.ones((2, 3)), np.ones((3, 4))
    c = np.full((2, 4), np.nan)
    blas.gemm_into(1.0, a, b, 0.0, c)
    assert_same(c, np.full((2, 4), 3.0))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,k,n", [(1, 30, 40), (3, 40, 12), (3, 40, 11), (8, 17, 100),
                                   (5, 20, 33)])
@pytest.mark.parametrize("la,lb,lc", [("C", "C", "C"), ("C", "T", "C"), ("T", "neg", "sub"),
                                      ("sub", "cols", "rows"), ("rows", "T", "T")])
def test_short_wide_results_through_blas(m, k, n, la, lb, lc, dtype):
    # a result with blas.WIDE times more columns than rows is computed column-major and
    # copied in transposed (float32, beta 0): values and c's other memory as before
    assert m * k * n > blas.SMALL
    rng = np.random.default_rng(m * n + k)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    c = laid_out(np.full((m, n), np.nan, dtype), lc)
    base = c.base if c.base is not None else c
    before = base.copy()
    got = blas.gemm_into(1.5, as_any(laid_out(a, la)), as_any(laid_out(b, lb)), 0.0, as_any(c))
    assert np.shares_memory(got, c)
    assert_same(c, 1.5 * (a @ b), scale=_scale(dtype, k))
    pad = ~np.isnan(before)                     # the memory of base beside c
    assert (base[pad] == before[pad]).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_vector_and_vector_products(dtype):
    rng = np.random.default_rng(2)
    for m, k in [(0, 3), (3, 0), (1, 1), (5, 7), (40, 30)]:
        a = rng.standard_normal((m, k)).astype(dtype)
        v, w = rng.standard_normal(k).astype(dtype), rng.standard_normal(m).astype(dtype)
        for la in ("C", "T", "sub"):
            x = as_any(laid_out(a, la))
            assert_same(blas.dot_mv(x, v[::-1][::-1]), a @ v, scale=1 + k)
            assert_same(blas.dot_vm(w, x), w @ a, scale=1 + m)
        # (numba returns the float32 scalar as a Python float: compare values)
        assert_same(np.asarray(blas.dot_vv(v, v), dtype), np.asarray(v @ v), scale=1 + k)


def test_misaligned_shapes_raise():
    with pytest.raises(ValueError, match="not aligned"):
        blas.gemm_into(1.0, np.ones((2, 3)), np.ones((4, 2)), 0.0, np.ones((2, 2)))
    with pytest.raises(ValueError, match="not aligned"):
        blas.dot_vv(np.ones(2), np.ones(3))


@pytest.mark.parametrize("dtype", DTYPES)
def test_gemm_fresh_broadcasts_z_and_keeps_numpy_values(dtype):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 6)).astype(dtype)
    y = rng.standard_normal((6, 5)).astype(dtype)
    one, half = np.asarray(1, dtype)[()], np.asarray(0.5, dtype)[()]
    # (the lowering hands a 1-d z over as a row, a scalar as a 1 x 1 array)
    # ... and z of any strides (read through its flat view: one layout-'A' compile)
    def draw(*shape):
        return rng.standard_normal(shape).astype(dtype)

    for z in [draw(4, 5), draw(1, 5), draw(4, 1), draw(8, 5)[::-2], draw(3, 5)[::-3],
              draw(8, 1)[::-2]]:
        assert_same(blas.gemm_fresh(z, half, x, y, one), z + half * (x @ y), scale=6)
    # the product broadcasts against a taller z: NumPy's value, not an error
    z = rng.standard_normal((3, 5)).astype(dtype)
    x1 = x[:1]
    assert_same(blas.gemm_fresh(z, one, x1, y, one), z + x1 @ y, scale=6)
    # alpha == 0 still propagates nan from the operands, as NumPy does
    xn = x.copy()
    xn[0, 0] = np.nan
    zero = np.asarray(0, dtype)[()]
    assert_same(blas.gemm_fresh(z[:1], zero, xn, y, one), z[:1] + zero * (xn @ y))
    # ... and with a scalar z
    two = np.asarray(2, dtype)[()]
    assert_same(blas.gemm_fresh(np.full((1, 1), two), zero, xn, y, half),
                half * two + zero * (xn @ y))
