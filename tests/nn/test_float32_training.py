"""A float32 training step follows the same step in float64 (the float32-only fast paths).

Several lowerings run only in float32: short, wide products computed column-major and
copied back transposed (bptt/link/numba/blas.py), SumTo's partial sums by lanes, the
chunked row sums of summed nit_sots. The char-LM step of benchmarks/train_step.py
(Embedding, LSTM, Dense, cross-entropy, clipping, Adam), small, runs all of them; from
the same initial values its float32 losses must stay within float32's rounding of the
float64 ones.
"""
import argparse
import os
import sys
from unittest import mock

import numpy as np

import bptt

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "benchmarks"))
with mock.patch.dict(os.environ):  # train_step sets a compile variable at import
    from train_step import bptt_step_graph

# Products above the plain-loop threshold, results at least four times as wide as tall
# (B x 4H), so the float32 column-major path runs.
SIZES = dict(V=20, E=16, H=32, B=8, T=12)


def _train(dtype, mode, batches):
    args = argparse.Namespace(dtype=dtype, **SIZES)
    inputs, loss, updates, params = bptt_step_graph(args, lr=1e-2)
    step = bptt.function(inputs, loss, updates=updates, mode=mode)
    losses = np.array([float(step(x, y)) for x, y in batches])
    return losses, [p.get_value() for p in params]


def test_float32_char_lm_steps_follow_float64(mode):
    rng = np.random.default_rng(0)
    xs = [rng.integers(0, SIZES["V"], (SIZES["T"], SIZES["B"])) for _ in range(20)]
    batches = [(x, (3 * x + 1) % SIZES["V"]) for x in xs]     # learnable: the loss falls
    loss64, params64 = _train("float64", "PY", batches)   # the reference: no float32 paths
    loss32, params32 = _train("float32", mode, batches)
    # The steps must have trained something for the comparison to mean anything.
    assert loss64[-1] < loss64[0] - 0.3, loss64
    np.testing.assert_allclose(loss32, loss64, rtol=1e-4)
    for p32, p64 in zip(params32, params64):
        assert p32.dtype == np.float32
        np.testing.assert_allclose(p32, p64, rtol=1e-3, atol=1e-4)
