"""Per-call time of the matrix-product kernel that generated code calls.

Each kernel is called in a jitted loop (no Python dispatch in the timing),
on operands laid out as generated code sees them: C-contiguous, or the
transpose of a C array made by a strided view (what ``DimShuffle{1,0}``
lowers to; numba types it as layout 'A'). Columns:

* ``np.dot``      what the Dot lowering emitted before: numba's ``np.dot``
                  (copies every 'A'-layout operand, allocates the result);
* ``dot_mm``      the BLAS runtime (`bptt.link.numba.blas.dot_mm`), fresh result;
* ``c+np.dot``    accumulating the old way: ``c + np.dot(a, b)`` (two allocations);
* ``gemm_into``   accumulating into ``c`` in place (``beta=1``), no allocation;
* ``loops``, ``blas``  the two strategies of `gemm_into` forced, to choose
                  the size below which loops are used (`blas.SMALL`).

Runs with one BLAS thread unless ``OPENBLAS_NUM_THREADS`` says otherwise.

Usage: python benchmarks/dot.py [--dtype float64|float32] [--repeat N]
"""
from __future__ import annotations

import argparse
import os
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # one BLAS thread, as the peers are measured

import numba  # noqa: E402
import numpy as np  # noqa: E402

import bptt.link.numba.runtime  # noqa: E402,F401  (loads blas; runtime and blas import each other)
from bptt.link.numba import blas  # noqa: E402

CASES = [(1, 16, 16), (8, 16, 16), (16, 32, 32), (32, 64, 64), (32, 128, 128), (64, 512, 512)]


def _view_t(x):
    return np.lib.stride_tricks.as_strided(x, shape=(x.shape[1], x.shape[0]),
                                           strides=(x.strides[1], x.strides[0]))


@numba.njit
def k_npdot(a, b, c):
    return np.dot(a, b)


@numba.njit
def k_dot_mm(a, b, c):
    return blas.dot_mm(a, b)


@numba.njit
def k_add_npdot(a, b, c):
    return c + np.dot(a, b)


@numba.njit
def k_gemm_into(a, b, c):
    return blas.gemm_into(1.0, a, b, 1.0, c)


@numba.njit
def k_loops(a, b, c):
    blas._gemm_loops(1.0, a, b, 1.0, c)
    return c


@numba.njit
def k_blas(a, b, c):
    cmaj, ldc = blas._major(c)
    blas._gemm_blas(1.0, a, b, 1.0, c, cmaj, ldc)
    return c


KERNELS = {"np.dot": k_npdot, "dot_mm": k_dot_mm, "c+np.dot": k_add_npdot,
           "gemm_into": k_gemm_into, "loops": k_loops, "blas": k_blas}


def _make_runner(kernel, transpose_a, transpose_b):
    @numba.njit
    def run(n, a, b, c):
        x = _view_t(a) if transpose_a else a[:, :]
        y = _view_t(b) if transpose_b else b[:, :]
        s = 0.0
        for _ in range(n):
            s += kernel(x, y, c)[0, 0]
        return s

    return run


_view_t = numba.njit(_view_t)


def per_call(kernel, a, b, c, ta, tb, repeat):
    """Median over `repeat` rounds of the mean time of one call, in seconds."""
    run = _make_runner(kernel, ta, tb)
    n = max(1, int(2e6 // (a.shape[0] * a.shape[1] * b.shape[1] + 200)))
    run(1, a, b, c)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run(n, a, b, c)
        times.append((time.perf_counter() - t0) / n)
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"dtype {args.dtype}; median of {args.repeat} rounds; microseconds per call; "
          f"gemm_into uses loops up to m*n*k = {blas.SMALL}")
    print(f"{'m x k x n':>16} {'layout':>7} " + " ".join(f"{k:>10}" for k in KERNELS))
    for m, k, n in CASES:
        for ta, tb in [(False, False), (True, False), (False, True)]:
            # the operand that is transposed in the kernel is stored transposed here
            a = rng.standard_normal((k, m) if ta else (m, k)).astype(args.dtype)
            b = rng.standard_normal((n, k) if tb else (k, n)).astype(args.dtype)
            c = np.zeros((m, n), args.dtype)
            layout = ("aT" if ta else "a") + "," + ("bT" if tb else "b")
            row = [per_call(kern, a, b, c, ta, tb, args.repeat) * 1e6 for kern in KERNELS.values()]
            print(f"{f'{m}x{k}x{n}':>16} {layout:>7} " + " ".join(f"{t:>10.3f}" for t in row))


if __name__ == "__main__":
    main()
