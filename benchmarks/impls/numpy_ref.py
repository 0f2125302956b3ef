"""Hand-written BPTT in NumPy: the reference every implementation is checked against.

The forward pass stores h_t (and c_t and the gates for the LSTM); the backward
pass walks t = T-1 .. 0 carrying dh (and dc) and accumulates the weight
gradients with one matrix product per weight per step.
"""
from __future__ import annotations

import numpy as np

from .cases import Built, as_numpy_list, identity_prepare

KINDS = ("rnn", "lstm")


def rnn(X, h0, Wx, Wh, b):
    T = X.shape[0]
    H = np.empty((T,) + h0.shape, h0.dtype)
    h = h0
    for t in range(T):
        h = np.tanh(X[t] @ Wx + h @ Wh + b)
        H[t] = h
    gWx, gWh, gb = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    dh = np.zeros_like(h0)
    for t in range(T - 1, -1, -1):
        da = (dh + H[t]) * (1 - H[t] * H[t])
        hp = H[t - 1] if t > 0 else h0
        gWx += X[t].T @ da
        gWh += hp.T @ da
        gb += da.sum(axis=0)
        dh = da @ Wh.T
    return [0.5 * np.vdot(H, H), gWx, gWh, gb, dh]


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def lstm(X, h0, c0, Wx, Wh, b):
    T, n = X.shape[0], h0.shape[1]
    Hs = np.empty((T,) + h0.shape, h0.dtype)
    Cs = np.empty_like(Hs)
    G = np.empty((T, h0.shape[0], 4 * n), h0.dtype)  # activated gates [i | f | o | g]
    h, c = h0, c0
    for t in range(T):
        z = X[t] @ Wx + h @ Wh + b
        G[t, :, :3 * n] = _sigmoid(z[:, :3 * n])
        G[t, :, 3 * n:] = np.tanh(z[:, 3 * n:])
        i, f, o, g = np.split(G[t], 4, axis=1)
        c = f * c + i * g
        h = o * np.tanh(c)
        Hs[t], Cs[t] = h, c
    gWx, gWh, gb = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
    dh, dc = np.zeros_like(h0), np.zeros_like(c0)
    dz = np.empty((h0.shape[0], 4 * n), h0.dtype)
    for t in range(T - 1, -1, -1):
        i, f, o, g = np.split(G[t], 4, axis=1)
        cp = Cs[t - 1] if t > 0 else c0
        hp = Hs[t - 1] if t > 0 else h0
        tc = np.tanh(Cs[t])
        dh = dh + Hs[t]
        dc = dc + dh * o * (1 - tc * tc)
        dz[:, :n] = dc * g * i * (1 - i)
        dz[:, n:2 * n] = dc * cp * f * (1 - f)
        dz[:, 2 * n:3 * n] = dh * tc * o * (1 - o)
        dz[:, 3 * n:] = dc * i * (1 - g * g)
        gWx += X[t].T @ dz
        gWh += hp.T @ dz
        gb += dz.sum(axis=0)
        dh = dz @ Wh.T
        dc = dc * f
    return [0.5 * np.vdot(Hs, Hs), gWx, gWh, gb, dh, dc]


def build(kind, dtype):
    fn = rnn if kind == "rnn" else lstm
    return Built(identity_prepare, fn, as_numpy_list)
