"""Seeded initialisers: each returns a NumPy array of the requested shape.

Fan-in and fan-out follow PyTorch's convention for a weight of shape
``(out, in, *kernel)``: ``fan_in = in * prod(kernel)``, ``fan_out = out *
prod(kernel)``; a vector has ``fan_in = fan_out = len``. Every initialiser
takes `rng`, a ``numpy.random.Generator``, a seed, or None (seed 0), so two
models built with the same seed start from the same weights.

References: Glorot & Bengio (2010) for glorot/xavier, He et al. (2015) for
he, Saxe et al. (2014) for orthogonal.
"""
from __future__ import annotations

import numpy as np

from ..config import config

__all__ = ["as_rng", "fans", "glorot_uniform", "glorot_normal", "xavier_uniform",
           "xavier_normal", "he_uniform", "he_normal", "orthogonal", "uniform", "normal",
           "zeros", "constant"]


def as_rng(rng):
    """A ``numpy.random.Generator`` from a Generator, an int seed or None (seed 0)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(0 if rng is None else int(rng))
    raise TypeError(f"rng must be a numpy.random.Generator, an int seed or None, "
                    f"got {type(rng).__name__}")


def fans(shape):
    """(fan_in, fan_out) of a weight of `shape` laid out as ``(out, in, *kernel)``."""
    shape = tuple(shape)
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def _dtype(dtype):
    return np.dtype(config.floatX if dtype is None else dtype)


def uniform(shape, low, high, rng=None, dtype=None):
    """Uniform on [low, high)."""
    return as_rng(rng).uniform(low, high, size=shape).astype(_dtype(dtype))


def normal(shape, std=1.0, mean=0.0, rng=None, dtype=None):
    """Normal with mean `mean` and standard deviation `std`."""
    return (mean + std * as_rng(rng).standard_normal(shape)).astype(_dtype(dtype))


def glorot_uniform(shape, gain=1.0, rng=None, dtype=None):
    """U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = fans(shape)
    a = gain * np.sqrt(6.0 / (fan_in + fan_out))
    return uniform(shape, -a, a, rng, dtype)


def glorot_normal(shape, gain=1.0, rng=None, dtype=None):
    """N(0, std²) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = fans(shape)
    return normal(shape, gain * np.sqrt(2.0 / (fan_in + fan_out)), rng=rng, dtype=dtype)


xavier_uniform = glorot_uniform
xavier_normal = glorot_normal


def he_uniform(shape, gain=np.sqrt(2.0), rng=None, dtype=None):
    """U(-a, a) with ``a = gain * sqrt(3 / fan_in)`` (gain √2 for ReLU)."""
    a = gain * np.sqrt(3.0 / fans(shape)[0])
    return uniform(shape, -a, a, rng, dtype)


def he_normal(shape, gain=np.sqrt(2.0), rng=None, dtype=None):
    """N(0, std²) with ``std = gain / sqrt(fan_in)`` (gain √2 for ReLU)."""
    return normal(shape, gain / np.sqrt(fans(shape)[0]), rng=rng, dtype=dtype)


def orthogonal(shape, gain=1.0, rng=None, dtype=None):
    """A (semi-)orthogonal matrix: the rows, or the columns, are orthonormal.

    Shapes of more than two dimensions are flattened to ``(shape[0], rest)``.
    The QR factors' signs are fixed so the result is uniform over orthogonal
    matrices (Mezzadri 2007).
    """
    shape = tuple(shape)
    if len(shape) < 2:
        raise ValueError(f"orthogonal: needs a shape of at least 2 dimensions, got {shape}")
    rows, cols = shape[0], int(np.prod(shape[1:]))
    a = as_rng(rng).standard_normal((max(rows, cols), min(rows, cols)))
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return (gain * q).reshape(shape).astype(_dtype(dtype))


def zeros(shape, dtype=None):
    """All zeros."""
    return np.zeros(shape, dtype=_dtype(dtype))


def constant(shape, value, dtype=None):
    """Every entry `value`."""
    return np.full(shape, value, dtype=_dtype(dtype))
