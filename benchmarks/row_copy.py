"""What writing each scan step's output into its buffer row costs (issue 5, in-place states).

    python benchmarks/row_copy.py

The scan loop calls the step, which returns a fresh array, and copies it into
the buffer row (`copy_into`). This compares, on the tanh RNN step, that loop
with one whose step writes its last elementwise op straight into the row (no
allocation, no copy), and times the copy and a small allocation alone.
"""
import time

import numba
import numpy as np

import bptt.link.numba.runtime  # noqa: F401  (loads the runtime before scan_runtime)
from bptt.link.numba.scan_runtime import copy_into


@numba.njit(cache=False)
def step_fresh(xt, h, W, b):
    return np.tanh(xt + np.dot(h, W) + b)


@numba.njit(cache=False)
def step_into(xt, h, W, b, dst):
    a = (xt + np.dot(h, W) + b).reshape(-1)
    flat = dst.reshape(-1)
    for i in range(a.size):
        flat[i] = np.tanh(a[i])


@numba.njit(cache=False)
def loop_copy(X, h0, W, b):
    buf = np.empty((X.shape[0] + 1,) + h0.shape)
    copy_into(buf[0], h0)
    for t in range(X.shape[0]):
        copy_into(buf[t + 1], step_fresh(X[t], buf[t], W, b))
    return buf


@numba.njit(cache=False)
def loop_into(X, h0, W, b):
    buf = np.empty((X.shape[0] + 1,) + h0.shape)
    copy_into(buf[0], h0)
    for t in range(X.shape[0]):
        step_into(X[t], buf[t], W, b, buf[t + 1])
    return buf


@numba.njit(cache=False)
def copies_only(buf, row):
    for t in range(buf.shape[0]):
        copy_into(buf[t], row)


@numba.njit(cache=False)
def allocs_only(n, m):
    s = 0.0
    for t in range(n):
        a = np.empty(m)
        a[0] = t
        s += a[0]
    return s


def med(f, *a, r=200):
    f(*a)
    ts = []
    for _ in range(r):
        t0 = time.perf_counter()
        f(*a)
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def main():
    rng = np.random.default_rng(0)
    for t, bsz, nh, r in ((1000, 1, 16, 200), (200, 32, 128, 10)):
        X, h0 = rng.standard_normal((t, bsz, nh)), rng.standard_normal((bsz, nh))
        W, b = rng.standard_normal((nh, nh)) / np.sqrt(nh), rng.standard_normal(nh)
        assert np.allclose(loop_copy(X, h0, W, b), loop_into(X, h0, W, b))
        tc, ti = med(loop_copy, X, h0, W, b, r=r), med(loop_into, X, h0, W, b, r=r)
        buf, row = np.empty((t, bsz, nh)), np.ones((bsz, nh))
        print(f"T={t} B={bsz} H={nh}: per step, fresh output + copy {tc / t * 1e9:.0f} ns, "
              f"written into the row {ti / t * 1e9:.0f} ns; copy_into alone "
              f"{med(copies_only, buf, row, r=r) / t * 1e9:.0f} ns, np.empty(B*H) alone "
              f"{med(allocs_only, t, bsz * nh, r=r) / t * 1e9:.0f} ns")


if __name__ == "__main__":
    main()
