"""Where a compiled scan loop sets up the rows of its nit_sots and of its summed nit_sots,
and how it orders its rings (bptt/link/numba/dispatch/scan/).

Before the loop, where the step's shape program (`Scan._row_shape_program`) gives their
row shapes from the step's inputs without reading a sequence's values: no array is
assigned inside the loop and no branch runs for zero steps (compile time). Whether a
summed group reads another's staged rows (dU's and dW's SumTo of one value) is decided
there from those shapes. A shape read from a sequence's values (known only at the first
step) keeps the set-up at the first step and the zero-step branch; so does every group of
summed nit_sots when the shapes are withheld (forced here, as no gradient makes one).

A for loop writes its rings (save-mem's last rows of a state or nit_sot) from the offset
that leaves them in time order; a while loop rotates them after the loop. A nit_sot's
length is checked unless it is n_steps itself.

Values: against NumPy loops written here (n_steps 0 included, a broadcast weight column
that gives dW's staged rows another shape than dU's, chunks of a few steps, every ring
length against every step count), and PY against NUMBA.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.config import config
from bptt.link.numba.dispatch.scan import row_shapes as scan_row_shapes

from ..helpers import excluding, numpy_rnn_grads

#: the maps below are loops under test: scan_pushout_rows would make them whole-array
#: operations
MAPS_KEPT = ("scan_pushout_rows",)

ROWS = 3   # config.chunk_rows for these graphs: chunks of one to three steps


def _loop_functions(f):
    """The generated scan functions of compiled `f`, {scan name: source}."""
    chunks = re.split(r"\n@jit\n", f._fn.source)
    found = {}
    for chunk in chunks:
        name = re.search(r"scan '([^']+)'", chunk)
        if chunk.startswith("def scan") and ("for t in range(n)" in chunk
                                             or "while t < n:" in chunk) and name:
            found[name.group(1)] = chunk
    return found


def _rnn():
    """Loss and gradients (U, W, b, h0) of ``h_t = tanh(x_t @ U + h_{t-1} @ W + b)`` over
    n_steps rows of X; W may have one column at run time (broadcast across H)."""
    n = T.iscalar("n")
    X, h0, U, W, b = T.tensor3("X"), T.matrix("h0"), T.matrix("U"), T.matrix("W"), T.vector("b")
    hs, _ = bptt.scan(lambda x, h, U, W, b: T.tanh(T.dot(x, U) + T.dot(h, W) + b),
                      sequences=X, outputs_info=h0, non_sequences=[U, W, b], n_steps=n,
                      name="rnn")
    loss = 0.5 * (hs ** 2).sum()
    return [X, h0, U, W, b, n], [loss] + bptt.grad(loss, [U, W, b, h0])


def _compile(ins, outs, mode):
    default, config.chunk_rows = config.chunk_rows, ROWS   # read when rewriting
    try:
        return bptt.function(ins, outs, mode=mode)
    finally:
        config.chunk_rows = default


@pytest.fixture(scope="module")
def rnn_functions():
    ins, outs = _rnn()
    return {mode: _compile(ins, outs, mode) for mode in ("PY", "NUMBA")}


def _data(rng, t, b, h, w_cols):
    return [rng.normal(size=(t, b, 3)), rng.normal(size=(b, h)), rng.normal(size=(3, h)),
            0.5 * rng.normal(size=(h, w_cols or h)), rng.normal(size=h)]


def test_rnn_gradient_sets_up_its_sums_before_the_loop(rnn_functions):
    loops = _loop_functions(rnn_functions["NUMBA"])
    backward = loops["grad of rnn"]
    loop_body = backward[backward.index("for t in range(n)"):]
    before_loop = backward[:backward.index("for t in range(n)")]
    assert "if t == 0:" not in backward and "if n == 0:" not in backward
    assert "alloc_" not in loop_body, loop_body      # no array made (or assigned) per step
    # dW's and db's groups may read dU's staged rows: decided from shapes, before the loop
    assert before_loop.count("_alias = ") == 2 and "same_view" not in backward
    assert "if t == 0:" not in loops["rnn"]


@settings(deadline=None, max_examples=20)
@given(t=st.integers(0, 7), b=st.integers(1, 4), h=st.integers(1, 4),
       w_cols=st.sampled_from([None, 1]), steps=st.integers(0, 7), seed=st.integers(0, 2 ** 16))
def test_sums_set_up_before_the_loop_equal_numpy(rnn_functions, t, b, h, w_cols, steps,
                                                 seed):
    """dU's, dW's and db's chunked sums: with W (H, H) dW and db read dU's staged rows; with
    W (H, 1) dW's step value is (B, 1) and is staged on its own."""
    funcs = rnn_functions
    rng = np.random.default_rng(seed)
    args = _data(rng, t, b, h, w_cols)
    n = min(steps, t)
    want = numpy_rnn_grads(*args, n)
    for mode, f in funcs.items():
        for k, (g, e) in enumerate(zip(f(*args, n), want)):
            assert np.shape(g) == np.shape(e), (mode, k)
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-10, err_msg=f"{mode} output {k}")


