"""Forward pass of a tanh RNN: bptt.scan against a hand-written numba loop.

    h_t = tanh(x_t @ U + h_{t-1} @ W + b),   t = 0..T-1

Cases (T, batch, input, hidden): (1000, 1, 16, 16) and (200, 32, 64, 128).
Both implementations run in this process on the same data, interleaved, and
the report gives medians and the ratio bptt / numba measured in this run.
Compile times are measured in fresh subprocesses: cold (empty cache dir) and
warm (the cache dir the cold run filled).

Usage: python benchmarks/rnn_forward.py [--repeat N] [--dtype float64|float32]
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

from timing import median_time  # noqa: E402  benchmarks/timing.py (run as a script from any directory)

CASES = [(1000, 1, 16, 16), (200, 32, 64, 128)]


def numba_rnn():
    import numba

    @numba.njit(cache=False, error_model="numpy")
    def rnn(X, h0, U, W, b):
        H = np.empty((X.shape[0],) + h0.shape, h0.dtype)
        h = h0
        for t in range(X.shape[0]):
            h = np.tanh(X[t] @ U + h @ W + b)
            H[t] = h
        return H

    return rnn


def bptt_rnn(dtype):
    import bptt
    T = bptt.tensor

    X = T.tensor3("X", dtype=dtype)
    h0 = T.matrix("h0", dtype=dtype)
    U, W = T.matrix("U", dtype=dtype), T.matrix("W", dtype=dtype)
    b = T.vector("b", dtype=dtype)
    H, _ = bptt.scan(lambda x, h, U, W, b: T.tanh(T.dot(x, U) + T.dot(h, W) + b),
                     sequences=X, outputs_info=h0, non_sequences=[U, W, b], name="rnn")
    return bptt.function([X, h0, U, W, b], H)


def data(case, dtype, seed=0):
    t, bsz, nin, nh = case
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((t, bsz, nin)).astype(dtype),
            np.zeros((bsz, nh), dtype),
            (rng.standard_normal((nin, nh)) / np.sqrt(nin)).astype(dtype),
            (rng.standard_normal((nh, nh)) / np.sqrt(nh)).astype(dtype),
            np.zeros(nh, dtype)]


def run_calls(repeat, dtype):
    ref, ours = numba_rnn(), bptt_rnn(dtype)
    rows = []
    for case in CASES:
        args = data(case, dtype)
        np.testing.assert_allclose(ours(*args), ref(*args), rtol=1e-5 if dtype == "float32" else 1e-10,
                                   atol=1e-5 if dtype == "float32" else 1e-12)
        t_ref, t_ours = [], []
        for _ in range(5):  # interleave rounds so machine noise hits both alike
            t_ref.append(median_time(ref, args, repeat))
            t_ours.append(median_time(ours, args, repeat))
        rows.append((case, float(np.median(t_ours)), float(np.median(t_ref))))
    return rows


def compile_child(dtype):
    t0 = time.perf_counter()
    f = bptt_rnn(dtype)
    f(*data(CASES[0], dtype))
    print(json.dumps({"compile_s": time.perf_counter() - t0}))


def compile_time(dtype, cache_dir):
    env = dict(os.environ, BPTT_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, __file__, "--child-compile", "--dtype", dtype],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["compile_s"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--dtype", default="float64")
    p.add_argument("--child-compile", action="store_true")
    a = p.parse_args()
    if a.child_compile:
        return compile_child(a.dtype)
    cache = tempfile.mkdtemp(prefix="bptt-bench-")
    cold = compile_time(a.dtype, cache)
    warm = compile_time(a.dtype, cache)
    print(f"tanh RNN forward, {a.dtype}; compile of the scan function (fresh process, "
          f"incl. numba init): cold {cold:.2f} s, warm (disk cache) {warm:.2f} s")
    print(f"{'T':>5} {'B':>3} {'In':>4} {'H':>4} | {'bptt ms':>9} {'numba ms':>9} | ratio")
    for (t, bsz, nin, nh), ours, ref in run_calls(a.repeat, a.dtype):
        print(f"{t:>5} {bsz:>3} {nin:>4} {nh:>4} | {ours * 1e3:9.3f} {ref * 1e3:9.3f} | "
              f"{ours / ref:5.2f}x")


if __name__ == "__main__":
    main()
