"""Forward + backward (BPTT) of a tanh RNN and an LSTM: bptt against hand-written numba.

loss = 0.5 * sum_t sum(h_t ** 2); gradients with respect to every weight and
the initial states. Cases (T, batch, input, hidden):

    rnn  (1000, 1, 16, 16), (200, 32, 64, 128)
    lstm (200, 32, 64, 128)

Both implementations run in this process on the same data; their gradients
are compared before timing; rounds are interleaved; medians are reported
with the ratio bptt / numba measured in this run. Compile times are measured
in fresh subprocesses: cold (empty cache dir) and warm (the cache the cold
run filled).

Usage: python benchmarks/bptt_rnn.py [--repeat N] [--dtype float64|float32] [--quick]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

# time the compiled code from the first call, not PY calls while it compiles
os.environ.setdefault("BPTT_COMPILE_IN_BACKGROUND", "0")

# One BLAS thread, as the peers were measured: set before numpy loads OpenBLAS
# (on a loaded 2-core machine a threaded BLAS made medium cases 100x slower).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from impls.cases import data  # noqa: E402  (the inputs every benchmark uses)
from timing import median_time  # noqa: E402  benchmarks/timing.py (run as a script from any directory)

CASES = [("rnn", 1000, 1, 16, 16), ("rnn", 200, 32, 64, 128), ("lstm", 200, 32, 64, 128)]


# -- hand-written references ------------------------------------------------------------
def numba_references(cache=False):
    import numba

    @numba.njit(cache=cache, error_model="numpy")
    def rnn(X, h0, U, W, b):
        one = np.ones(1, h0.dtype)[0]  # a float literal would make float32 arrays float64
        T = X.shape[0]
        H = np.empty((T,) + h0.shape, h0.dtype)
        h = h0
        for t in range(T):
            h = np.tanh(X[t] @ U + h @ W + b)
            H[t] = h
        gU, gW, gb = np.zeros_like(U), np.zeros_like(W), np.zeros_like(b)
        dh = np.zeros_like(h0)
        for t in range(T - 1, -1, -1):
            da = (dh + H[t]) * (one - H[t] * H[t])
            hp = H[t - 1] if t > 0 else h0
            gU += X[t].T @ da
            gW += hp.T @ da
            gb += da.sum(axis=0)
            dh = da @ W.T
        return 0.5 * (H * H).sum(), gU, gW, gb, dh

    @numba.njit(cache=cache, error_model="numpy")
    def lstm(X, h0, c0, Wx, Wh, b):
        one = np.ones(1, h0.dtype)[0]
        T, n = X.shape[0], h0.shape[1]
        Hs = np.empty((T,) + h0.shape, h0.dtype)
        Cs = np.empty((T,) + h0.shape, h0.dtype)
        G = np.empty((T, h0.shape[0], 4 * n), h0.dtype)
        h, c = h0, c0
        for t in range(T):
            z = X[t] @ Wx + h @ Wh + b
            i = one / (one + np.exp(-z[:, :n]))
            f = one / (one + np.exp(-z[:, n:2 * n]))
            o = one / (one + np.exp(-z[:, 2 * n:3 * n]))
            g = np.tanh(z[:, 3 * n:])
            c = f * c + i * g
            h = o * np.tanh(c)
            G[t, :, :n], G[t, :, n:2 * n], G[t, :, 2 * n:3 * n], G[t, :, 3 * n:] = i, f, o, g
            Hs[t], Cs[t] = h, c
        gWx, gWh, gb = np.zeros_like(Wx), np.zeros_like(Wh), np.zeros_like(b)
        dh, dc = np.zeros_like(h0), np.zeros_like(c0)
        dz = np.empty((h0.shape[0], 4 * n), h0.dtype)
        for t in range(T - 1, -1, -1):
            i, f, o, g = G[t, :, :n], G[t, :, n:2 * n], G[t, :, 2 * n:3 * n], G[t, :, 3 * n:]
            cp = Cs[t - 1] if t > 0 else c0
            hp = Hs[t - 1] if t > 0 else h0
            tc = np.tanh(Cs[t])
            dh = dh + Hs[t]
            dc = dc + dh * o * (one - tc * tc)
            dz[:, :n] = dc * g * i * (one - i)
            dz[:, n:2 * n] = dc * cp * f * (one - f)
            dz[:, 2 * n:3 * n] = dh * tc * o * (one - o)
            dz[:, 3 * n:] = dc * i * (one - g * g)
            gWx += X[t].T @ dz
            gWh += hp.T @ dz
            gb += dz.sum(axis=0)
            dh = dz @ Wh.T
            dc = dc * f
        return 0.5 * (Hs * Hs).sum(), gWx, gWh, gb, dh, dc

    return {"rnn": rnn, "lstm": lstm}


# -- bptt ---------------------------------------------------------------------------------
def bptt_function(kind, dtype, wrt_x=False):
    """The loss and its gradients (every weight and initial state; also X if `wrt_x`)."""
    import bptt
    T = bptt.tensor

    X = T.tensor3("X", dtype=dtype)
    h0 = T.matrix("h0", dtype=dtype)
    if kind == "rnn":
        U, W = T.matrix("U", dtype=dtype), T.matrix("W", dtype=dtype)
        b = T.vector("b", dtype=dtype)
        H, _ = bptt.scan(lambda x, h, U, W, b: T.tanh(T.dot(x, U) + T.dot(h, W) + b),
                         sequences=X, outputs_info=h0, non_sequences=[U, W, b], name="rnn")
        params, inputs = [U, W, b, h0], [X, h0, U, W, b]
    else:
        c0 = T.matrix("c0", dtype=dtype)
        Wx, Wh = T.matrix("Wx", dtype=dtype), T.matrix("Wh", dtype=dtype)
        b = T.vector("b", dtype=dtype)

        def step(x, h, c, Wx, Wh, b):
            n = h.shape[1]
            z = T.dot(x, Wx) + T.dot(h, Wh) + b
            i = T.nnet.sigmoid(z[:, :n])
            f = T.nnet.sigmoid(z[:, n:2 * n])
            o = T.nnet.sigmoid(z[:, 2 * n:3 * n])
            g = T.tanh(z[:, 3 * n:])
            c_new = f * c + i * g
            return o * T.tanh(c_new), c_new

        (H, _), _ = bptt.scan(step, sequences=X, outputs_info=[h0, c0],
                              non_sequences=[Wx, Wh, b], name="lstm")
        params, inputs = [Wx, Wh, b, h0, c0], [X, h0, c0, Wx, Wh, b]
    loss = 0.5 * (H ** 2).sum()
    return bptt.function(inputs, [loss] + bptt.grad(loss, params + ([X] if wrt_x else [])))


def run_calls(repeat, dtype, cases):
    refs = numba_references()
    rows = []
    for kind, t, bsz, nin, nh in cases:
        ours, ref = bptt_function(kind, dtype), refs[kind]
        args = data(kind, t, bsz, nin, nh, dtype)
        tol = 2e-3 if dtype == "float32" else 1e-8
        for a, e in zip(ours(*args), ref(*args)):  # same order: loss, weights, initial states
            np.testing.assert_allclose(a, e, rtol=tol, atol=tol)
        t_ours, t_ref = [], []
        for _ in range(5):
            t_ref.append(median_time(ref, args, repeat))
            t_ours.append(median_time(ours, args, repeat))
        rows.append(((kind, t, bsz, nin, nh), float(np.median(t_ours)), float(np.median(t_ref))))
    return rows


def compile_child(kind, dtype):
    t0 = time.perf_counter()
    c0 = time.process_time()
    f = bptt_function(kind, dtype)
    f(*data(kind, 4, 2, 3, 5, dtype))
    print(json.dumps({"wall": time.perf_counter() - t0, "cpu": time.process_time() - c0}))


def compile_time(kind, dtype, cache_dir):
    env = dict(os.environ, BPTT_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, __file__, "--child-compile", kind, "--dtype", dtype],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--dtype", default="float64")
    p.add_argument("--quick", action="store_true", help="only the small RNN case")
    p.add_argument("--child-compile", default=None)
    a = p.parse_args()
    if a.child_compile:
        return compile_child(a.child_compile, a.dtype)
    cases = CASES[:1] if a.quick else CASES
    for kind in sorted({c[0] for c in cases}):
        cache = tempfile.mkdtemp(prefix="bptt-bench-")
        cold, warm = compile_time(kind, a.dtype, cache), compile_time(kind, a.dtype, cache)
        print(f"{kind} forward+backward compile (fresh process, incl. numba init): "
              f"cold {cold['wall']:.1f} s wall / {cold['cpu']:.1f} s cpu, "
              f"warm {warm['wall']:.2f} s wall / {warm['cpu']:.2f} s cpu")
    print(f"{'case':>5} {'T':>5} {'B':>3} {'In':>4} {'H':>4} | {'bptt ms':>9} {'numba ms':>9} | ratio")
    for (kind, t, bsz, nin, nh), ours, ref in run_calls(a.repeat, a.dtype, cases):
        print(f"{kind:>5} {t:>5} {bsz:>3} {nin:>4} {nh:>4} | {ours * 1e3:9.2f} {ref * 1e3:9.2f} | "
              f"{ours / ref:5.2f}x")


if __name__ == "__main__":
    main()