def test_summed_groups_set_up_at_the_first_step_when_shapes_are_withheld(monkeypatch, tmp_path):
    """The first-step set-up (`same_view` decides the shared rows) gives the same values."""
    real = scan_row_shapes.row_shapes
    monkeypatch.setattr(scan_row_shapes, "row_shapes",
                        lambda op, ctx, pending, zero_rows: real(op, ctx, pending, zero_rows)
                        if zero_rows else None)
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))   # a new key: compiled again
    rng = np.random.default_rng(5)
    f = _compile(*_rnn(), "NUMBA")
    backward = _loop_functions(f)["grad of rnn"]
    assert "if t == 0:" in backward and "if n == 0:" in backward
    assert backward.count("same_view(") == 2
    for w_cols in (None, 1):
        for t, n in ((0, 0), (1, 1), (7, 7), (7, 4)):
            args = _data(rng, t, 2, 3, w_cols)
            for k, (g, e) in enumerate(zip(f(*args, n), numpy_rnn_grads(*args, n))):
                assert np.shape(g) == np.shape(e), (t, n, k)
                np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-10,
                                           err_msg=f"w_cols {w_cols}, t {t}, n {n}, output {k}")


# -- nit_sots --------------------------------------------------------------------------------
def _outputs_scan():
    """ys_t = tanh(x_t @ V): rows of unknown shape, over n_steps rows of X."""
    n = T.iscalar("n")
    X, V = T.tensor3("X"), T.matrix("V")
    ys, _ = bptt.scan(lambda x, V: T.tanh(T.dot(x, V)), sequences=X, non_sequences=V,
                      n_steps=n, name="outputs")
    return [X, V, n], ys


@pytest.fixture(scope="module")
def outputs_functions():
    ins, outs = _outputs_scan()
    with excluding(MAPS_KEPT):
        return {mode: bptt.function(ins, outs, mode=mode) for mode in ("PY", "NUMBA")}


def test_nit_sot_rows_are_allocated_before_the_loop(outputs_functions):
    loop = _loop_functions(outputs_functions["NUMBA"])["outputs"]
    assert "_ready" not in loop and "if n == 0:" not in loop, loop
    body = loop[loop.index("for t in range(n)"):]
    assert "alloc_" not in body, body


@settings(deadline=None, max_examples=20)
@given(t=st.integers(0, 5), b=st.integers(0, 3), c=st.integers(0, 3),
       steps=st.integers(0, 5), seed=st.integers(0, 2 ** 16))
def test_nit_sot_rows_allocated_before_the_loop_equal_numpy(outputs_functions, t, b, c, steps,
                                                            seed):
    rng = np.random.default_rng(seed)
    x, v = rng.normal(size=(t, b, 2)), rng.normal(size=(2, c))
    n = min(steps, t)
    ys = np.tanh(x[:n] @ v).reshape(n, b, c)
    for mode, f in outputs_functions.items():
        got = f(x, v, n)
        assert got.shape == (n, b, c), mode
        np.testing.assert_allclose(got, ys, rtol=1e-12, atol=1e-12, err_msg=mode)


def test_a_shape_read_from_a_sequence_value_is_set_up_at_the_first_step():
    """ys_t = 2 * x_t[:k_t]: the row length is a sequence's value, known at the first step
    (and, for zero steps, the length of a zero row's prefix: 0)."""
    X, K, n = T.matrix("X"), T.lvector("K"), T.iscalar("n")
    ys, _ = bptt.scan(lambda x, k: 2 * x[:k], sequences=[X, K], n_steps=n, name="prefix")
    funcs = {mode: bptt.function([X, K, n], ys, mode=mode) for mode in ("PY", "NUMBA")}
    loop = _loop_functions(funcs["NUMBA"])["prefix"]
    assert "_ready" in loop and "if n == 0:" in loop
    x = np.arange(12.0).reshape(3, 4)
    for n_steps, k in ((0, 2), (1, 2), (3, 3), (3, 0)):
        want = 2 * x[:n_steps, :k] if n_steps else np.zeros((0, 0))
        for mode, f in funcs.items():
            got = f(x, np.full(3, k), n_steps)
            assert got.shape == want.shape, (mode, n_steps, k)
            np.testing.assert_array_equal(got, want, err_msg=mode)


