"""Gradients of a tanh RNN and an LSTM against NumPy backpropagation through time
(float64 and float32), and the structure of the backward scan (mit_mot taps, running
sums, stored values, no unused inputs, second order).

Every graph here has unknown static shapes and a symbolic number of steps, so one
numba compilation per graph serves every example hypothesis draws (`functools.lru_cache`
keeps the compiled function per mode).
"""
from __future__ import annotations

import functools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.scan import Scan
from bptt.graph.traversal import ancestors, toposort

from ..helpers import lstm_step


def scan_nodes(outputs):
    """The Scan nodes computing `outputs`, forward loops first."""
    return [n for n in toposort(outputs) if isinstance(n.op, Scan)]


def backward_node(outputs):
    return next(n for n in scan_nodes(outputs) if n.op.info.name.startswith("grad of"))


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


# -- a tanh RNN against NumPy BPTT ------------------------------------------------------------
def rnn_numpy(x, h0, wx, wh, b, v):
    """Values and BPTT gradients of cost = sum(h * v) + |h[-1:]|^2,
    h_t = tanh(x_t wx + h_{t-1} wh + b)."""
    hs = [h0]
    for t in range(len(x)):
        hs.append(np.tanh(x[t] @ wx + hs[-1] @ wh + b))
    g = {k: np.zeros_like(a) for k, a in (("x", x), ("wx", wx), ("wh", wh), ("b", b))}
    gh = np.zeros_like(h0)
    for t in reversed(range(len(x))):
        gh = gh + v[t] + (2 * hs[t + 1] if t == len(x) - 1 else 0.0)
        ga = gh * (1 - hs[t + 1] ** 2)
        g["x"][t] = ga @ wx.T
        g["wx"] += np.outer(x[t], ga)
        g["wh"] += np.outer(hs[t], ga)
        g["b"] += ga
        gh = ga @ wh.T
    return np.array(hs[1:]).reshape(len(x), len(h0)), [g["x"], gh, g["wx"], g["wh"], g["b"]]


@functools.lru_cache(maxsize=None)
def rnn_function(mode, dtype="float64"):
    x, wx, wh, v = (T.tensor(dtype, (None, None), name=n) for n in ("x", "wx", "wh", "v"))
    h0, b = T.tensor(dtype, (None,), name="h0"), T.tensor(dtype, (None,), name="b")
    hs, _ = bptt.scan(lambda x_t, h, wx, wh, b: T.tanh(T.dot(x_t, wx) + T.dot(h, wh) + b),
                      sequences=x, outputs_info=h0, non_sequences=[wx, wh, b], name="rnn")
    cost = (hs * v).sum() + (hs[-1:] ** 2).sum()
    grads = bptt.grad(cost, [x, h0, wx, wh, b])
    return bptt.function([x, h0, wx, wh, b, v], [hs] + grads, mode=mode)


@settings(max_examples=15)
@given(steps=st.integers(0, 6), n_in=st.integers(1, 3), n_h=st.integers(1, 3),
       seed=st.integers(0, 2**16))
def test_rnn_matches_numpy_bptt(mode, steps, n_in, n_h, seed):
    rng = np.random.default_rng(seed)
    x, h0 = rng.normal(size=(steps, n_in)), rng.normal(size=n_h)
    wx, wh = rng.normal(size=(n_in, n_h)), rng.normal(size=(n_h, n_h)) * 0.7
    b = rng.normal(size=n_h)
    v = rng.normal(size=(steps, n_h))
    hs, *grads = rnn_function(mode)(x, h0, wx, wh, b, v)
    want_hs, want = rnn_numpy(x, h0, wx, wh, b, v)
    np.testing.assert_allclose(hs, want_hs, rtol=1e-12, atol=1e-12)
    for name, g, w in zip(("x", "h0", "wx", "wh", "b"), grads, want):
        assert g.dtype == np.float64 and g.shape == w.shape, name
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=name)


