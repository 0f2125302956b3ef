"""`scan_sum_layout` (bptt/scan/rewriting/sum_layout.py): a weight gradient summed in the
backward loop and read only transposed is accumulated column-major.

Structure (PY rewriting, no compile): an RNN using its input weight transposed
(``x @ U.T``, PyTorch's layout, U not square) gets ``sums_transposed`` for that sum only
(not for the recurrent weight's, read as it is); an RNN using ``x @ U`` gets none; a graph reading the
sum itself too (the gradient of the non-sequence ``W.T`` beside W's) gets none; the plan
rejects an entry for a nit_sot that is not summed with a sequence. Values: compiled once
per mode (PY, NUMBA; float64 with a symbolic n_steps, 0 included, and float32 with
go_backwards and truncate_gradient) against the graph evaluated without rewrites, over
hypothesis-drawn T and B with chunks of a few steps and a partial last one; in NUMBA
U's gradient comes out C-contiguous (F-ordered with the pass excluded).
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.config import config
from bptt.scan.info import ScanInfo
from bptt.scan.plan import ROW_SUM, StoragePlan

from ..helpers import excluding, without_rewrites
from .test_rewriting import backward_scan, rewritten

import bptt.compile.passes  # noqa: F401  (loads the rewrite modules)

PASS = "scan_sum_layout"
ROWS = 6    # chunks of 6 // B steps (config.chunk_rows, read when rewriting)


def _rnn(dtype="float64", transposed=True, n_steps=None, **scan_kw):
    """(inputs, [loss, g_U, g_W, g_b]) of ``h_t = tanh(x_t @ U.T + h_{t-1} @ W + b)`` (U
    of shape (H, In), PyTorch's layout; ``x_t @ U``, U (In, H), when not `transposed`),
    loss 0.5 * sum(h ** 2): inputs X, h0, U, W, b."""
    X, h0 = T.tensor3("X", dtype=dtype), T.matrix("h0", dtype=dtype)
    U, W, b = T.matrix("U", dtype=dtype), T.matrix("W", dtype=dtype), T.vector("b", dtype=dtype)
    Ur = U.T if transposed else U
    hs, _ = bptt.scan(lambda x, h, Ur, W, b: T.tanh(T.dot(x, Ur) + T.dot(h, W) + b),
                      sequences=X, outputs_info=h0, non_sequences=[Ur, W, b], n_steps=n_steps,
                      **scan_kw)
    loss = 0.5 * (hs ** 2).sum()
    return [X, h0, U, W, b], [loss] + bptt.grad(loss, [U, W, b])


def _transposed_flags(node):
    return [node.op.plan.sum_transposed(k) for k in range(node.op.info.n_nit_sot)]


def _summed_with(node, flag):
    """The sequence index of each summed nit_sot whose `sums_transposed` entry is `flag`."""
    plan = node.op.plan
    return [plan.nit_sot_sum(k)[0] for k in range(node.op.info.n_nit_sot)
            if plan.nit_sot_sum(k) is not None and plan.nit_sot_sum(k)[0] != ROW_SUM
            and plan.sum_transposed(k) == flag]


def test_only_the_sum_read_transposed_is_column_major():
    ins, outs = _rnn()
    node = backward_scan(rewritten(ins, outs))
    assert len(_summed_with(node, True)) == 1 and len(_summed_with(node, False)) == 1
    assert "column-major" in str(node.op)
    assert not any(_transposed_flags(backward_scan(rewritten(ins, outs, exclude=(PASS,)))))


def test_a_sum_read_as_it_is_keeps_c_order():
    ins, outs = _rnn(transposed=False)
    assert not any(_transposed_flags(backward_scan(rewritten(ins, outs))))


def test_a_sum_also_read_untransposed_keeps_c_order():
    """W's gradient is the sum's transpose; its transpose, the sum itself, is read too."""
    X, h0, W = T.tensor3("X"), T.matrix("h0"), T.matrix("W")
    hs, _ = bptt.scan(lambda x, h, Wt: T.tanh(x + T.dot(h, Wt)), sequences=X,
                      outputs_info=h0, non_sequences=[W.T])
    g_w = bptt.grad(0.5 * (hs ** 2).sum(), W)
    for untransposed in (g_w.T, 2.0 * g_w.T):     # an output; an elementwise reader
        node = backward_scan(rewritten([X, h0, W], [g_w, untransposed]))
        assert node.op.plan.nit_sot_sums and not any(_transposed_flags(node))
    node = backward_scan(rewritten([X, h0, W], [g_w]))
    assert any(_transposed_flags(node))


def test_plan_rejects_a_transposed_entry_without_a_product_sum():
    base = dict(n_seqs=1, mit_mot_in_slices=(), mit_mot_out_slices=(), mit_sot_in_slices=(),
                n_sit_sot=0, n_nit_sot=2, n_shared_outs=0, n_non_seqs=0)
    info = ScanInfo(**base)
    sums = ((0, 4), (ROW_SUM, 4))
    StoragePlan(nit_sot_sums=sums, sums_transposed=(True, False)).check(info)
    assert StoragePlan(nit_sot_sums=sums, sums_transposed=(False, False)).sums_transposed == ()
    for bad in ((False, True), (True,), (True, False, False)):
        with pytest.raises(ValueError, match="StoragePlan: sums_transposed needs one entry"):
            StoragePlan(nit_sot_sums=sums, sums_transposed=bad).check(info)


# -- equal values, PY and NUMBA ------------------------------------------------------------
def _graph():
    """Two RNN gradients in one graph (one compile): symbolic n_steps (float64), and
    go_backwards + truncate_gradient (float32)."""
    n = T.iscalar("n")
    a_ins, a_outs = _rnn(n_steps=n)
    b_ins, b_outs = _rnn(dtype="float32", go_backwards=True, truncate_gradient=3)
    return a_ins + [n] + b_ins, a_outs + b_outs


_FUNCS = {}


def _functions(mode):
    if mode not in _FUNCS:
        ins, outs = _graph()
        with without_rewrites():
            reference = bptt.function(ins, outs, mode="PY")
        default, config.chunk_rows = config.chunk_rows, ROWS
        try:
            after = bptt.function(ins, outs, mode=mode)
            with excluding((PASS,)):
                before = bptt.function(ins, outs, mode=mode)
        finally:
            config.chunk_rows = default
        _FUNCS[mode] = reference, after, before
    return _FUNCS[mode]


def _data(rng, t, b, dtype):
    x = rng.normal(size=(t, b, 3)).astype(dtype)
    h0 = rng.normal(size=(b, 2)).astype(dtype)
    u, w = rng.normal(size=(2, 3)).astype(dtype), (0.5 * rng.normal(size=(2, 2))).astype(dtype)
    return [x, h0, u, w, rng.normal(size=2).astype(dtype)]


@settings(deadline=None, max_examples=20)
@given(t=st.integers(0, 13), b=st.integers(1, 5), cut=st.integers(0, 13),
       seed=st.integers(0, 2 ** 16))
def test_values_equal_the_graph_without_rewrites(mode, t, b, cut, seed):
    reference, after, before = _functions(mode)
    rng = np.random.default_rng(seed)
    args = _data(rng, t, b, "float64") + [min(cut, t)] + _data(rng, t, b, "float32")
    got, want = after(*args), reference(*args)
    for k, (g, e) in enumerate(zip(got, want)):
        tol = 1e-4 if g.dtype == np.float32 else 1e-10
        assert g.dtype == e.dtype and g.shape == e.shape, k
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol, err_msg=f"output {k}")
    if mode == "NUMBA" and min(cut, t) > 0:
        # U's gradients (outputs 1 and 5): C order with the pass, the sum's transpose without
        assert got[1].flags.c_contiguous and got[5].flags.c_contiguous
        old = before(*args)
        assert not old[1].flags.c_contiguous and not old[5].flags.c_contiguous
