"""Lowerings written into the graph function to save numba compilations.

Allocation intrinsics (link/numba/alloc_runtime.py), elementwise loops that
read an input at plain indices when nothing can broadcast against it (the
same variable twice, a static size), inline Alloc/MakeVector/Reshape/Join
along axis 0, and the scan ring-buffer rotation. Oracles: NumPy, and PY
mode on the same graph, with hypothesis choosing run-time sizes of 0 and 1.
"""
import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.link.numba.linker import with_kernel_modules
from bptt.link.numba.runtime import alloc_empty, alloc_full, alloc_zeros, c_contiguous
from bptt.scan.op import Scan
from bptt.tensor.shape import sum_to, sum_to_shape

_sizes = st.integers(0, 3)


@numba.njit
def _allocate(n, m):
    return (alloc_empty((n, m), np.float32), alloc_zeros((n, m, 2), np.int16),
            alloc_full(n, 2.75, np.int8), alloc_full((m, n), 1, np.bool_),
            alloc_full((n,), -1.5, np.float64))


@given(_sizes, _sizes)
def test_allocation_intrinsics_match_numpy(n, m):
    empty, zeros, ints, flags, floats = _allocate(n, m)
    assert empty.shape == (n, m) and empty.dtype == np.float32 and empty.flags.c_contiguous
    np.testing.assert_array_equal(zeros, np.zeros((n, m, 2), np.int16))
    assert zeros.dtype == np.int16
    for got, want in ((ints, np.full(n, 2.75).astype(np.int8)), (flags, np.full((m, n), True)),
                      (floats, np.full(n, -1.5))):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_allocation_intrinsics_reject_negative_sizes():
    with pytest.raises(ValueError, match="negative"):
        _allocate(-1, 2)


@numba.njit
def _contiguous(x):
    return c_contiguous(x), c_contiguous(x[::-1, ::2])


def test_c_contiguous_returns_a_c_array_its_argument_when_possible():
    x = np.arange(12.0).reshape(3, 4)
    same, copy = _contiguous(x)
    assert same.ctypes.data == x.ctypes.data
    assert copy.flags.c_contiguous and copy.ctypes.data != x.ctypes.data
    np.testing.assert_array_equal(copy, x[::-1, ::2])


@pytest.fixture(scope="module")
def elementwise():
    """One compiled graph per mode: the same variable twice, and a static size 3."""
    x, y = T.matrix("x"), T.matrix("y")
    s = T.tensor("float64", (None, 3))
    out = [x * x + y, (s * x) - s * s]
    return {m: bptt.function([x, y, s], out, mode=m) for m in ("PY", "NUMBA")}


@given(st.tuples(_sizes, _sizes), st.tuples(_sizes, _sizes), st.integers(0, 2), st.integers(0, 4))
def test_elementwise_loops_broadcast_run_time_size_1_dims(elementwise, xs, ys, srows, seed):
    rng = np.random.default_rng(seed)
    x, y, s = rng.normal(size=xs), rng.normal(size=ys), rng.normal(size=(srows, 3))
    try:
        want = [x * x + y, s * x - s * s]
    except ValueError:
        for f in elementwise.values():
            with pytest.raises(ValueError, match="broadcast"):
                f(x, y, s)
        return
    for mode, f in elementwise.items():
        got = f(x, y, s)
        for g, w in zip(got, want):
            assert g.shape == w.shape, mode
            np.testing.assert_allclose(g, w, rtol=1e-12, err_msg=mode)


def test_elementwise_source_reads_plain_indices_where_nothing_broadcasts(elementwise):
    src = elementwise["NUMBA"]._fn.source     # main runs once per call: its loops are kernels
    kernels = with_kernel_modules(src).split("# ---- ")[1:]
    square = next(k for k in kernels if "(x0 * x0)" in k)
    assert square.count("x0 = f0[") == 1                                 # x * x: x read once
    # every array is read through its flat view and element strides (elemwise_runtime.elem_view)
    assert "x0 = f0[np.uint64(o0 + j0 * e0[0] + j1 * e0[1])]" in square
    assert len(kernels) == 2 and all("np.empty" not in k and "np.full" not in k for k in kernels)


@pytest.fixture(scope="module")
def arrays():
    """Join (axis 0), Alloc, MakeVector and Reshape of a non-contiguous view."""
    a, b, n = T.tensor3("a"), T.tensor3("b"), T.iscalar("n")
    joined = T.concatenate([a, b], axis=0)
    filled = T.alloc(np.float64(1.5), n, a.shape[2])
    flat = a[::-1].reshape((a.shape[0] * a.shape[1], a.shape[2]))
    return {m: bptt.function([a, b, n], [joined, filled, flat], mode=m) for m in ("PY", "NUMBA")}


@given(_sizes, _sizes, _sizes, _sizes, _sizes)
def test_inline_array_lowerings_match_numpy(arrays, ra, rb, c, d, n):
    a = np.arange(ra * c * d, dtype=float).reshape(ra, c, d)
    b = -np.arange(rb * c * d, dtype=float).reshape(rb, c, d)
    want = [np.concatenate([a, b]), np.full((n, d), 1.5), a[::-1].reshape(ra * c, d)]
    for mode, f in arrays.items():
        for g, w in zip(f(a, b, n), want):
            assert g.shape == w.shape and g.dtype == w.dtype, mode
            np.testing.assert_array_equal(g, w, err_msg=mode)