def test_float32_rnn_gradients_are_float32(mode):
    rng = np.random.default_rng(5)
    args64 = [rng.normal(size=(4, 2)), rng.normal(size=3), rng.normal(size=(2, 3)),
              rng.normal(size=(3, 3)) * 0.5, rng.normal(size=3), rng.normal(size=(4, 3))]
    args32 = [a.astype("float32") for a in args64]
    out32 = rnn_function(mode, "float32")(*args32)
    _, want = rnn_numpy(*[a.astype("float64") for a in args32])
    for g, w in zip(out32[1:], want):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5)


# -- an LSTM (batched, two states) against NumPy BPTT -------------------------------------------
def lstm_numpy(x, h0, c0, wx, wh, b, v, u):
    """cost = sum(h * v) + sum(c[-1] * u); gates i, f, o, g stacked along the last axis."""
    H = h0.shape[1]
    hs, cs, cache = [h0], [c0], []
    for t in range(len(x)):
        z = x[t] @ wx + hs[-1] @ wh + b
        i, f, o, g = (sigmoid(z[:, :H]), sigmoid(z[:, H:2 * H]), sigmoid(z[:, 2 * H:3 * H]),
                      np.tanh(z[:, 3 * H:]))
        c = f * cs[-1] + i * g
        cache.append((i, f, o, g))
        cs.append(c)
        hs.append(o * np.tanh(c))
    gx, gwx, gwh, gb = np.zeros_like(x), np.zeros_like(wx), np.zeros_like(wh), np.zeros_like(b)
    gh, gc = np.zeros_like(h0), np.zeros_like(c0)
    for t in reversed(range(len(x))):
        i, f, o, g = cache[t]
        gh = gh + v[t]
        gc = gc + (u if t == len(x) - 1 else 0.0)
        tc = np.tanh(cs[t + 1])
        go = gh * tc
        gc = gc + gh * o * (1 - tc ** 2)
        dz = np.concatenate([gc * g * i * (1 - i), gc * cs[t] * f * (1 - f), go * o * (1 - o),
                             gc * i * (1 - g ** 2)], axis=1)
        gx[t] = dz @ wx.T
        gwx += x[t].T @ dz
        gwh += hs[t].T @ dz
        gb += dz.sum(0)
        gh, gc = dz @ wh.T, gc * f
    return [gx, gh, gc, gwx, gwh, gb]


@functools.lru_cache(maxsize=None)
def lstm_function(mode):
    x = T.tensor3("x")
    h0, c0, wx, wh = T.dmatrix("h0"), T.dmatrix("c0"), T.dmatrix("wx"), T.dmatrix("wh")
    v3 = T.tensor3("v")
    b, u = T.dvector("b"), T.dmatrix("u")

    (hs, cs), _ = bptt.scan(lstm_step, sequences=x, outputs_info=[h0, c0],
                            non_sequences=[wx, wh, b], name="lstm")
    cost = (hs * v3).sum() + (cs[-1] * u).sum()
    grads = bptt.grad(cost, [x, h0, c0, wx, wh, b])
    return bptt.function([x, h0, c0, wx, wh, b, v3, u], grads, mode=mode)


@settings(max_examples=10)
@given(steps=st.integers(1, 5), batch=st.integers(1, 3), n_in=st.integers(1, 3),
       n_h=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_lstm_matches_numpy_bptt(mode, steps, batch, n_in, n_h, seed):
    rng = np.random.default_rng(seed)
    args = [rng.normal(size=(steps, batch, n_in)), rng.normal(size=(batch, n_h)),
            rng.normal(size=(batch, n_h)), rng.normal(size=(n_in, 4 * n_h)) * 0.6,
            rng.normal(size=(n_h, 4 * n_h)) * 0.6, rng.normal(size=4 * n_h),
            rng.normal(size=(steps, batch, n_h)), rng.normal(size=(batch, n_h))]
    got = lstm_function(mode)(*args)
    for name, g, w in zip(("x", "h0", "c0", "wx", "wh", "b"), got, lstm_numpy(*args)):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12, err_msg=name)


