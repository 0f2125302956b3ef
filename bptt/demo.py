"""A short tour of bptt: ``python -m bptt.demo``.

Builds a one-layer tanh network with a squared-error loss, differentiates the
loss, checks the gradient against finite differences with `verify_grad`,
trains the layer for a few steps with shared variables and updates, and
prints results and timings in both modes (PY: the reference interpreter;
NUMBA: generated machine code, cached on disk in ``BPTT_CACHE_DIR``).
"""
from __future__ import annotations

import statistics
import time

import numpy as np

import bptt
import bptt.tensor as T

N_IN, N_OUT, BATCH = 5, 3, 8


def layer_loss(W, b, x, y):
    """Mean squared error of ``tanh(x @ W + b)`` against targets `y`."""
    h = T.tanh(T.dot(x, W) + b)
    return T.mean((h - y) ** 2)


def per_call_seconds(fn, *args, repeat=7, number=200):
    """Median over `repeat` runs of the mean time of one call."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn(*args)
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def run(mode, data):
    x_val, y_val, W0, b0 = data
    W = bptt.shared(W0, name="W")
    b = bptt.shared(b0, name="b")
    x, y = T.matrix("x"), T.matrix("y")
    loss = layer_loss(W, b, x, y)
    g_W, g_b = bptt.grad(loss, [W, b])

    t0 = time.perf_counter()
    value_and_grad = bptt.function([x, y], [loss, g_W, g_b], mode=mode, name="value_and_grad")
    train = bptt.function([x, y], loss, updates=[(W, W - 0.5 * g_W), (b, b - 0.5 * g_b)],
                          mode=mode, name="train")
    compile_s = time.perf_counter() - t0

    loss0, gW, gb = value_and_grad(x_val, y_val)
    call_s = per_call_seconds(value_and_grad, x_val, y_val)

    t0 = time.perf_counter()
    bptt.verify_grad(lambda W_, b_: layer_loss(W_, b_, T.constant(x_val), T.constant(y_val)),
                     [W0, b0], mode=mode)
    verify_s = time.perf_counter() - t0

    losses = [float(train(x_val, y_val)) for _ in range(100)]
    return dict(loss0=float(loss0), gW=gW, gb=gb, compile_s=compile_s, call_s=call_s,
                verify_s=verify_s, losses=losses, W=W.get_value())


def main():
    rng = np.random.default_rng(0)
    data = (rng.standard_normal((BATCH, N_IN)), np.tanh(rng.standard_normal((BATCH, N_OUT))),
            0.3 * rng.standard_normal((N_IN, N_OUT)), np.zeros(N_OUT))
    print(f"bptt {bptt.__version__}: loss = mean((tanh(x @ W + b) - y) ** 2), "
          f"x {data[0].shape}, W {data[2].shape}")
    print(f"disk cache: {bptt.config.cache_dir or 'disabled'}\n")
    results = {}
    for mode in ("PY", "NUMBA"):
        r = results[mode] = run(mode, data)
        print(f"[{mode}]")
        print(f"  compile 2 functions        {r['compile_s']:8.3f} s")
        print(f"  one call (loss + grads)    {r['call_s'] * 1e6:8.1f} us")
        print(f"  verify_grad                {r['verify_s']:8.3f} s  (passed)")
        print(f"  loss {r['loss0']:.6f}; |dloss/dW| = {np.linalg.norm(r['gW']):.6f}, "
              f"|dloss/db| = {np.linalg.norm(r['gb']):.6f}")
        print(f"  100 training steps: loss {r['losses'][0]:.6f} -> {r['losses'][-1]:.6f}\n")
    py, nb = results["PY"], results["NUMBA"]
    same = (np.allclose(py["gW"], nb["gW"], rtol=1e-10, atol=1e-12)
            and np.allclose(py["W"], nb["W"], rtol=1e-8, atol=1e-10))
    print(f"PY and NUMBA agree on gradients and trained weights: {same}")
    if not same or not nb["losses"][-1] < nb["losses"][0]:
        raise SystemExit("demo: unexpected results")


if __name__ == "__main__":
    main()
