"""nonzero, flatnonzero, nonzero_values, searchsorted, compress, unique, bartlett,
ravel_multi_index, unravel_index: NumPy's values for any shape (empty too), in both
modes; gradients of the selections by finite differences; the errors."""
import functools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.compat.theano.tensor as TT
import bptt.tensor as T
from tests.strategies import assert_same, check_infer_shape, shapes

# few distinct values: zeros, ties and NaNs are common
_FEW = st.sampled_from([0.0, 0.0, 1.0, -2.0, 1.5, np.nan])


def _few(shape):
    size = int(np.prod(shape))
    return st.lists(_FEW, min_size=size, max_size=size).map(
        lambda v: np.array(v, "float64").reshape(shape))


@functools.lru_cache(maxsize=None)
def _selections(mode, ndim):
    x, c = T.tensor("float64", (None,) * ndim, name="x"), T.dvector("c")
    outs = [*x.nonzero(), TT.basic.nonzero(x, return_matrix=True), TT.basic.flatnonzero(x),
            x.nonzero_values(), TT.extra_ops.compress(c, x)]
    outs += [T.compress(c, x, axis) for axis in range(-1, ndim)]
    return bptt.function([x, c], outs, mode=mode)


@given(st.data())
def test_nonzero_and_compress_are_numpy_s_for_every_shape(mode, data):
    ndim = data.draw(st.integers(1, 3))
    x = data.draw(shapes(ndim=ndim).flatmap(_few))
    # compress takes a condition no longer than the axis (NumPy raises past it)
    n = data.draw(st.integers(0, min(x.shape)))
    c = data.draw(_few((n,)))
    got = iter(_selections(mode, ndim)(x, c))
    for i, want in enumerate(np.nonzero(x)):
        assert_same(next(got), want.astype("int64"), what=f"nonzero[{i}]")
    assert_same(next(got), np.array(np.nonzero(x), "int64").reshape(ndim, -1), what="matrix")
    assert_same(next(got), np.flatnonzero(x).astype("int64"), what="flatnonzero")
    assert_same(next(got), x[x != 0], what="nonzero_values")
    assert_same(next(got), np.compress(c, x), what="compress")
    for axis in range(-1, ndim):
        assert_same(next(got), np.compress(c, x, axis), what=f"compress axis={axis}")


def _selection_cost(x, c):
    return [T.nonzero_values(x), T.compress(c, x, 1), T.compress(c, x)]


def test_selections_pass_gradients_to_the_selected_entries(mode):
    rng = np.random.default_rng(0)
    # no zeros: a finite difference moving one off zero would change the selection
    x = rng.uniform(0.5, 2, size=(3, 4)) * rng.choice([-1, 1], size=(3, 4))
    c = np.array([1.0, 0.0, 1.0, 1.0])
    bptt.verify_grad(lambda a: _selection_cost(a, T.constant(c)), [x], rng=rng, mode=mode)
    # the unselected entries get exactly zero
    x[0, 1] = x[2, 2] = x[1, 0] = 0.0
    xs = T.dmatrix("x")
    g = bptt.function([xs], bptt.grad(T.sum(xs.nonzero_values()), xs), mode=mode)(x)
    assert_same(g, (x != 0).astype("float64"))


def test_nonzero_of_a_scalar_names_the_fix():
    for fn in (T.nonzero, T.flatnonzero, T.nonzero_values):
        with pytest.raises(ValueError, match="at least one dimension.*dimshuffle"):
            fn(T.dscalar("s"))


@functools.lru_cache(maxsize=None)
def _searches(mode, vdim):
    x, v, s = T.dvector("x"), T.tensor("float64", (None,) * vdim, name="v"), T.lvector("s")
    outs = [T.searchsorted(x, v), T.searchsorted(x, v, side="right"),
            TT.extra_ops.searchsorted(x[s], v, sorter=T.argsort(x[s]))]
    return bptt.function([x, v, s], outs, mode=mode)


@given(st.data())
def test_searchsorted_is_numpy_s(mode, data):
    vdim = data.draw(st.integers(0, 2))
    x = np.sort(data.draw(shapes(ndim=1).flatmap(_few)))
    v = data.draw(shapes(ndim=vdim).flatmap(_few))
    perm = np.asarray(data.draw(st.permutations(range(len(x)))), "int64")
    left, right, by_sorter = _searches(mode, vdim)(x, v, perm)
    assert_same(left, np.asarray(np.searchsorted(x, v), "int64"), what="left")
    assert_same(right, np.asarray(np.searchsorted(x, v, "right"), "int64"), what="right")
    want = np.searchsorted(x[perm], v, sorter=np.argsort(x[perm], kind="stable"))
    assert_same(by_sorter, np.asarray(want, "int64"), what="sorter")