# -- rings: the last rows of a state or nit_sot (save-mem) ------------------------------------
def _ring_scan(k, with_until):
    """h_t = h_{t-1} + x_t (a state) and y_t = 2 h_t (a nit_sot), of which the graph reads
    the last k rows only (save-mem keeps rings); with `until`, stopping after the step whose
    h exceeds `lim`."""
    X, h0, n, lim = T.matrix("X"), T.vector("h0"), T.iscalar("n"), T.scalar("lim")

    def step(x, h):
        h_new = h + x
        return ([h_new, 2 * h_new], bptt.until(h_new.sum() > lim)) if with_until \
            else [h_new, 2 * h_new]

    (hs, ys), _ = bptt.scan(step, sequences=X, outputs_info=[h0, None], n_steps=n, name="ring")
    return [X, h0, n] + ([lim] if with_until else []), [hs[-k:], ys[-k:]]


def _numpy_ring(x, h0, n, k, lim=None):
    hs = []
    h = h0
    for t in range(n):
        h = h + x[t]
        hs.append(h)
        if lim is not None and h.sum() > lim:
            break
    hs = np.array(hs).reshape(len(hs), len(h0))
    return [hs[-k:], 2 * hs[-k:]]


_RINGS = {}


def _ring_functions(k, with_until):
    if (k, with_until) not in _RINGS:
        ins, outs = _ring_scan(k, with_until)
        _RINGS[k, with_until] = {mode: bptt.function(ins, outs, mode=mode)
                                 for mode in ("PY", "NUMBA")}
    return _RINGS[k, with_until]


def test_for_loop_rings_end_in_time_order():
    """A for loop writes its rings from the offset that leaves them in time order: no
    rotation after the loop (`ring_in_time_order_call`); a while loop rotates them."""
    for k in (1, 3):
        loop = _loop_functions(_ring_functions(k, False)["NUMBA"])["ring"]
        assert "ring_in_time_order" not in loop and "% buf0.shape[0]" in loop, loop
        loop = _loop_functions(_ring_functions(k, True)["NUMBA"])["ring"]
        assert loop.count("ring_in_time_order_call(") == 2, loop
    backward = _loop_functions(_compile(*_rnn(), "NUMBA"))["grad of rnn"]
    assert "ring_in_time_order" not in backward


@settings(deadline=None, max_examples=10)
@given(with_until=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_rings_equal_numpy(with_until, seed):
    """Every ring length 1..4 against every step count 0..7 (a ring ends in time order
    whatever n is modulo its length)."""
    rng = np.random.default_rng(seed)
    x, h0 = rng.normal(size=(7, 2)), rng.normal(size=2)
    lim = float(rng.normal(scale=3.0)) if with_until else None
    for k in range(1, 5):
        for n in range(8):
            want = _numpy_ring(x, h0, n, k, lim)
            for mode, f in _ring_functions(k, with_until).items():
                got = f(x, h0, n, *([lim] if with_until else []))
                for j, (g, e) in enumerate(zip(got, want)):
                    assert g.shape == e.shape, (mode, k, n, j)
                    np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12,
                                               err_msg=f"{mode}, k {k}, n {n}, output {j}")


# -- a nit_sot's length ------------------------------------------------------------------------
def test_a_nit_sot_length_is_checked_unless_it_is_n_steps(mode):
    """A negative nit_sot length raises, naming the scan and the nit_sot; a length that is
    n_steps itself is not checked again (n_steps is)."""
    from bptt.scan import Scan, ScanInfo

    x_t = T.dscalar("x_t")
    info = ScanInfo(n_seqs=1, mit_mot_in_slices=(), mit_mot_out_slices=(), mit_sot_in_slices=(),
                    n_sit_sot=0, n_nit_sot=1, n_shared_outs=0, n_non_seqs=0, name="lengths")
    op = Scan([x_t], [2 * x_t], info)
    x, n, length = T.dvector("x"), T.lscalar("n"), T.lscalar("length")
    own = bptt.function([x, n, length], op(n, x, length), mode=mode)
    np.testing.assert_array_equal(own(np.arange(4.0), 3, 2), [2.0, 4.0])   # the last 2 rows
    with pytest.raises(ValueError, match="scan 'lengths': nit_sot 0 has a negative length -1"):
        own(np.arange(4.0), 3, -1)
    with excluding(MAPS_KEPT):
        same = bptt.function([x, n], op(n, x, n), mode=mode)
    np.testing.assert_array_equal(same(np.arange(4.0), 3), [0.0, 2.0, 4.0])
    with pytest.raises(ValueError, match="n_steps is -1"):
        same(np.arange(4.0), -1)
    if mode == "NUMBA":
        assert "negative length" in _loop_functions(own)["lengths"]
        assert "negative length" not in _loop_functions(same)["lengths"]
