"""The programs of Theano's scan tests that read a sequence of 0-d rows (issue 20).

Theano's ``test_multiple_inputs_multiple_outputs``, ``test_reordering``,
``test_save_mem``, ``test_return_steps`` and ``test_grad_multiple_outs`` share a
step in which a vector sequence u2 (one 0-d row per step) scales a vector
weight: ``x_t = u1_t @ W_in1 + u2_t * w_in2 + x_{t-1} @ W``. The sequence
push-out stacked ``u2_t * w_in2`` with NumPy's right alignment, which pairs
the time axis with the weight's: wrong rows, or a broadcast error when T != 2.

Each program is written here in our own words, with Theano's sizes, and checked
against a NumPy loop and against the same graph without rewrites
(``config.rewrites`` off), in PY and NUMBA; the gradients against the
rewrite-free graph and finite differences (`verify_grad`).
"""
from __future__ import annotations

import numpy as np
import pytest

import bptt
import bptt.tensor as T

from ..helpers import without_rewrites


def _weights(rng, T_):
    """w_in2 (2,), W (2, 2), w_out (2,), W_in1 (2, 2); u1 (T, 2), u2 (T,), x0 (2,)."""
    def u(*shape):
        return rng.uniform(-1.0, 1.0, size=shape)
    return dict(w_in2=u(2), W=u(2, 2), w_out=u(2), W_in1=u(2, 2), u1=u(T_, 2), u2=u(T_),
                x0=u(2))


def _numpy_states(v, y_init, deep):
    """x_t = u1_t @ W_in1 + u2_t * w_in2 + x_{t-1} @ W, and y_t = x_{t-1} @ w_out plus
    y_{t-1} when `deep` (y's initial rows `y_init`, taps -1 and -3); also y_{t-3}."""
    x, xs, ys, y3s = v["x0"], [], [], []
    y_hist = list(np.atleast_1d(y_init))
    for t in range(len(v["u2"])):
        x_new = v["u1"][t] @ v["W_in1"] + v["u2"][t] * v["w_in2"] + x @ v["W"]
        y_new = x @ v["w_out"] + (y_hist[-1] if deep else 0.0)
        y3s.append(y_hist[-3] if deep else None)
        xs.append(x_new)
        ys.append(y_new)
        y_hist.append(y_new)
        x = x_new
    return np.array(xs), np.array(ys), np.array(y3s)


class Programs:
    """The symbolic programs, with the weights Theano keeps shared as shared variables."""

    def __init__(self, v):
        self.w_in2 = bptt.shared(v["w_in2"], name="w_in2")
        self.W = bptt.shared(v["W"], name="W")
        self.w_out = bptt.shared(v["w_out"], name="w_out")
        self.u1, self.u2 = T.matrix("u1"), T.vector("u2")
        self.x0, self.W_in1 = T.vector("x0"), T.matrix("W_in1")

    def x_step(self, u1_t, u2_t, x_tm1, W_in1):
        return T.dot(u1_t, W_in1) + u2_t * self.w_in2 + T.dot(x_tm1, self.W)

    def two_states(self, y0):
        """(x, y) of test_multiple_inputs_multiple_outputs: y_t = x_{t-1} @ w_out."""
        (x, y), _ = bptt.scan(
            lambda u1_t, u2_t, x_tm1, y_tm1, W_in1: [self.x_step(u1_t, u2_t, x_tm1, W_in1),
                                                     T.dot(x_tm1, self.w_out)],
            sequences=[self.u1, self.u2], outputs_info=[self.x0, y0],
            non_sequences=self.W_in1)
        return x, y

    def deep_states(self, y0, extra_nit_sot):
        """The outputs of test_reordering (two nit_sots y_{t-3} + 1, + 2) or of
        test_save_mem / test_return_steps (one): then x, and y with taps -1 and -3."""
        def step(u1_t, u2_t, x_tm1, y_tm1, y_tm3, W_in1):
            nits = [y_tm3 + 1] + ([y_tm3 + 2] if extra_nit_sot else [])
            return nits + [self.x_step(u1_t, u2_t, x_tm1, W_in1),
                           y_tm1 + T.dot(x_tm1, self.w_out)]

        outs, _ = bptt.scan(step, sequences=[self.u1, self.u2],
                            outputs_info=[None] * (1 + extra_nit_sot) +
                            [self.x0, dict(initial=y0, taps=[-1, -3])],
                            non_sequences=self.W_in1)
        return outs

    @property
    def inputs(self):
        return [self.u1, self.u2, self.x0, self.W_in1]


