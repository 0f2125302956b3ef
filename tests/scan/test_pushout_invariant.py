"""scan_pushout_invariant_nit_sots: an output equal at every step leaves the loop.

Oracles: the same graph with the pass excluded (`config.exclude_rewrites`) and
NumPy; the structure (no Scan when every output leaves, the state's loop kept
otherwise, until loops untouched).
"""
import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.scan import Scan

from .test_rewriting import assert_close, compiled

PASS = "scan_pushout_invariant_nit_sots"


def _scans(f):
    return [n for n in f.fgraph.toposort() if isinstance(n.op, Scan)]


def test_an_output_of_non_sequences_only_is_an_alloc_and_the_loop_goes(mode):
    h0, W1, W2, n = T.dvector("h0"), T.dmatrix("W1"), T.dmatrix("W2"), T.iscalar("n")
    o, _ = bptt.scan(lambda h, A, B: T.dot(h, A + B), non_sequences=[h0, W1, W2], n_steps=n)
    f = compiled([h0, W1, W2, n], [o], mode)
    # scan_pushout_rows also builds a loop it empties, invariant outputs included
    g = compiled([h0, W1, W2, n], [o], "PY", exclude=(PASS, "scan_pushout_rows"))
    assert not _scans(f) and _scans(g)
    rng = np.random.default_rng(0)
    args = [rng.normal(size=2), rng.normal(size=(2, 2)), rng.normal(size=(2, 2))]
    for steps in (0, 1, 4):
        out = f(*args, steps)
        assert out[0].shape == (steps, 2)
        assert_close(out, g(*args, steps), f"n_steps={steps}")
        np.testing.assert_allclose(out[0], np.tile(args[0] @ (args[1] + args[2]), (steps, 1)))


def test_the_loop_stays_for_the_outputs_that_change(mode):
    x, W = T.dvector("x"), T.dmatrix("W")
    (h, c), _ = bptt.scan(lambda x_t, h, W: (h + x_t, W.sum(axis=0)), sequences=x,
                          outputs_info=[T.zeros(()), None], non_sequences=[W])
    f = compiled([x, W], [h, c], mode)
    g = compiled([x, W], [h, c], "PY", exclude=(PASS,))
    (scan,) = _scans(f)
    assert scan.op.info.n_nit_sot == 0
    args = [np.array([1.0, 2.0, 3.0]), np.arange(4.0).reshape(2, 2)]
    assert_close(f(*args), g(*args), "state and invariant output")


def test_a_loop_with_until_keeps_its_outputs():
    x, W = T.dvector("x"), T.dmatrix("W")
    (h, c), _ = bptt.scan(lambda x_t, h, W: (h + x_t, W.sum(axis=0), bptt.until(h > 2)),
                          sequences=x, outputs_info=[T.zeros(()), None], non_sequences=[W])
    f = compiled([x, W], [h, c], "PY")
    (scan,) = _scans(f)
    assert scan.op.info.n_nit_sot == 1
    h_v, c_v = f(np.array([1.0, 2.0, 3.0, 4.0]), np.ones((2, 2)))
    np.testing.assert_array_equal(h_v, [1.0, 3.0, 6.0])   # until reads the step's input h
    np.testing.assert_array_equal(c_v, np.full((3, 2), 2.0))


@pytest.mark.parametrize("steps", [0, 3])
def test_its_gradient_is_the_loops(steps):
    W = T.dmatrix("W")
    o, _ = bptt.scan(lambda A: (A * 2).sum(axis=0), non_sequences=[W], n_steps=steps)
    g = bptt.grad((o ** 2).sum(), W)
    f = compiled([W], [g], "PY")
    ref = compiled([W], [g], "PY", exclude=(PASS,))
    Wv = np.arange(6.0).reshape(3, 2)
    assert_close(f(Wv), ref(Wv), "gradient")
