"""JAX: ``lax.scan`` for the forward loop, ``jax.value_and_grad`` for BPTT, ``jax.jit``.

Single-threaded by ``XLA_FLAGS`` (set by peers.py before the process starts);
float64 needs ``jax_enable_x64``. The persistent compilation cache in
``$BENCH_CACHE_DIR`` is what a warm start loads.
"""
from __future__ import annotations

import os

import numpy as np

from .cases import Built

KINDS = ("rnn", "lstm")


def _configure(dtype):
    import jax

    jax.config.update("jax_enable_x64", dtype == "float64")
    jax.config.update("jax_platforms", "cpu")
    cache = os.environ.get("BENCH_CACHE_DIR")
    if cache:
        jax.config.update("jax_compilation_cache_dir", os.path.join(cache, "jax"))
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)


def _rnn_loss(Wx, Wh, b, h0, X):
    import jax
    import jax.numpy as jnp

    def step(h, x):
        h = jnp.tanh(x @ Wx + h @ Wh + b)
        return h, h

    _, H = jax.lax.scan(step, h0, X)
    return 0.5 * jnp.sum(H * H)


def _lstm_loss(Wx, Wh, b, h0, c0, X):
    import jax
    import jax.numpy as jnp

    def step(carry, x):
        h, c = carry
        z = x @ Wx + h @ Wh + b
        n = h.shape[1]
        i, f, o = (jax.nn.sigmoid(z[:, k * n:(k + 1) * n]) for k in range(3))
        c = f * c + i * jnp.tanh(z[:, 3 * n:])
        h = o * jnp.tanh(c)
        return (h, c), h

    _, H = jax.lax.scan(step, (h0, c0), X)
    return 0.5 * jnp.sum(H * H)


def build(kind, dtype):
    _configure(dtype)
    import jax

    if kind == "rnn":
        n_params = 4
        vg = jax.jit(jax.value_and_grad(_rnn_loss, argnums=tuple(range(n_params))))
    else:
        n_params = 5
        vg = jax.jit(jax.value_and_grad(_lstm_loss, argnums=tuple(range(n_params))))

    def prepare(args):
        # inputs [X, h0, (c0,) Wx, Wh, b] -> loss arguments [Wx, Wh, b, h0, (c0,) X]
        X, states, weights = args[0], args[1:-3], args[-3:]
        return [jax.device_put(a) for a in [*weights, *states, X]]

    def run(*prepared):
        return jax.block_until_ready(vg(*prepared))

    def to_numpy(result):
        loss, grads = result
        return [np.asarray(loss)] + [np.asarray(g) for g in grads]

    return Built(prepare, run, to_numpy)