# -- the structure of the backward scan -----------------------------------------------------------
def test_sit_sot_becomes_a_mit_mot_with_taps_0_1():
    x, h0, w = T.dmatrix("x"), T.dvector("h0"), T.dvector("w")
    hs, _ = bptt.scan(lambda x_t, h, w: T.tanh(h * w + x_t), sequences=x, outputs_info=h0,
                      non_sequences=w)
    g = bptt.grad(hs.sum(), [x, h0, w])
    info = backward_node(g).op.info
    assert info.mit_mot_in_slices == ((0, 1),) and info.mit_mot_out_slices == ((1,),)
    assert info.n_sit_sot == 1            # the running sum of w's gradient
    assert info.n_nit_sot == 1            # x's gradient, one row per step
    assert not info.as_while and info.truncate_gradient == -1


def test_mit_sot_taps_minus_3_minus_1_become_in_taps_0_3_1_out_taps_3_1():
    h0, w = T.dmatrix("h0"), T.dvector("w")
    hs, _ = bptt.scan(lambda h3, h1, w: T.tanh(h3 * w + h1), n_steps=5,
                      outputs_info=dict(initial=h0, taps=[-3, -1]), non_sequences=w)
    g = bptt.grad(hs.sum(), [h0, w])
    info = backward_node(g).op.info
    assert info.mit_mot_in_slices == ((0, 3, 1),) and info.mit_mot_out_slices == ((3, 1),)


def test_backward_scan_reads_stored_states_and_keeps_no_unused_input():
    """The backward step reads tanh's stored output (no tanh inside) and only what it needs."""
    x, h0, w, unused = T.dmatrix("x"), T.dvector("h0"), T.dvector("w"), T.dvector("unused")
    hs, _ = bptt.scan(lambda x_t, h, w, u: T.tanh(h * w + x_t), sequences=x, outputs_info=h0,
                      non_sequences=[w, unused])
    node = backward_node(bptt.grad(hs.sum(), [x, w]))
    op = node.op
    inner = toposort(op.inner_outputs, blockers=op.inner_inputs)
    assert not any(type(n.op.scalar_op).__name__ == "Tanh" for n in inner
                   if hasattr(n.op, "scalar_op"))
    used = set(ancestors(op.inner_outputs))
    assert all(v in used for v in op.inner_inputs)
    forward = scan_nodes([hs])[0]
    assert not any(i is forward.inputs[-1] for i in node.inputs)   # `unused` is not passed


def test_gradient_of_a_loop_over_a_loop_is_a_scan_of_a_scan():
    """Second order: the backward scan's mit_mot turns into a mit_mot again (negated taps)."""
    x, h0, w = T.dmatrix("x"), T.dvector("h0"), T.dvector("w")
    hs, _ = bptt.scan(lambda x_t, h, w: T.tanh(h * w + x_t), sequences=x, outputs_info=h0,
                      non_sequences=w)
    gw = bptt.grad(hs.sum(), w)
    ggw = bptt.grad((gw * gw).sum(), w)
    level2 = [n for n in scan_nodes([ggw]) if n.op.info.name.startswith("grad of grad of")]
    assert len(level2) == 1
    info = level2[0].op.info
    # mit_mot in (0, 1) / out (1,) -> in (-1, 0) / out (0, -1): slot 1 is overwritten, so its
    # tap reads the cotangent of what was written and returns the read's share alone;
    # the running sum of w's gradient (a sit_sot) -> in (0, 1) / out (1,)
    assert sorted(zip(info.mit_mot_in_slices, info.mit_mot_out_slices)) == [
        ((-1, 0), (0, -1)), ((0, 1), (1,))]