def _both(inputs, outputs, mode, values):
    """`outputs` compiled in `mode` with every rewrite, and in PY without rewrites."""
    got = bptt.function(inputs, outputs, mode=mode)(*values)
    with without_rewrites():
        want = bptt.function(inputs, outputs, mode="PY")(*values)
    for k, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"output {k}")
    return got


def _args(v, *extra):
    return [v["u1"], v["u2"], v["x0"], *extra, v["W_in1"]]


def test_multiple_inputs_multiple_outputs(mode):
    v = _weights(np.random.default_rng(10), 3)
    p = Programs(v)
    y0 = T.scalar("y0")
    x, y = p.two_states(y0)
    got = _both([p.u1, p.u2, p.x0, y0, p.W_in1], [x, y], mode, _args(v, 0.5))
    xs, ys, _ = _numpy_states(v, 0.5, deep=False)
    np.testing.assert_allclose(got[0], xs, rtol=1e-12)
    np.testing.assert_allclose(got[1], ys, rtol=1e-12)


def test_reordering(mode):
    v = _weights(np.random.default_rng(11), 3)
    p = Programs(v)
    y0 = T.vector("y0")
    y_init = np.array([0.3, -0.2, 0.7])
    outs = p.deep_states(y0, extra_nit_sot=True)
    got = _both([p.u1, p.u2, p.x0, y0, p.W_in1], outs, mode, _args(v, y_init))
    xs, ys, y3s = _numpy_states(v, y_init, deep=True)
    for a, b in zip(got, [y3s + 1, y3s + 2, xs, ys]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("rows", [(-1, -1, -1), (-3, -2, -4)], ids=["save_mem", "return_steps"])
def test_save_mem_and_return_steps(mode, rows):
    """test_save_mem reads each output's last row; test_return_steps its last 3, 2, 4."""
    v = _weights(np.random.default_rng(12), 8)
    p = Programs(v)
    y0 = T.vector("y0")
    y_init = np.array([0.3, -0.2, 0.7])
    outs = p.deep_states(y0, extra_nit_sot=False)
    read = [o[k:] for o, k in zip(outs, rows)]
    got = _both([p.u1, p.u2, p.x0, y0, p.W_in1], read, mode, _args(v, y_init))
    xs, ys, y3s = _numpy_states(v, y_init, deep=True)
    for a, b, k in zip(got, [y3s + 1, xs, ys], rows):
        np.testing.assert_allclose(a, b[k:], rtol=1e-12)


def _projected_cost(outputs, seed=123):
    """Theano's scan_project_sum: the sum of each output times fixed factors in [0.1, 0.9]
    (the factors are constants here: no random stream to hold still)."""
    rng = np.random.default_rng(seed)
    total = 0
    for o, shape in outputs:
        total = total + T.sum(o * rng.uniform(0.1, 0.9, size=shape))
    return total


def test_grad_multiple_outs(mode):
    """The gradient of a projection of (x, y) of test_multiple_inputs_multiple_outputs over
    7 steps, wrt u1, u2, x0 and W_in1 (y0 is not read): finite differences, and the
    rewrite-free graph."""
    v = _weights(np.random.default_rng(13), 7)
    p = Programs(v)
    y0 = T.scalar("y0")

    def cost(u1, u2, x0, W_in1, y0=T.constant(0.5)):
        p.u1, p.u2, p.x0, p.W_in1 = u1, u2, x0, W_in1
        x, y = p.two_states(y0)
        return _projected_cost([(x, (7, 2)), (y, (7,))])

    point = [v["u1"], v["u2"], v["x0"], v["W_in1"]]
    inputs = [T.matrix("u1"), T.vector("u2"), T.vector("x0"), T.matrix("W_in1")]
    c = cost(*inputs, y0)
    grads = bptt.grad(c, inputs + [y0], disconnected_inputs="ignore")
    got = _both(inputs + [y0], grads, mode, point + [0.5])
    assert not np.any(got[-1])          # y0: disconnected, a zero gradient
    if mode == "PY":    # finite differences need many calls; NUMBA runs the same graph
        bptt.verify_grad(cost, point, rng=np.random.default_rng(0), mode=mode)
