"""The four benchmark cases, their data, output order and FLOP counts.

loss = 0.5 * sum_t sum(h_t ** 2); every implementation returns
``[loss, g_Wx, g_Wh, g_b, g_h0]`` (tanh RNN) or ``[loss, g_Wx, g_Wh, g_b,
g_h0, g_c0]`` (LSTM), where

    rnn:  h_t = tanh(x_t @ Wx + h_{t-1} @ Wh + b)
    lstm: z_t = x_t @ Wx + h_{t-1} @ Wh + b, gates [i | f | o | g] along the
          columns of z_t (sigmoid, sigmoid, sigmoid, tanh),
          c_t = f * c_{t-1} + i * g,  h_t = o * tanh(c_t)
"""
from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

# name -> (kind, T, batch, input, hidden)
CASES = {
    "rnn-small": ("rnn", 1000, 1, 16, 16),
    "rnn-medium": ("rnn", 200, 32, 64, 128),
    "rnn-large": ("rnn", 100, 64, 256, 512),
    "lstm": ("lstm", 200, 32, 64, 128),
}


class Built(NamedTuple):
    """An implementation ready to run on one cell type and dtype.

    ``prepare(args)`` converts the NumPy inputs once (to tensors, device arrays);
    ``run(*prepared)`` computes loss and gradients and returns when they are done;
    ``to_numpy(result)`` turns a result into the list of NumPy arrays.
    """

    prepare: Callable
    run: Callable
    to_numpy: Callable


def identity_prepare(args):
    return list(args)


def as_numpy_list(result):
    return [np.asarray(r) for r in result]


def output_names(kind):
    return ["loss", "Wx", "Wh", "b", "h0"] + (["c0"] if kind == "lstm" else [])


def data(kind, t, bsz, nin, nh, dtype, seed=0):
    """Inputs ``[X, h0, Wx, Wh, b]`` (rnn) or ``[X, h0, c0, Wx, Wh, b]`` (lstm)."""
    rng = np.random.default_rng(seed)
    width = nh if kind == "rnn" else 4 * nh
    X = rng.standard_normal((t, bsz, nin))
    h0 = 0.1 * rng.standard_normal((bsz, nh))
    Wx = rng.standard_normal((nin, width)) / np.sqrt(nin)
    Wh = rng.standard_normal((nh, width)) / np.sqrt(nh)
    b = 0.1 * rng.standard_normal(width)
    if kind == "rnn":
        args = [X, h0, Wx, Wh, b]
    else:
        args = [X, h0, 0.1 * rng.standard_normal((bsz, nh)), Wx, Wh, b]
    return [np.asarray(a, dtype) for a in args]


def matmul_flops(kind, t, bsz, nin, nh):
    """FLOPs of the matrix products of one forward+backward call.

    Per step, with width w = nh (rnn) or 4 nh (lstm): forward x@Wx and h@Wh;
    backward Wx^T-side x^T@dz, h^T@dz and dz@Wh^T. A product (m,k)@(k,n) is
    2 m k n FLOPs.
    """
    w = nh if kind == "rnn" else 4 * nh
    return t * 2 * bsz * w * (2 * nin + 3 * nh)


def trace_bytes(kind, t, bsz, nin, nh, dtype):
    """Bytes of the forward trace: T x B x H per state (h; h and c for the LSTM)."""
    states = 1 if kind == "rnn" else 2
    return states * t * bsz * nh * np.dtype(dtype).itemsize
