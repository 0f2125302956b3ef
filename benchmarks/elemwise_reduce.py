"""A reduction of an elementwise expression: one fused loop (`reduce_of_elemwise`) against
the two loops it replaces, on the benchmark loss ``sum(H[1:] * H[1:])`` over every axis and
``sum(H * H, axis=(0, 1))``, H of 101 x 64 x 512 (the rnn-large trace).

Each variant runs in a fresh process with the other rewrites excluded
(``BPTT_EXCLUDE_REWRITES``); CPU ms per call, min of 7 rounds of 10 calls.

Usage: python benchmarks/elemwise_reduce.py [--dtypes float32,float64]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

# time the compiled code from the first call, not PY calls while it compiles
os.environ.setdefault("BPTT_COMPILE_IN_BACKGROUND", "0")

VARIANTS = {"fused loop": "", "two loops": "reduce_of_elemwise"}


def child(dtype):
    import numpy as np

    import bptt
    import bptt.tensor as T

    h = T.tensor(dtype, shape=(None, None, None), name="H")
    x = np.random.default_rng(0).standard_normal((101, 64, 512)).astype(dtype)
    times = []
    for out in [(h[1:] * h[1:]).sum(), (h * h).sum(axis=(0, 1))]:
        f = bptt.function([h], out)
        f(x)
        rounds = []
        for _ in range(7):
            t0 = time.process_time()
            for _ in range(10):
                f(x)
            rounds.append((time.process_time() - t0) / 10)
        times.append(min(rounds) * 1e3)
    print(" ".join(f"{t:.2f}" for t in times))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dtypes", default="float32,float64")
    p.add_argument("--child", default=None)
    a = p.parse_args()
    if a.child:
        return child(a.child)
    print(f"{'dtype':>8} {'variant':>11} | all axes ms | axes (0, 1) ms")
    for dtype in a.dtypes.split(","):
        for name, exclude in VARIANTS.items():
            env = dict(os.environ, BPTT_EXCLUDE_REWRITES=exclude, OPENBLAS_NUM_THREADS="1")
            out = subprocess.run([sys.executable, __file__, "--child", dtype], env=env,
                                 capture_output=True, text=True, check=True).stdout.split()
            print(f"{dtype:>8} {name:>11} | {out[0]:>11} | {out[1]:>14}")


if __name__ == "__main__":
    main()
