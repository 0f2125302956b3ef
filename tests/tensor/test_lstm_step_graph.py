"""The rewritten backward step of an LSTM: size facts and slice rewrites keep it lean.

The step of ``z = x @ Wx + h @ Wh + b`` cut into four gates by slices of
``n = h.shape[1]`` is differentiated by `bptt.scan`; the size facts
(`bptt.tensor.rewriting.sizes`: broadcast keys, a state row keeps its tap's
shape) prove every batch size equal to the state's, so the unbroadcasts over
the batch vanish, and the four gate gradients written into one zeros buffer
become one Join (`bptt.tensor.rewriting.subtensor`). The gradients stay exact,
also when a batch of one row of x broadcasts against h at run time.
"""
from __future__ import annotations

import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.graph.traversal import ancestors
from bptt.tensor.basic import Alloc, Join
from bptt.tensor.blas import Gemm
from bptt.tensor.math import Dot
from bptt.tensor.shape import SumTo
from bptt.tensor.subtensor import IncSubtensor

from ..helpers import backward_step, lstm_step


def _lstm(X, h0, c0, Wx, Wh, b):
    (H, C), _ = bptt.scan(lstm_step, sequences=X, outputs_info=[h0, c0],
                          non_sequences=[Wx, Wh, b], name="lstm")
    return H, C


def _inputs():
    return (T.tensor3("X"), T.matrix("h0"), T.matrix("c0"), T.matrix("Wx"), T.matrix("Wh"),
            T.vector("b"))


def _gradient_function(mode):
    ins = _inputs()
    H, C = _lstm(*ins)
    loss = 0.5 * (H ** 2).sum() + 0.25 * (C ** 2).sum()
    return bptt.function(list(ins), [loss] + bptt.grad(loss, list(ins[1:]) + [ins[0]]),
                         mode=mode)


@pytest.fixture(scope="module")
def lstm_gradient_py():
    return _gradient_function("PY")


def test_gate_gradients_are_one_join_without_zeros(lstm_gradient_py):
    _, nodes = backward_step(lstm_gradient_py)
    assert not [n for n in nodes if isinstance(n.op, (IncSubtensor, Alloc))]
    joins = [n for n in nodes if isinstance(n.op, Join)]
    assert len(joins) == 1 and len(joins[0].inputs) == 4 and joins[0].op.axis == 1


def test_no_unbroadcast_over_the_batch_remains(lstm_gradient_py):
    """Was 10 SumTos before the broadcast keys; at most 8 remain, over the hidden width
    (dimension 1): as far as the size facts show, a gate slice or h of width 1 could
    broadcast against c there (only slice arithmetic rules it out), and one over x's
    batch, which is real. None sums over the batch against a product's size."""
    op, nodes = backward_step(lstm_gradient_py)
    sums = [n for n in nodes if isinstance(n.op, SumTo)]
    assert len(sums) <= 8
    # every SumTo over the batch dimension reads the size of a state or trace row (an
    # inner input, or elementwise work on inner inputs only: the loss cotangent read
    # through scan_read_through_join's mask), never a product's
    batch_sources = {n.inputs[1].owner.inputs[0] for n in sums
                     if n.inputs[1].owner is not None and n.inputs[1].owner.inputs}
    products = [n for n in ancestors(list(batch_sources), blockers=op.inner_inputs)
                if n.owner is not None and isinstance(n.owner.op, (Dot, Gemm))]
    assert batch_sources and products == []


def _numpy_lstm_gradient(X, h0, c0, Wx, Wh, b):
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    n = h0.shape[1]
    hs, cs, gates = [h0], [c0], []
    for t in range(len(X)):
        z = X[t] @ Wx + hs[-1] @ Wh + b
        i, f, o, g = sig(z[:, :n]), sig(z[:, n:2 * n]), sig(z[:, 2 * n:3 * n]), np.tanh(z[:, 3 * n:])
        cs.append(f * cs[-1] + i * g)
        hs.append(o * np.tanh(cs[-1]))
        gates.append((i, f, o, g))
    gWx, gWh, gb = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    gX = np.zeros_like(X)
    dh, dc = 0.0, 0.0
    for t in reversed(range(len(X))):
        i, f, o, g = gates[t]
        tc = np.tanh(cs[t + 1])
        dh = dh + hs[t + 1]
        dc = dc + 0.5 * cs[t + 1] + dh * o * (1 - tc * tc)
        dz = np.concatenate([dc * g * i * (1 - i), dc * cs[t] * f * (1 - f),
                             dh * tc * o * (1 - o), dc * i * (1 - g * g)], axis=1)
        dzx = dz.sum(axis=0, keepdims=True) if len(X[t]) == 1 else dz
        gX[t] = dzx @ Wx.T
        gWx += X[t].T @ dzx
        gWh += hs[t].T @ dz
        gb += dz.sum(axis=0)
        dh = dz @ Wh.T
        dc = dc * f
    loss = sum(0.5 * (h ** 2).sum() + 0.25 * (c ** 2).sum() for h, c in zip(hs[1:], cs[1:]))
    return [loss, dh, dc, gWx, gWh, gb, gX]


def test_gradient_matches_numpy_bptt(mode):
    f = _gradient_function(mode)      # one compile; x_rows=1: x @ Wx broadcasts over h's batch
    for x_rows, B, n in [(1, 3, 2), (3, 3, 2), (1, 1, 3)]:
        rng = np.random.default_rng(x_rows + 10 * B)
        X = rng.standard_normal((4, x_rows, 3))
        h0, c0 = 0.5 * rng.standard_normal((B, n)), 0.5 * rng.standard_normal((B, n))
        Wx, Wh = rng.standard_normal((3, 4 * n)), 0.5 * rng.standard_normal((n, 4 * n))
        b = rng.standard_normal(4 * n)
        want = _numpy_lstm_gradient(X, h0, c0, Wx, Wh, b)
        for got, w in zip(f(X, h0, c0, Wx, Wh, b), want):
            np.testing.assert_allclose(got, w, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("x_rows", [1, 2])
def test_verify_grad_of_the_lstm(x_rows):
    rng = np.random.default_rng(10 + x_rows)
    n = 2
    pt = [rng.standard_normal((3, x_rows, 2)), 0.5 * rng.standard_normal((2, n)),
          0.5 * rng.standard_normal((2, n)), rng.standard_normal((2, 4 * n)),
          0.5 * rng.standard_normal((n, 4 * n)), rng.standard_normal(4 * n)]
    bptt.verify_grad(lambda *a: _lstm(*a)[0] ** 2 + _lstm(*a)[1], pt, mode="PY")
