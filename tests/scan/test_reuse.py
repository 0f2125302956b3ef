"""`scan_reuse_forward` (bptt/scan/rewriting/reuse.py): the backward step reads the
pre-activation its forward step computed instead of recomputing two products.

Structure (PY rewriting, no compile): in every LSTM configuration (plain, go_backwards,
truncate_gradient, symbolic n_steps) the forward scan records one nit_sot, stored in the
rows of its pushed-out ``x @ Wx``; the backward reads it reversed and stores its gate
cotangent in those rows; no product ``H @ Wh`` is recomputed outside the loops and no
backward step multiplies a sequence row. An ``until`` loop is left alone. Values: the
same graphs with the pass excluded, PY for every configuration and NUMBA for the one
with every feature, hypothesis over T (0 and 1 included), B, In, H and n_steps.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings

import bptt
import bptt.tensor as T
from bptt.tensor.blas import Gemm
from bptt.tensor.math import Dot

from ..helpers import lstm_step
from .test_fill_sequences import (LSTM_CONFIGS, _lstm, _lstm_data, assert_close,
                                  check_against_pass_excluded, compiled)
from .test_rewriting import backward_scan, inner_nodes, rewritten, scans

PASS = "scan_reuse_forward"
CHUNKS = "scan_chunk_seq_products"


@pytest.fixture(autouse=True)
def _reuse_forward(monkeypatch):
    """The pass runs only when asked (``config.reuse_forward``; off by default: the
    backward recomputes the products in chunks, tests/scan/test_product_seqs.py)."""
    monkeypatch.setattr(bptt.config, "reuse_forward", True)


def _pair(fg):
    bwd = backward_scan(fg)
    (fwd,) = [n for n in scans(fg) if n is not bwd]
    return fwd, bwd


def _recomputes_h_wh(fg):
    return any((isinstance(n.op, Dot) and n.inputs[1].name == "Wh")
               or (isinstance(n.op, Gemm) and n.inputs[3].name == "Wh") for n in fg.apply_nodes)


def _multiplies_a_row(op):
    rows = {op.inner_inputs[i] for i in op.info.inner_in_seqs}
    return any(isinstance(n.op, Dot) and n.inputs[0] in rows for n in inner_nodes(op))


@pytest.mark.parametrize("name", sorted(LSTM_CONFIGS))
def test_backward_reads_the_recorded_pre_activation(name):
    ins, outs = _lstm(LSTM_CONFIGS[name])
    # without it the backward recomputes H @ Wh over all steps (CHUNKS excluded too:
    # otherwise in chunks inside the loop, tests/scan/test_product_seqs.py)
    before = rewritten(ins, outs, exclude=(PASS, CHUNKS))
    fwd0, bwd0 = _pair(before)
    assert _recomputes_h_wh(before) and fwd0.op.info.n_nit_sot == 0
    after = rewritten(ins, outs)
    fwd, bwd = _pair(after)
    assert not _recomputes_h_wh(after)
    assert not _multiplies_a_row(bwd.op)
    # the recorded z lives in the rows of the forward's pushed-out x @ Wx ...
    assert fwd.op.info.n_nit_sot == 1 and fwd.op.plan.nit_sot_into_seq == (0,)
    z = fwd.outputs[fwd.op.info.outer_out_nit_sot[0]]
    # ... and the backward reads it reversed, storing its gate cotangent in its rows
    seqs = [bwd.inputs[p] for p in bwd.op.info.outer_in_seqs]
    (j,) = [j for j, s in enumerate(seqs) if s.owner.inputs[0] is z]
    assert j in bwd.op.plan.nit_sot_into_seq


def test_until_loops_are_left_alone():
    X, h0, c0 = T.tensor3("X"), T.matrix("h0"), T.matrix("c0")
    Wx, Wh, b = T.matrix("Wx"), T.matrix("Wh"), T.vector("b")

    def step(x, h, c, Wx, Wh, b):
        h2, c2 = lstm_step(x, h, c, Wx, Wh, b)
        return [h2, c2], bptt.until(h2.sum() > 10.0)

    (hs, _), _ = bptt.scan(step, sequences=X, outputs_info=[h0, c0], non_sequences=[Wx, Wh, b])
    loss = 0.5 * (hs ** 2).sum()
    fg = rewritten([X, h0, c0, Wx, Wh, b], [loss] + bptt.grad(loss, [Wx, Wh, b]))
    fwd, _ = _pair(fg)
    assert fwd.op.info.n_nit_sot == 0


@pytest.mark.parametrize("name", sorted(LSTM_CONFIGS))
@settings(max_examples=10, deadline=None)
@given(data=_lstm_data())
def test_values_match_without_the_pass_py(name, data):
    _check(name, "PY", data)


# One NUMBA LSTM gradient (~30 s CPU): the configuration with every feature; the graph is
# test_fill_sequences' NUMBA one, so in one process the compile is shared.
@settings(max_examples=6, deadline=None)
@given(data=_lstm_data())
def test_values_match_without_the_pass_numba(data):
    _check("symbolic_backwards_truncate", "NUMBA", data)


_FUNCS = {}


def _check(name, mode, data):
    check_against_pass_excluded(_FUNCS, name, lambda: _lstm(LSTM_CONFIGS[name]), PASS, mode, data)

def _scaled_rnn():
    X, h0, U, W = T.tensor3("X"), T.matrix("h0"), T.matrix("U"), T.matrix("W")
    hs, _ = bptt.scan(lambda x, h, U, W: 0.5 * T.tanh(T.dot(x, U) + T.dot(h, W)),
                      sequences=X, outputs_info=h0, non_sequences=[U, W])
    loss = (hs ** 2).sum()
    return [X, h0, U, W], [loss] + bptt.grad(loss, [U, W, h0, X])


def test_a_recomputed_rnn_pre_activation_is_read_from_the_forward():
    ins, outs = _scaled_rnn()
    fwd, bwd = _pair(rewritten(ins, outs))
    assert fwd.op.info.n_nit_sot == 1 and not _multiplies_a_row(bwd.op)
    fwd0, bwd0 = _pair(rewritten(ins, outs, exclude=(PASS,)))
    assert fwd0.op.info.n_nit_sot == 0


@settings(max_examples=15, deadline=None)
@given(data=_lstm_data())
def test_scaled_rnn_values_match_without_the_pass_py(data):
    X, h0, _, Wx, Wh, _, _ = data
    nh = h0.shape[1]
    args = [X, h0, Wx[:, :nh], Wh[:, :nh]]          # U (In, H), W (H, H)
    if "scaled" not in _FUNCS:
        ins, outs = _scaled_rnn()
        _FUNCS["scaled"] = (compiled(ins, outs, "PY", (PASS,)), compiled(ins, outs, "PY"))
    before, after = _FUNCS["scaled"]
    assert_close(after(*args), before(*args), "scaled rnn")


def test_auto_records_products_over_an_inner_size_not_known_below_min_inner():
    from bptt.scan.rewriting import reuse

    W = T.matrix("W")
    thin, wide = T.tensor("float64", (None, 1), name="thin"), T.matrix("wide")
    outer, full = T.dot(thin, W[:1]), T.dot(wide, W)
    assert reuse.MIN_INNER == 2
    assert not reuse._saves_work(outer, {outer})            # k = 1: one multiply per element
    assert reuse._saves_work(full, {full})                  # k unknown
    both = outer + full
    assert reuse._saves_work(both, {outer, full, both})
    only_outer = outer + T.dot(thin, W[1:2])
    assert not reuse._saves_work(only_outer, {outer, only_outer.owner.inputs[1], only_outer})


def test_auto_is_the_default_and_records_the_lstm_pre_activation(monkeypatch):
    from bptt.config import _Config

    monkeypatch.delenv("BPTT_REUSE_FORWARD", raising=False)
    monkeypatch.setattr(bptt.config, "reuse_forward", _Config().reuse_forward)
    assert bptt.config.reuse_forward == "auto"
    ins, outs = _lstm(LSTM_CONFIGS["plain"])
    fg = rewritten(ins, outs)
    fwd, _ = _pair(fg)
    assert not _recomputes_h_wh(fg) and fwd.op.info.n_nit_sot == 1
    monkeypatch.setattr(bptt.config, "reuse_forward", False)
    fwd, _ = _pair(rewritten(ins, outs))
    assert fwd.op.info.n_nit_sot == 0
