"""Elementwise fusion: ns/element of a fused ``tanh(a * b + c)`` loop against NumPy, and
the cold compile time (CPU, fresh process, empty cache) of the demo's two functions.

Usage: python benchmarks/elemwise_fusion.py [--n 1000000]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

# time the compiled code from the first call, not PY calls while it compiles
os.environ.setdefault("BPTT_COMPILE_IN_BACKGROUND", "0")


def per_element_ns(fn, n, repeat=30):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) / n * 1e9


def loop_timing(n):
    import bptt
    import bptt.tensor as T

    a, b, c = T.vector("a"), T.vector("b"), T.vector("c")
    f = bptt.function([a, b, c], T.tanh(a * b + c), mode="NUMBA")
    rng = np.random.default_rng(0)
    A, B, C = (rng.standard_normal(n) for _ in range(3))
    np.testing.assert_allclose(f(A, B, C), np.tanh(A * B + C), rtol=1e-12)
    print(f"fused tanh(a*b+c), {n} float64: bptt {per_element_ns(lambda: f(A, B, C), n):.2f} "
          f"ns/element, NumPy {per_element_ns(lambda: np.tanh(A * B + C), n):.2f} ns/element")


def demo_compile_child():
    c0 = time.process_time()
    import bptt
    import bptt.tensor as T
    from bptt.demo import N_IN, N_OUT, layer_loss

    W = bptt.shared(np.zeros((N_IN, N_OUT)), name="W")
    b = bptt.shared(np.zeros(N_OUT), name="b")
    x, y = T.matrix("x"), T.matrix("y")
    loss = layer_loss(W, b, x, y)
    gW, gb = bptt.grad(loss, [W, b])
    bptt.function([x, y], [loss, gW, gb], mode="NUMBA")
    bptt.function([x, y], loss, updates=[(W, W - 0.5 * gW), (b, b - 0.5 * gb)], mode="NUMBA")
    print(json.dumps({"cpu": time.process_time() - c0}))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=10**6)
    p.add_argument("--child", action="store_true")
    a = p.parse_args()
    if a.child:
        return demo_compile_child()
    env = dict(os.environ, BPTT_CACHE_DIR=tempfile.mkdtemp(prefix="bptt-bench-"))
    out = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True,
                         text=True, check=True)
    cpu = json.loads(out.stdout.strip().splitlines()[-1])["cpu"]
    print(f"demo graph (2 functions) cold compile, fresh process: {cpu:.1f} s cpu")
    loop_timing(a.n)


if __name__ == "__main__":
    main()
