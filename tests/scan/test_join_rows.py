"""`scan_read_through_join` (bptt/scan/rewriting/join_rows.py): the backward loop reads the
loss cotangent ``Join(0, zeros(k, ...), P[k:])`` as P's rows and a one-byte mask.

Structure (PY rewriting, no compile): in the LSTM gradient of its parameters (plain,
go_backwards, symbolic n_steps) no T-long float join is left and the backward scan reads a
bool mask; with the pass excluded the join is there; the RNN gradient of its weights leaves
no join either (its weight gradients are summed in chunks in the loop). Left alone: when a
nit_sot of the backward may be stored in the join's rows (`scan_nit_sot_into_seq`: the
RNN's X cotangent), and a truncated gradient, whose initial-state cotangent also reads the
join. Values: the same graphs with the pass excluded, PY (the LSTM
configurations; an RNN gradient of h0, whose backward has no nit_sot: plain, go_backwards,
symbolic n_steps), NUMBA for that RNN with every feature; hypothesis over T (0 and 1
included), B, In, H and n_steps.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.tensor.basic import Alloc, Join
from bptt.tensor.elemwise import Elemwise
from bptt.tensor.subtensor import IncSubtensor, SliceSpec, Subtensor

from ..helpers import lstm_step
from .test_fill_sequences import (LSTM_CONFIGS, _lstm, _lstm_data,
                                  check_against_pass_excluded)
from .test_rewriting import backward_scan, rewritten

PASS = "scan_read_through_join"


def _float_joins(fg):
    """T-long ``Join(0, alloc(...), ...)`` / ``IncSubtensor(alloc(...), ...)`` nodes:
    zeros in front of a trace, made in a new array."""
    return [n for n in fg.apply_nodes if isinstance(n.op, (Join, IncSubtensor))
            and n.outputs[0].ndim == 3 and n.outputs[0].dtype == "float64"
            and n.inputs[0].owner is not None and isinstance(n.inputs[0].owner.op, Alloc)]


def _mask_seqs(node):
    return [node.inputs[p] for p in node.op.info.outer_in_seqs
            if node.inputs[p].dtype == "bool"]


def _lstm_params(cfg, loss="half"):
    """The benchmark's LSTM gradient: every weight and initial state, not X."""
    ins, _ = _lstm({})
    X, h0, c0, Wx, Wh, b, n = ins
    (hs, _), _ = bptt.scan(lstm_step, sequences=X, outputs_info=[h0, c0],
                           non_sequences=[Wx, Wh, b], name="lstm",
                           n_steps=n if cfg.get("symbolic") else None,
                           truncate_gradient=cfg.get("truncate", -1),
                           go_backwards=cfg.get("backwards", False))
    loss = 0.5 * (hs ** 2).sum() if loss == "half" else (hs ** 2).sum()
    return ins, [loss] + bptt.grad(loss, [Wx, Wh, b, h0, c0])


@pytest.mark.parametrize("name", ["plain", "backwards", "symbolic_backwards"])
def test_lstm_backward_reads_the_trace_and_a_mask(name):
    ins, outs = _lstm_params(CONFIGS[name])
    before = rewritten(ins, outs, exclude=(PASS,))
    assert len(_float_joins(before)) == 1 and not _mask_seqs(backward_scan(before))
    after = rewritten(ins, outs)
    bwd = backward_scan(after)
    assert not _float_joins(after)
    assert len(_mask_seqs(bwd)) == 1
    assert bwd.op.info.n_seqs == backward_scan(before).op.info.n_seqs + 1


def test_an_elementwise_cotangent_is_computed_in_the_step():
    # loss sum(h ** 2): the cotangent 2 * h[1:] was a T-long array, joined into another
    ins, outs = _lstm_params({}, loss="sq")
    before = rewritten(ins, outs, exclude=(PASS,))
    assert len(_float_joins(before)) == 1
    after = rewritten(ins, outs)
    assert not _float_joins(after) and len(_mask_seqs(backward_scan(after))) == 1
    # no T-long elementwise array either: the only 3-d one is the initial state's row
    (init,) = [n for n in after.apply_nodes if n.outputs[0].ndim == 3
               and isinstance(n.op, Elemwise)]
    assert any(i.owner is not None and isinstance(i.owner.op, Subtensor)
               and i.owner.op.idx_list == (SliceSpec(None, 1, None),) for i in init.inputs)


def test_truncated_gradient_keeps_the_join():
    # the initial state's cotangent reads the join twice outside the loop (rows before the
    # truncated steps and after them): two switches could cost more than the join
    ins, outs = _lstm_params(LSTM_CONFIGS["truncate"])
    after = rewritten(ins, outs)
    assert _float_joins(after) and not _mask_seqs(backward_scan(after))


