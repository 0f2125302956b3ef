"""Recurrent layers against NumPy references, per-sequence runs, torch and finite differences."""
import numpy as np
import pytest

import bptt
import bptt.nn as nn
import bptt.tensor as T
from bptt.graph.replace import clone_replace

from .reference import cell_step, run_layer

KINDS = ["RNN", "GRU", "LSTM"]
F, H = 3, 4


def make(kind, **kw):
    return getattr(nn, kind)(F, H, dtype="float64", rng=1, **kw)


def build(layer, kind, mask=False, state=False):
    x = T.tensor3("x")
    ins = [x]
    st = None
    if state:
        st = (T.tensor3("h0"), T.tensor3("c0")) if kind == "LSTM" else T.tensor3("h0")
        ins += list(st) if kind == "LSTM" else [st]
    m = None
    if mask:
        m = T.matrix("mask")
        ins.append(m)
    y, fin = layer(x, st, mask=m)
    fins = list(fin) if kind == "LSTM" else [fin]
    return ins, [y] + fins


@pytest.mark.parametrize("kind", KINDS)
def test_stacked_bidirectional_matches_numpy(kind):
    layer = make(kind, num_layers=2, bidirectional=True)
    ins, outs = build(layer, kind, state=True)
    f = bptt.function(ins, outs, mode="PY")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 2, F))
    states = [rng.standard_normal((4, 2, H)) for _ in range(2 if kind == "LSTM" else 1)]
    got = f(x, *states)
    y, fins = run_layer(kind, layer.state_dict(), x, H, 2, True, states)
    np.testing.assert_allclose(got[0], y, rtol=1e-10, atol=1e-12)
    for g, w in zip(got[1:], fins):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_relu_rnn_matches_numpy():
    layer = make("RNN", nonlinearity="relu")
    ins, outs = build(layer, "RNN")
    x = np.random.default_rng(2).standard_normal((4, 3, F))
    got = bptt.function(ins, outs, mode="PY")(x)
    y, fins = run_layer("RNN", layer.state_dict(), x, H, 1, False, act=lambda v: np.maximum(v, 0))
    np.testing.assert_allclose(got[0], y, rtol=1e-10, atol=1e-12)


def padded_vs_alone(kind, mode, lengths=(5, 2, 0, 3), num_layers=2):
    """A padded batch gives each sequence what it gets alone (outputs, final states)."""
    layer = make(kind, num_layers=num_layers, bidirectional=True)
    ins, outs = build(layer, kind, mask=True)
    f = bptt.function(ins, outs, mode=mode)
    rng = np.random.default_rng(3)
    Tmax, B = max(lengths), len(lengths)
    x = rng.standard_normal((Tmax, B, F)) * 3  # garbage in the padding too
    mask = (np.arange(Tmax)[:, None] < np.array(lengths)[None, :]).astype(float)
    got = f(x, mask)
    sd = layer.state_dict()
    for b, L in enumerate(lengths):
        y, fins = run_layer(kind, sd, x[:L, b:b + 1], H, num_layers, True)
        np.testing.assert_allclose(got[0][:L, b:b + 1], y, rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(got[0][L:, b], 0)
        for g, w in zip(got[1:], fins):
            if L == 0:
                w = np.zeros_like(w)
            np.testing.assert_allclose(g[:, b:b + 1], w, rtol=1e-9, atol=1e-12)
    return layer, ins, outs, x, mask


@pytest.mark.parametrize("kind", KINDS)
def test_masked_batch_equals_each_sequence_alone(kind):
    padded_vs_alone(kind, "PY")


def test_masked_lstm_numba_matches_alone():
    padded_vs_alone("LSTM", "NUMBA", lengths=(4, 1, 3), num_layers=1)


def with_params_as_inputs(layer, outs):
    """fun(x..., *params) rebuilding `outs` with the parameters replaced by its arguments."""
    params = layer.params()

    def fun(*args):
        n = len(args) - len(params)
        sub = dict(zip(params, args[n:]))
        sub.update(zip(fun.ins, args[:n]))
        return [o for o in clone_replace(fun.outs, sub)]
    fun.outs = outs
    return fun, [p.get_value() for p in params]


@pytest.mark.parametrize("kind", KINDS)
def test_sequence_layer_gradient(kind):
    layer = getattr(nn, kind)(2, 2, bidirectional=True, dtype="float64", rng=4)
    ins, outs = build(layer, kind, mask=True)
    fun, pvals = with_params_as_inputs(layer, [T.sum(outs[0] * outs[0]) + T.sum(outs[1])])
    fun.ins = ins[:1]
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 2, 2))
    mask = np.array([[1, 1], [1, 1], [1, 0.0]])
    cost = lambda x_, *ps: fun(x_, *ps)  # noqa: E731
    fun.outs = [clone_replace(fun.outs, {ins[1]: T.constant(mask)})[0]]
    bptt.verify_grad(cost, [x] + pvals, mode="PY", rng=np.random.default_rng(6))


