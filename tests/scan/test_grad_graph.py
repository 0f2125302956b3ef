"""The rewritten backward step of a batched tanh RNN is as lean as hand-written BPTT:
the elementwise chain, the matrix products and the accumulations, and nothing that
allocates or computes a value only to carry a shape.

Two unbroadcasts may remain, and must (besides the bias gradient's per-step sum, which
`scan_chunk_accumulators` leaves in the loop): the gradients of ``x_t @ U`` and ``h @ W``
are summed to those products' sizes, because a batch of one row of ``x_t`` (or a
``W`` of one column) legitimately broadcasts at run time. They are no-ops (a size
comparison) when nothing broadcast, and their target sizes are read from the step's
inputs, never computed. The gradients are checked on exactly that broadcasting case.
"""
from __future__ import annotations

import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.tensor.basic import Alloc
from bptt.tensor.elemwise import Elemwise
from bptt.tensor.scalar_ops import Switch
from bptt.tensor.shape import BroadcastTo, Shape, Shape_i, SumTo

from ..helpers import backward_step


def _rnn(x, h0, U, W, b):
    hs, _ = bptt.scan(lambda x_t, h, U, W, b: T.tanh(T.dot(x_t, U) + T.dot(h, W) + b),
                      sequences=x, outputs_info=h0, non_sequences=[U, W, b], name="rnn")
    return hs


def _rnn_gradient_function(mode):
    X, h0, U, W = T.tensor3("X"), T.matrix("h0"), T.matrix("U"), T.matrix("W")
    b = T.vector("b")
    loss = 0.5 * (_rnn(X, h0, U, W, b) ** 2).sum()
    return bptt.function([X, h0, U, W, b], [loss] + bptt.grad(loss, [U, W, b, h0]), mode=mode)


@pytest.fixture(scope="module")
def rnn_gradient_py():
    return _rnn_gradient_function("PY")


def test_backward_step_allocates_nothing_to_carry_a_shape(rnn_gradient_py):
    op, nodes = backward_step(rnn_gradient_py)
    assert not [n for n in nodes if isinstance(n.op, (Alloc, BroadcastTo, Shape))]
    # one switch only: the loss cotangent's row read through h's rows and a mask (join_rows)
    switches = [n for n in nodes
                if isinstance(n.op, Elemwise) and isinstance(n.op.scalar_op, Switch)]
    assert len(switches) <= 1 and all(n.inputs[0] in op.inner_inputs for n in switches)
    assert not [n for n in nodes if type(n.op).__name__ == "MakeVector"]
    assert sum(type(n.op).__name__ == "Dot" for n in nodes) <= 3


def test_backward_step_keeps_only_the_unbroadcasts_of_the_products(rnn_gradient_py):
    op, nodes = backward_step(rnn_gradient_py)
    inner_inputs = set(op.inner_inputs)
    sums = [n for n in nodes if isinstance(n.op, SumTo)]
    assert len(sums) <= 3                            # the products' two, the bias gradient
    for n in sums:
        g = n.inputs[0]
        assert g.owner is not None and not isinstance(g.owner.op, SumTo)   # no stacked sums
        assert g not in inner_inputs                 # a cotangent is never unbroadcast
        for d in n.inputs[1:]:                       # sizes read, never computed (read off
            assert d in inner_inputs or isinstance(d.owner.op, Shape_i)    # the mask's switch)


def _numpy_rnn_gradient(X, h0, U, W, b):
    hs = [h0]
    for t in range(len(X)):
        hs.append(np.tanh(X[t] @ U + hs[-1] @ W + b))
    gU, gW, gb, dh = np.zeros_like(U), np.zeros_like(W), np.zeros_like(b), 0.0
    for t in reversed(range(len(X))):
        da = (dh + hs[t + 1]) * (1 - hs[t + 1] ** 2)
        gU += X[t].T @ da.sum(axis=0, keepdims=True) if len(X[t]) == 1 else X[t].T @ da
        gW += hs[t].T @ da
        gb += da.sum(axis=0)
        dh = da @ W.T
    loss = 0.5 * sum((h ** 2).sum() for h in hs[1:])
    return [loss, gU, gW, gb, dh]


@pytest.mark.parametrize("x_rows", [1, 3])     # 1: x_t @ U broadcasts over the batch of h
def test_rewritten_gradient_matches_numpy_bptt(mode, x_rows):
    rng = np.random.default_rng(x_rows)
    X, h0 = rng.standard_normal((4, x_rows, 2)), 0.5 * rng.standard_normal((3, 3))
    U, W, b = rng.standard_normal((2, 3)), 0.5 * rng.standard_normal((3, 3)), rng.standard_normal(3)
    f = _rnn_gradient_function(mode)
    for got, want in zip(f(X, h0, U, W, b), _numpy_rnn_gradient(X, h0, U, W, b)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_verify_grad_when_the_input_rows_broadcast():
    rng = np.random.default_rng(7)
    pt = [rng.standard_normal((3, 1, 2)), 0.5 * rng.standard_normal((2, 3)),
          rng.standard_normal((2, 3)), 0.5 * rng.standard_normal((3, 3)), rng.standard_normal(3)]
    bptt.verify_grad(lambda X, h0, U, W, b: _rnn(X, h0, U, W, b) ** 2, pt, mode="PY")
