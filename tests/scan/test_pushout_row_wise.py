"""scan_pushout_row_wise_nit_sots: an output computed row by row from sequence rows leaves
the loop, and a loop left without outputs goes.

Oracles: the graph compiled with no rewrite at all (`tests.helpers.without_rewrites`)
and NumPy; the structure (no Scan when every output leaves, the state's loop kept
otherwise, until loops untouched) against the same graph with the pass excluded.
"""
import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.scan import Scan

from ..helpers import without_rewrites
from .test_rewriting import assert_close, compiled

PASS = "scan_pushout_seqs"   # the pass that runs scan_pushout_row_wise_nit_sots


def _scans(f):
    return [n for n in f.fgraph.toposort() if isinstance(n.op, Scan)]


def _reference(inputs, outputs):
    with without_rewrites():
        return bptt.function(inputs, outputs, mode="PY", on_unused_input="ignore")


def test_an_elementwise_map_is_its_vectorized_graph(mode):
    """x_t * w + 2 over (T, H) rows with a (H,) non-sequence: the loop goes."""
    x, w = T.dmatrix("x"), T.dvector("w")
    o, _ = bptt.scan(lambda x_t, w: T.exp(x_t) * w + 2.0, sequences=x, non_sequences=w)
    f = compiled([x, w], [o], mode)
    assert not _scans(f) and _scans(compiled([x, w], [o], "PY", exclude=(PASS,)))
    rng = np.random.default_rng(0)
    for rows in (4, 0):
        xv, wv = rng.normal(size=(rows, 3)), rng.normal(size=3)
        out = f(xv, wv)
        assert_close(out, _reference([x, w], [o])(xv, wv), f"{rows} rows")
        np.testing.assert_allclose(out[0], np.exp(xv) * wv + 2.0)


@pytest.mark.parametrize("steps", [2, "symbolic"])
def test_a_map_whose_sequence_may_be_too_short_keeps_its_loop(mode, steps):
    """With n_steps given, the loop checks the sequence has that many rows, and names it."""
    x, k = T.dvector("x"), T.lscalar("k")
    o, _ = bptt.scan(lambda x_t: x_t + 2.0, sequences=x, name="short",
                     n_steps=k if steps == "symbolic" else steps)
    f = compiled([x, k], [o], mode)
    assert _scans(f)
    np.testing.assert_array_equal(f(np.arange(3.0), 2)[0], [2.0, 3.0])
    with pytest.raises(ValueError, match="scan 'short'"):
        f(np.arange(1.0), 2)


def test_the_sequence_gradient_of_a_map_has_no_loop_either(mode):
    """The backward loop of an elementwise step is elementwise in its sequences too (a
    non-sequence's gradient would be a running sum over the steps, a state)."""
    x, w = T.dvector("x"), T.dscalar("w")
    o, _ = bptt.scan(lambda x_t, w: T.tanh(x_t) * w, sequences=x, non_sequences=w)
    grads = [bptt.grad((o ** 2).sum(), x)]
    f = compiled([x, w], grads, mode)
    assert not _scans(f)
    rng = np.random.default_rng(1)
    xv, wv = rng.normal(size=5), rng.normal()
    assert_close(f(xv, wv), _reference([x, w], grads)(xv, wv), "gradient")


def test_a_state_keeps_its_loop_and_the_row_wise_output_leaves_it(mode):
    x = T.dvector("x")
    (h, y), _ = bptt.scan(lambda x_t, h: (h + x_t, x_t * 3.0), sequences=x,
                          outputs_info=[T.zeros(()), None])
    f = compiled([x], [h, y], mode)
    (scan,) = _scans(f)
    assert scan.op.info.n_nit_sot == 0
    xv = np.array([1.0, 2.0, 3.0])
    assert_close(f(xv), _reference([x], [h, y])(xv), "state and row-wise output")


def test_a_loop_with_until_keeps_its_outputs():
    """The executed steps are known only after the loop: nothing is computed for all rows."""
    x = T.dvector("x")
    o, _ = bptt.scan(lambda x_t: (x_t + 1.0, bptt.until(x_t > 3.0)), sequences=x)
    f = compiled([x], [o], "PY")
    (scan,) = _scans(f)
    assert scan.op.info.n_nit_sot == 1
    xv = np.zeros(50)
    xv[23] = 4.0
    np.testing.assert_array_equal(f(xv)[0], np.ones(24) + xv[:24])