@pytest.mark.parametrize("kind", KINDS)
def test_cells_match_numpy_and_gradient(kind):
    cell = getattr(nn, kind + "Cell")(F, H, dtype="float64", rng=7)
    x, h, c = T.matrix("x"), T.matrix("h"), T.matrix("c")
    out = cell(x, (h, c)) if kind == "LSTM" else [cell(x, h)]
    out = list(out)
    rng = np.random.default_rng(8)
    xv, hv, cv = (rng.standard_normal((2, n)) for n in (F, H, H))
    ins = [x, h, c] if kind == "LSTM" else [x, h]
    got = bptt.function(ins, out, mode="PY")(*([xv, hv, cv] if kind == "LSTM" else [xv, hv]))
    p = {"W_ih": cell.weight_ih.get_value(), "W_hh": cell.weight_hh.get_value(),
         "b_ih": cell.bias_ih.get_value(), "b_hh": cell.bias_hh.get_value()}
    want = cell_step(kind, xv, (hv, cv), p, H)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)
    params = cell.params()

    def cost(xx, hh, *ps):
        sub = dict(zip(params, ps))
        sub.update({x: xx, h: hh, c: T.constant(cv)})
        return clone_replace([T.sum(o ** 2) for o in out], sub)
    bptt.verify_grad(cost, [xv, hv] + [q.get_value() for q in params], mode="PY",
                     rng=np.random.default_rng(9))


def test_lstm_cell_in_own_scan_equals_lstm_layer_numba():
    """An LSTMCell stepped by the user's scan is the LSTM layer with the same weights."""
    cell = nn.LSTMCell(F, H, dtype="float64", rng=10)
    layer = nn.LSTM(F, H, dtype="float64")
    layer.load_state_dict({k + "_l0": v for k, v in cell.state_dict().items()})
    x = T.tensor3("x")
    z = T.zeros((x.shape[1], H), dtype="float64")
    (hs, _), _ = bptt.scan(lambda x_t, h, c: list(cell(x_t, (h, c))), sequences=[x],
                           outputs_info=[z, z])
    y, _ = layer(x)
    f = bptt.function([x], [hs, y])
    got = f(np.random.default_rng(11).standard_normal((6, 2, F)))
    np.testing.assert_allclose(got[0], got[1], rtol=1e-12, atol=1e-13)


def test_errors():
    layer = make("LSTM")
    with pytest.raises(ValueError, match=r"\(T, B, F\)"):
        layer(T.matrix("x"))
    with pytest.raises(ValueError, match="pair"):
        layer(T.tensor3("x"), state=[T.tensor3("h")])
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(2, 2, nonlinearity="sigmoid")


def test_forget_bias_and_truncate_gradient():
    layer = nn.LSTM(2, 3, forget_bias=1.0, rng=0)
    plain = nn.LSTM(2, 3, rng=0)
    diff = layer.bias_ih_l0.get_value() - plain.bias_ih_l0.get_value()
    np.testing.assert_allclose(diff, np.r_[np.zeros(3), np.ones(3), np.zeros(6)])
    tr = make("RNN", truncate_gradient=2)
    x = T.tensor3("x")
    y, _ = tr(x)
    g = bptt.function([x], bptt.grad(T.sum(y[-1]), x), mode="PY")(np.ones((5, 1, F)))
    assert np.all(g[:3] == 0) and np.any(g[3:] != 0)
