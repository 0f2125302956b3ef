"""SumTo's run-time unbroadcast (link/numba/reduce_runtime.py): `sum_to_call` and
`sum_to_new_call` called from jitted code, against NumPy (`sum_to_shape`), for
ranks 1 to 4, size-1 targets, C and strided inputs and the dtypes SumTo meets;
float sums over the innermost axis (partial sums by lanes) of hypothesis-drawn
lengths; the no-copy fast path; and the error for a target `g` is not a broadcast of.
"""
import itertools

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.link.numba.runtime import data_address, sum_to_call, sum_to_new_call
from bptt.tensor.shape import sum_to, sum_to_shape

DTYPES = ["float32", "float64", "int32", "int64", "bool"]


@numba.njit
def _same(g, dims):
    return sum_to_call(g, dims)


@numba.njit
def _new(g, dims):
    return sum_to_new_call(g, dims)


@numba.njit
def _same_address(g, dims):
    """(data address of the result, of `g`): equal when no copy was made."""
    return data_address(sum_to_call(g, dims)), data_address(g)


def _gradient(shape, dtype, view):
    """An array of `shape` and `dtype`: C-contiguous, reversed, or every other column."""
    values = (np.arange(np.prod(shape, dtype=int) * 2) % 7 - 3).astype(dtype)
    if view == "strided":
        return values.reshape(shape[:-1] + (2 * shape[-1],))[..., ::2]
    g = values[:np.prod(shape, dtype=int)].reshape(shape)
    return g[::-1] if view == "reversed" else g


def _targets(shape):
    """Every target of `shape`'s rank and of fewer dims: each size kept or made 1."""
    for lead in range(len(shape)):
        for ones in itertools.product([False, True], repeat=len(shape) - lead):
            yield lead, tuple(1 if one else s for s, one in zip(shape[lead:], ones))


def _want(g, target):
    return np.asarray(sum_to_shape(g, target), dtype=g.dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("view", ["C", "reversed", "strided"])
@pytest.mark.parametrize("shape", [(3,), (2, 3), (3, 1, 2), (2, 3, 1, 2)])
def test_sum_to_matches_numpy(shape, view, dtype):
    g = _gradient(shape, dtype, view)
    assert numba.typeof(g).layout == ("C" if view == "C" else "A")
    for lead, target in _targets(shape):
        got = (_new if lead else _same)(g, target)
        want = _want(g, target)
        assert got.shape == want.shape and got.dtype == want.dtype, (lead, target)
        np.testing.assert_array_equal(got, want, err_msg=str(target))


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3, 2)])
def test_sum_to_of_empty_gradients_is_zeros(shape):
    g = np.ones(shape)
    for lead, target in _targets(shape):
        np.testing.assert_array_equal((_new if lead else _same)(g, target), _want(g, target))


@pytest.mark.parametrize("view", ["C", "reversed", "strided"])
def test_sum_to_returns_its_input_when_it_has_the_target_shape(view):
    g = _gradient((2, 3, 4), "float64", view)
    got, mine = _same_address(g, g.shape)
    assert got == mine                            # no copy
    out = _same(g, g.shape)
    assert np.shares_memory(out, g) and out.strides == g.strides
    got, mine = _same_address(g, (2, 1, 4))       # a sum: a new array
    assert got != mine


@pytest.mark.parametrize("shape, target", [((2, 3), (2, 2)), ((3,), (2,)), ((2, 3), (4, 3)),
                                           ((1, 3), (2, 3)), ((2, 3, 4, 5), (2, 1, 5, 5))])
def test_sum_to_rejects_a_target_g_is_not_a_broadcast_of(shape, target):
    with pytest.raises(ValueError, match="sum_to: the gradient is not a broadcast of the input"):
        _same(np.zeros(shape), target)
    if len(shape) < 4:   # the same check with a leading axis summed away
        with pytest.raises(ValueError, match="sum_to: the gradient is not a broadcast of"):
            _new(np.zeros((2,) + shape), target)


@pytest.fixture(scope="module")
def graph():
    """One NUMBA function with a SumTo per dtype and rank (the generated calls)."""
    gs = [T.tensor(dt, shape=(None,) * nd, name=f"g{i}")
          for i, (dt, nd) in enumerate([("float32", 3), ("int32", 2), ("bool", 2), ("float64", 4),
                                        ("float64", 1)])]
    sizes = [T.iscalar(f"s{i}") for i in range(4)]
    outs = [sum_to(gs[0][::-1], sizes[:3]), sum_to(gs[1], sizes[:2]), sum_to(gs[2], sizes[:2]),
            sum_to(gs[3], sizes[:4]), sum_to(gs[3], sizes[1:4]), sum_to(gs[4], sizes[:1])]
    return {m: bptt.function(gs + sizes, outs, mode=m) for m in ("PY", "NUMBA")}


@pytest.mark.parametrize("target", [(2, 3, 4, 5), (1, 3, 1, 5), (2, 1, 4, 1), (1, 1, 1, 1)])
def test_generated_sum_to_matches_numpy_and_py(graph, target):
    g4 = _gradient((2, 3, 4, 5), "float64", "strided")
    gs = [_gradient((2, 3, 4), "float32", "C"), _gradient((2, 3), "int32", "C"),
          _gradient((2, 3), "bool", "reversed"), g4, _gradient((2,), "float64", "C")]
    t3, t2 = target[:3], target[:2]
    wants = [_want(gs[0][::-1], t3), _want(gs[1], t2), _want(gs[2], t2), _want(g4, target),
             _want(g4, target[1:]), _want(gs[4], target[:1])]
    for mode, f in graph.items():
        for got, want in zip(f(*gs, *target), wants, strict=True):
            assert got.shape == want.shape and got.dtype == want.dtype, mode
            np.testing.assert_array_equal(got, want, err_msg=mode)


@settings(deadline=None, max_examples=40)
@given(n=st.integers(0, 70), rows=st.integers(1, 3), dtype=st.sampled_from(["float32", "float64"]),
       view=st.sampled_from(["C", "reversed", "strided"]), lead=st.booleans(),
       seed=st.integers(0, 2 ** 16))
def test_sum_over_the_innermost_axis_matches_numpy(n, rows, dtype, view, lead, seed):
    """A float target whose innermost size is 1 (the softmax cotangent's row sums) is
    summed by partial sums over `reduce_runtime.LANES` lanes: rows longer, shorter and
    not a multiple of the lanes, with leading axes summed too or kept."""
    values = np.random.default_rng(seed).normal(size=(2, rows, 2 * n)).astype(dtype)
    g = values[..., ::2] if view == "strided" else values[..., :n]
    g = g[::-1] if view == "reversed" else g
    target = (rows, 1) if lead else (2, rows, 1)
    got = (_new if lead else _same)(g, target)
    want = _want(g, target)
    assert got.shape == want.shape and got.dtype == want.dtype
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(n, 1))