def test_a_possible_nit_sot_home_keeps_the_join():
    # with X's gradient the RNN backward has a nit_sot (B x In rows) that may live in the
    # join's rows (B x H): only the run time knows whether In == H
    ins, outs = _rnn({}, wrt=("X", "U", "W", "h0"))
    after = rewritten(ins, outs)
    bwd = backward_scan(after)
    (join,) = [n for n in _float_joins(after) if isinstance(n.op, Join)]
    homes = [j for j in bwd.op.info.nit_sot_into_seq if j is not None]
    assert homes and not _mask_seqs(bwd)
    seq = bwd.inputs[bwd.op.info.outer_in_seqs[homes[0]]]
    while seq.owner is not None and seq.owner.op is not join.op:
        seq = seq.owner.inputs[0]
    assert seq is join.outputs[0]


def _rnn(cfg, wrt=("h0",), loss="half"):
    X, h0, U, W = T.tensor3("X"), T.matrix("h0"), T.matrix("U"), T.matrix("W")
    n, a = T.iscalar("n"), T.dscalar("a")
    hs, _ = bptt.scan(lambda x, h, U, W: T.tanh(T.dot(x, U) + T.dot(h, W)), sequences=X,
                      outputs_info=h0, non_sequences=[U, W], name="rnn",
                      n_steps=n if cfg.get("symbolic") else None,
                      go_backwards=cfg.get("backwards", False))
    # "cube": the cotangent 3 * a * h ** 2 reads a (a non-sequence in the step)
    loss = 0.5 * (hs ** 2).sum() if loss == "half" else a * (hs ** 3).sum()
    named = {"X": X, "h0": h0, "U": U, "W": W}
    return [X, h0, U, W, n, a], [loss] + bptt.grad(loss, [named[w] for w in wrt])


CONFIGS = {"plain": {}, "backwards": {"backwards": True},
           "symbolic_backwards": {"symbolic": True, "backwards": True}}


def test_rnn_weight_gradients_leave_no_join():
    # the weight gradients are summed in chunks in the loop (scan_chunk_accumulators): no
    # T-long step cotangent needs the join's rows, and the loop reads h's rows and a mask
    ins, outs = _rnn({}, wrt=("U", "W", "h0"))
    after = rewritten(ins, outs)
    bwd = backward_scan(after)
    assert not _float_joins(after) and len(_mask_seqs(bwd)) == 1
    assert len([e for e in bwd.op.info.nit_sot_sums if e is not None]) == 2


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_rnn_gradient_of_h0_reads_a_mask(name):
    ins, outs = _rnn(CONFIGS[name])
    after = rewritten(ins, outs)
    assert not _float_joins(after) and len(_mask_seqs(backward_scan(after))) == 1


@st.composite
def _rnn_data(draw):
    t, bsz, nin, nh = (draw(st.integers(0, 4)), draw(st.integers(1, 3)),
                       draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    return [rng.standard_normal((t, bsz, nin)), rng.standard_normal((bsz, nh)),
            rng.standard_normal((nin, nh)), 0.7 * rng.standard_normal((nh, nh)),
            np.int32(draw(st.integers(0, t))), rng.standard_normal()]


_FUNCS = {}


def _check(key, build, mode, data):
    check_against_pass_excluded(_FUNCS, key, build, PASS, mode, data)


@pytest.mark.parametrize("loss", ["half", "cube"])
@pytest.mark.parametrize("name", sorted(CONFIGS))
@settings(max_examples=12, deadline=None)
@given(data=_rnn_data())
def test_rnn_values_match_without_the_pass_py(name, loss, data):
    _check(("rnn", name, loss), lambda: _rnn(CONFIGS[name], loss=loss), "PY", data)


@settings(max_examples=10, deadline=None)
@given(data=_rnn_data())
def test_rnn_values_match_without_the_pass_numba(data):
    _check(("rnn", "symbolic_backwards", "cube"),
           lambda: _rnn(CONFIGS["symbolic_backwards"], loss="cube"), "NUMBA", data)


@pytest.mark.parametrize("name", sorted(CONFIGS))
@settings(max_examples=8, deadline=None)
@given(data=_lstm_data())
def test_lstm_values_match_without_the_pass_py(name, data):
    _check(("lstm", name), lambda: _lstm_params(CONFIGS[name]), "PY", data)


@settings(max_examples=8, deadline=None)
@given(data=_lstm_data())
def test_lstm_sum_of_squares_values_match_without_the_pass_py(data):
    _check(("lstm", "sq"), lambda: _lstm_params({}, loss="sq"), "PY", data)
