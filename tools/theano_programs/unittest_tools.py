"""``theano.tests.unittest_tools`` for Theano's test files run on bptt.

Theano's helpers with the same names and meaning: the seed of the unit tests
(666), NumPy's global seeding, a comparison with Theano's dtype-dependent
tolerances that raises `WrongValue`, `verify_grad` seeded the same way, and
the ``attr`` decorator (a no-op: these runs select nothing by attribute).
"""
from __future__ import annotations

import functools

import numpy as np

import bptt

RSEED = 666


def fetch_seed(pseed=None):
    return int(pseed or RSEED)


def seed_rng(pseed=None):
    seed = fetch_seed(pseed)
    np.random.seed(seed)
    return seed


class WrongValue(AssertionError):
    """Raised by `assert_allclose`: the value differs beyond the tolerance."""


def _tolerances(*values):
    narrow = any(np.asarray(v).dtype in (np.float16, np.float32) for v in values)
    return (1e-5, 1e-5) if narrow else (1e-5, 1e-8)


def assert_allclose(expected, value, rtol=None, atol=None):
    rtol_, atol_ = _tolerances(expected, value)
    rtol = rtol_ if rtol is None else rtol
    atol = atol_ if atol is None else atol
    expected, value = np.asarray(expected), np.asarray(value)
    try:
        np.broadcast_shapes(expected.shape, value.shape)   # Theano's comparison broadcasts
    except ValueError:
        raise WrongValue(f"shape {expected.shape} expected, got {value.shape}") from None
    if not np.allclose(expected, value, rtol=rtol, atol=atol):
        raise WrongValue(f"values differ (rtol {rtol}, atol {atol}):\nexpected {expected}\n"
                         f"got {value}")


def verify_grad(op, pt, n_tests=2, rng=None, *args, **kwargs):
    if rng is None:
        seed_rng()
        rng = np.random
    bptt.verify_grad(op, pt, n_tests, rng, *args, **kwargs)


verify_grad.E_grad = bptt.GradientError


def attr(*names):
    return lambda fn: fn


def assertFailure_fast(f):   # noqa: N802  (Theano's name)
    @functools.wraps(f)
    def run(*args, **kwargs):
        return f(*args, **kwargs)
    return run
