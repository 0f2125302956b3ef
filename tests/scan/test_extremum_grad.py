"""The gradient of a max inside a scan whose backward loop recomputes its input another way.

A loop with ``until`` keeps a sequence-only step value in the loop (the loop may stop
early), while its gradient's loop, which has no ``until``, has that value computed out
of the loop (`scan_pushout_seqs`: one batched product instead of one per step, rounded
differently). The gradient of ``max(z_t)`` compares z_t with the extremum; compared with
the forward loop's recorded maximum, the recomputed z_t missed it by a rounding error and
the step got no gradient. The values are checked against the rewrite-free graph and a
NumPy loop, in PY and NUMBA, over values, taps, n_steps and the stopping step.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from tests.helpers import without_rewrites

_FUNCTIONS = {}


def _functions(mode):
    """(rewritten in `mode`, rewrite-free PY) for y_t = max(W + u_t @ W) in an until loop."""
    if mode not in _FUNCTIONS:
        u, W, h0, n = T.matrix("u"), T.matrix("W"), T.scalar("h0"), T.lscalar("n")

        def step(s, h, W):
            return [T.tanh(h), T.max(W + T.dot(s, W))], bptt.until(h > -0.5)

        (hs, ys), _ = bptt.scan(step, sequences=u, outputs_info=[h0, None],
                                non_sequences=[W], n_steps=n)
        cost = T.sum(ys)
        outs = [ys, cost] + bptt.grad(cost, [u, W])
        ins = [u, W, h0, n]
        with without_rewrites():
            reference = bptt.function(ins, outs, mode="PY")
        _FUNCTIONS[mode] = bptt.function(ins, outs, mode=mode), reference
    return _FUNCTIONS[mode]


def _numpy(u, W, h, n):
    ys, g_u, g_W = [], np.zeros_like(u), np.zeros_like(W)
    for t in range(n):
        z = W + u[t] @ W
        ys.append(z.max())
        hit = (z == z.max()).astype(float)
        g_u[t] = W @ hit.sum(axis=0)
        g_W += hit + np.outer(u[t], hit.sum(axis=0))
        stop, h = h > -0.5, np.tanh(h)
        if stop:
            break
    return np.array(ys), np.sum(ys), g_u, g_W


@pytest.mark.parametrize("mode", ["PY", "NUMBA"])
@given(t=st.integers(1, 5), rows=st.integers(1, 3), cols=st.integers(1, 3),
       h0=st.sampled_from([-0.99, -0.9, -0.7, 0.2]), seed=st.integers(0, 2 ** 16))
def test_a_max_of_a_batched_product_gets_its_gradient(mode, t, rows, cols, h0, seed):
    after, before = _functions(mode)
    rng = np.random.default_rng(seed)
    u, W = rng.uniform(-1, 1, (t, rows)), rng.uniform(-1, 1, (rows, cols))
    got = after(u, W, h0, t)
    for k, (a, b) in enumerate(zip(got, before(u, W, h0, t))):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=f"output {k}")
    for k, (a, e) in enumerate(zip(got, _numpy(u, W, h0, t))):
        np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-12, err_msg=f"NumPy, output {k}")
