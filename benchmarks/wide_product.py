"""Products with a short, wide result: bptt's `gemm_into` against NumPy's ``np.dot``.

NumPy asks its OpenBLAS for a row-major ``m x n`` result as ``C^T = B^T A^T``, with
BLAS's M the ``n`` columns: what `gemm_into` did for every product before it
computed short, wide float32 results column-major (bptt/link/numba/blas.py,
"Short, wide results"). Both call the same library, so the ratio is the layout's.
Each figure is the least thread CPU time per call over 15 runs of a loop.

    python benchmarks/wide_product.py [float32] [float64]
"""
from __future__ import annotations

import os
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402

import bptt.link.numba.runtime  # noqa: E402,F401  (loads blas; runtime and blas import each other)
from bptt.link.numba.blas import gemm_into_call  # noqa: E402

# (rows of the result, inner size, columns, whether b is a transposed view): an LSTM
# step's h @ W_hh.T and dz @ W_hh at B = 32, H = 256, smaller batches, and shapes
# the rule leaves alone (a square-ish and a tall result)
CASES = [(32, 256, 1024, True), (32, 1024, 256, False), (32, 64, 1024, True),
         (8, 256, 1024, True), (64, 256, 256, True), (1, 256, 1024, True),
         (2048, 256, 1024, True)]


@numba.njit
def _loop(n, a, b, c):
    for _ in range(n):
        gemm_into_call(1.0, a, b, 0.0, c)


def _numpy_loop(n, a, b, c):
    for _ in range(n):
        np.dot(a, b, out=c)


def _best(f, *args):
    f(*args)
    best = float("inf")
    for _ in range(15):
        t0 = time.thread_time()
        f(*args)
        best = min(best, time.thread_time() - t0)
    return best


def main():
    for dt in sys.argv[1:] or ["float32", "float64"]:
        rng = np.random.default_rng(0)
        for m, k, n, transposed in CASES:
            a = rng.random((m, k)).astype(dt)
            b = rng.random((n, k)).astype(dt).T if transposed else rng.random((k, n)).astype(dt)
            c = np.empty((m, n), dt)
            reps = max(3, int(3e7 / (m * n * k)))
            ours = _best(_loop, reps, a, b, c) / reps * 1e6
            if not np.allclose(c, a @ b, rtol=1e-3):
                raise SystemExit(f"wrong product for {(m, k, n)}")
            numpy = _best(_numpy_loop, reps, a, b, c) / reps * 1e6
            print(f"{dt} {m} x {k} @ {k} x {n}{' (b transposed)' if transposed else ''}: "
                  f"gemm_into {ours:.1f} us, np.dot {numpy:.1f} us, ratio {ours / numpy:.2f}")


if __name__ == "__main__":
    main()