@pytest.fixture(scope="module")
def inner_joins():
    """Joins along axes 1 and 2 (the LSTM's gate gradients), of three pieces, one of them a
    transposed view, written inline as the join of rows is."""
    a, b, c = T.tensor3("a"), T.tensor3("b"), T.tensor3("c")
    return {(m, axis): bptt.function([a, b, c], T.concatenate([a, b, c.dimshuffle(0, 2, 1)],
                                                              axis=axis), mode=m)
            for m in ("PY", "NUMBA") for axis in (1, 2)}


@given(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), st.integers(0, 3),
       st.integers(0, 3), st.sampled_from([1, 2]))
def test_joins_along_inner_axes_match_numpy(inner_joins, r, other, w0, w1, w2, axis):
    pieces = []
    for k, w in enumerate((w0, w1, w2)):
        shape = [r, other, other]
        shape[axis] = w
        pieces.append(np.arange(int(np.prod(shape)), dtype=float).reshape(shape) * (k + 1) + k)
    want = np.concatenate(pieces, axis=axis)
    pieces[2] = np.ascontiguousarray(pieces[2].transpose(0, 2, 1))   # the graph transposes it
    for mode in ("PY", "NUMBA"):
        got = inner_joins[mode, axis](*pieces)
        assert got.shape == want.shape, mode
        np.testing.assert_array_equal(got, want, err_msg=mode)


def test_inner_join_of_mismatched_pieces_raises_numpys_message(inner_joins):
    a, b, c = np.zeros((1, 2, 3)), np.zeros((2, 4, 3)), np.zeros((1, 3, 2))
    with pytest.raises(ValueError, match="along dimension 0, the array at index 0 has size 1 "
                                         "and the array at index 1 has size 2"):
        inner_joins["NUMBA", 1](a, b, c)
    assert "np.concatenate" not in inner_joins["NUMBA", 1]._fn.source


def test_join_of_mismatched_rows_raises_numpys_message(arrays):
    a, b = np.zeros((1, 2, 3)), np.zeros((1, 2, 4))
    with pytest.raises(ValueError, match="along dimension 2, the array at index 0 has size 3 "
                                         "and the array at index 1 has size 4"):
        arrays["NUMBA"](a, b, 1)


@pytest.fixture(scope="module")
def ring():
    """A scan whose state is read at its last two rows only: save-mem keeps a 2-row ring."""
    x, h0 = T.tensor3("x"), T.matrix("h0")
    h, _ = bptt.scan(lambda xt, h: T.tanh(xt + h), sequences=[x], outputs_info=[h0])
    f = bptt.function([x, h0], h[-2:], mode="NUMBA")
    (node,) = [n for n in f.fgraph.toposort() if isinstance(n.op, Scan)]
    assert node.op.plan.buffer_rows == (2,)
    return f


@given(st.integers(1, 6), st.integers(0, 3))
def test_ring_buffers_come_back_in_step_order(ring, steps, seed):
    rng = np.random.default_rng(seed)
    x, h0 = rng.normal(size=(steps, 2, 3)), rng.normal(size=(2, 3))
    hs = [h0]
    for t in range(steps):
        hs.append(np.tanh(x[t] + hs[-1]))
    np.testing.assert_allclose(ring(x, h0), np.stack(hs[1:])[-2:], rtol=1e-12)


@pytest.fixture(scope="module")
def summed():
    """SumTo to the same rank, with a leading dimension summed away (each one call of
    a function compiled once: reduce_runtime.py), and of a 5-d gradient (written inline)."""
    g, a, b = T.tensor3("g"), T.iscalar("a"), T.iscalar("b")
    c, g5 = T.iscalar("c"), T.tensor("float64", shape=(None,) * 5, name="g5")
    # [::-1]: reversed views (layout 'A'), read through their flat views like g
    f = bptt.function([g, a, b, c, g5], [sum_to(g, (a, b, c)), sum_to(g, (b, c)),
                                         sum_to(g[::-1], (a, b, c)),
                                         sum_to(g5[::-1], (a, b, c, 1, 1))], mode="NUMBA")
    src = f._fn.source
    calls = [line for line in src.splitlines() if "_call(" in line]
    assert len(calls) == 3 and "def sum_to" not in src and "sum_to4_call(" not in src
    assert sum(line.count("sum_to_call(") for line in calls) == 2, calls   # same rank
    assert sum(line.count("sum_to_new_call(") for line in calls) == 1, calls
    assert all(line.strip().split(" = ", 1)[1].startswith("sum_to") for line in calls), calls
    assert "alloc_zeros(" in src   # the 5-d one, inline
    return f


@given(st.tuples(_sizes, _sizes, _sizes), st.lists(st.booleans(), min_size=3, max_size=3))
def test_sum_to_matches_numpy(summed, shape, ones):
    g = np.arange(np.prod(shape), dtype=float).reshape(shape) - 2.5
    target = tuple(1 if one else s for s, one in zip(shape, ones))
    got = summed(g, *target, g.reshape(shape + (1, 1)))
    wants = (sum_to_shape(g, target), sum_to_shape(g, target[1:]), sum_to_shape(g[::-1], target),
             sum_to_shape(g[::-1], target)[..., None, None])
    for out, want in zip(got, wants, strict=True):
        assert out.shape == want.shape
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("g, g5", [((2, 3, 4), (2, 2, 4, 1, 1)), ((2, 2, 4), (2, 3, 4, 1, 1))])
def test_sum_to_rejects_a_target_g_does_not_broadcast_from(summed, g, g5):
    with pytest.raises(ValueError, match="not a broadcast"):
        summed(np.zeros(g), 2, 2, 4, np.zeros(g5))