def test_a_sorter_out_of_range_is_an_error_when_run(mode):
    x, s = T.dvector("x"), T.lvector("s")
    f = bptt.function([x, s], T.searchsorted(x, 1.0, sorter=s), mode=mode)
    assert f(np.array([2.0, 0.0, 1.0]), np.array([1, 2, 0])) == 1
    for bad in ([0, 1, 3], [-1, 0, 1]):
        with pytest.raises(ValueError, match="sorter has an index out of range for x"):
            f(np.array([2.0, 0.0, 1.0]), np.array(bad))


def test_searchsorted_errors_name_what_was_expected():
    x = T.dvector("x")
    with pytest.raises(ValueError, match="side must be 'left' or 'right', got 'middle'"):
        T.searchsorted(x, 1.0, side="middle")
    with pytest.raises(TypeError, match="x must be a vector.*got.*flatten"):
        T.searchsorted(T.dmatrix("m"), 1.0)
    with pytest.raises(TypeError, match="sorter must be a vector of integer"):
        T.searchsorted(x, 1.0, sorter=T.dvector("s"))


def test_searchsorted_shape_is_v_s_without_running_it():
    x, v = T.dvector("x"), T.dmatrix("v")
    check_infer_shape([T.searchsorted(x, v)], [x, v], [np.arange(3.0), np.ones((2, 5))], "PY")


@functools.lru_cache(maxsize=None)
def _uniques(mode, dtype, ndim):
    x = T.tensor(dtype, (None,) * ndim, name="x")
    outs = [T.unique(x), *T.unique(x, True, True, True), *TT.extra_ops.unique(x, False, True)]
    return bptt.function([x], outs, mode=mode)


@given(st.data())
def test_unique_is_numpy_s_with_ties_and_nans(mode, data):
    dtype, ndim = data.draw(st.sampled_from(["float64", "int32"])), data.draw(st.integers(0, 2))
    x = data.draw(shapes(ndim=ndim).flatmap(_few))
    x = x if dtype == "float64" else np.nan_to_num(x).astype(dtype)
    got = _uniques(mode, dtype, ndim)(x)
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    assert_same(got[0], want[0], what="unique")
    for g, w, what in zip(got[1:5], want, ("values", "index", "inverse", "counts")):
        assert_same(g, np.asarray(w).astype(g.dtype).reshape(-1), what=what)
    assert_same(got[6], want[2].astype("int64").reshape(-1), what="inverse alone")
    assert_same(got[5], want[0], what="values with the inverse")


def test_unique_along_an_axis_is_a_clear_error():
    with pytest.raises(NotImplementedError, match="only axis=None.*got axis=0"):
        T.unique(T.dmatrix("x"), axis=0)


def test_bartlett_ravel_and_unravel_are_numpy_s(mode):
    m, i, j = T.lscalar("m"), T.lvector("i"), T.lvector("j")
    outs = [TT.extra_ops.bartlett(m), TT.extra_ops.ravel_multi_index((i, j), (3, 4)),
            T.ravel_multi_index((i, j), (5, 4), mode="wrap", order="F"),
            T.ravel_multi_index((i, j), [3, 2], mode="clip"),
            *T.unravel_index(i, (3, 4)), *TT.extra_ops.unravel_index(j, (2, 3, 2), order="F")]
    f = bptt.function([m, i, j], outs, mode=mode)
    iv, jv = np.array([0, 2, 1, 2], "int64"), np.array([3, 0, 2, 1], "int64")
    for mv in (-1, 0, 1, 2, 5):
        got = f(mv, iv, jv)
        assert_same(got[0], np.bartlett(mv), what=f"bartlett({mv})")
    want = [np.ravel_multi_index((iv, jv), (3, 4)),
            np.ravel_multi_index((iv, jv), (5, 4), mode="wrap", order="F"),
            np.ravel_multi_index((iv, jv), (3, 2), mode="clip"),
            *np.unravel_index(iv, (3, 4)), *np.unravel_index(jv, (2, 3, 2), order="F")]
    for k, (g, w) in enumerate(zip(got[1:], want)):
        assert_same(g, w.astype("int64"), what=f"output {k + 1}")


def test_index_conversions_check_the_range_when_run(mode):
    i, j = T.lvector("i"), T.lvector("j")
    ravel = bptt.function([i, j], T.ravel_multi_index((i, j), (3, 4)), mode=mode)
    unravel = bptt.function([i], T.unravel_index(i, (3, 4)), mode=mode)
    with pytest.raises(Exception, match="out of range of its dim.*mode='wrap'"):
        ravel(np.array([0, 3]), np.array([0, 0]))
    with pytest.raises(Exception, match="an index is out of range"):
        unravel(np.array([12]))
    with pytest.raises(ValueError, match="mode must be 'raise', 'wrap' or 'clip'"):
        T.ravel_multi_index((i, j), (3, 4), mode="bounce")
    with pytest.raises(TypeError, match="multi_index must be a tuple of 2 integer arrays"):
        T.ravel_multi_index((i,), (3, 4))
    with pytest.raises(TypeError, match="M must be an int"):
        T.bartlett(T.dscalar("m"))
