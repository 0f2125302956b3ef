"""`scan_read_through_join` (bptt/scan/rewriting/join_rows.py): the backward loop reads the
loss cotangent ``Join(0, zeros(k, ...), P[k:])`` as P's rows, with a one-byte mask only where
a loop reads fill rows and P's rows together.

Structure (PY rewriting, no compile): in the LSTM gradient of its parameters (plain,
go_backwards, symbolic n_steps) no T-long float join is left and the backward scan reads the
trace without a mask (the carried cotangent is in save-mem's pre-add form: the loop reads the
rows of the states the steps wrote, and the initial state's fill row is a zeros row outside);
with the pass excluded the join is there; the RNN gradient of its weights leaves no join
either (its weight gradients are summed in chunks in the loop). A state its step does not
read keeps the old carry (its cotangent is the loss row itself), whose last step reads the
fill row: a mask. Left alone: when a nit_sot of the backward may be stored in the join's rows
(`scan_nit_sot_into_seq`: the RNN's X cotangent), and a truncated gradient. Which rows a
chain of slices picks (`_Forms.picked`): P's rows, fill rows or both, for constant and
symbolic lengths, reversed, one row or empty (hypothesis against NumPy on a concrete J).
Values: the same graphs with the pass excluded, PY (the LSTM configurations; an RNN gradient
of h0, whose backward has no nit_sot: plain, go_backwards, symbolic n_steps; the state the
step does not read), NUMBA for that RNN with every feature; hypothesis over T (0 and 1
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
from bptt.tensor.subtensor import IncSubtensor, Subtensor

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
def test_lstm_backward_reads_the_trace_without_a_mask(name):
    ins, outs = _lstm_params(CONFIGS[name])
    before = rewritten(ins, outs, exclude=(PASS,))
    assert len(_float_joins(before)) == 1 and not _mask_seqs(backward_scan(before))
    after = rewritten(ins, outs)
    bwd = backward_scan(after)
    assert not _float_joins(after) and not _mask_seqs(bwd)
    assert bwd.op.info.n_seqs == backward_scan(before).op.info.n_seqs
    assert _reads_trace(bwd)


def _reads_trace(bwd):
    """Whether a sequence of `bwd` is rows of the forward scan's output (the trace)."""
    for p in bwd.op.info.outer_in_seqs:
        v = bwd.inputs[p]
        while v.owner is not None and isinstance(v.owner.op, Subtensor):
            v = v.owner.inputs[0]
        if v.owner is not None and type(v.owner.op).__name__ == "Scan":
            return True
    return False


def test_an_elementwise_cotangent_is_computed_in_the_step():
    # loss sum(h ** 2): the cotangent 2 * h[1:] was a T-long array, joined into another
    ins, outs = _lstm_params({}, loss="sq")
    before = rewritten(ins, outs, exclude=(PASS,))
    assert len(_float_joins(before)) == 1
    after = rewritten(ins, outs)
    assert not _float_joins(after) and not _mask_seqs(backward_scan(after))
    # no T-long elementwise array either: nothing 3-d is computed elementwise outside
    assert not [n for n in after.apply_nodes if n.outputs[0].ndim == 3
                and isinstance(n.op, Elemwise)]


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
    homes = [j for j in bwd.op.plan.nit_sot_into_seq if j is not None]
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
    # T-long step cotangent needs the join's rows, and the loop reads h's rows, no mask
    ins, outs = _rnn({}, wrt=("U", "W", "h0"))
    after = rewritten(ins, outs)
    bwd = backward_scan(after)
    assert not _float_joins(after) and not _mask_seqs(bwd) and _reads_trace(bwd)
    assert len([e for e in bwd.op.plan.nit_sot_sums if e is not None]) == 2


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_rnn_gradient_of_h0_reads_the_trace(name):
    ins, outs = _rnn(CONFIGS[name])
    after = rewritten(ins, outs)
    bwd = backward_scan(after)
    assert not _float_joins(after) and not _mask_seqs(bwd) and _reads_trace(bwd)


def _user_join(rows):
    """A scan reading a user's ``concatenate([zeros row, hs])`` reversed: `rows` "mixed" reads
    ``[::-1][1:]`` (P's rows, then the fill row at the last step), "trace" ``[::-1][:n]``."""
    X, h0, U, W = T.tensor3("X"), T.matrix("h0"), T.matrix("U"), T.matrix("W")
    n, a = T.iscalar("n"), T.dscalar("a")
    hs, _ = bptt.scan(lambda x, h, U, W: T.tanh(T.dot(x, U) + T.dot(h, W)), sequences=X,
                      outputs_info=h0, non_sequences=[U, W], name="rnn")
    J = T.concatenate([T.zeros((1, h0.shape[0], h0.shape[1])), hs])
    seq = J[::-1][1:] if rows == "mixed" else J[::-1][:X.shape[0]]
    sums, _ = bptt.scan(lambda j, acc, a: acc + a * j, sequences=seq, outputs_info=h0,
                        non_sequences=[a], name="sums")
    return [X, h0, U, W, n, a], [sums]


@pytest.mark.parametrize("rows", ["mixed", "trace"])
def test_a_loop_reading_fill_rows_reads_a_mask(rows):
    ins, outs = _user_join(rows)
    before = rewritten(ins, outs, exclude=(PASS,))
    assert len(_float_joins(before)) == 1
    after = rewritten(ins, outs)
    (loop,) = [n for n in after.apply_nodes if type(n.op).__name__ == "Scan"
               and n.op.info.name == "sums"]
    assert not _float_joins(after) and _reads_trace(loop)
    assert len(_mask_seqs(loop)) == (1 if rows == "mixed" else 0)


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


@pytest.mark.parametrize("mode", ["PY", "NUMBA"])
@pytest.mark.parametrize("rows", ["mixed", "trace"])
@settings(max_examples=8, deadline=None)
@given(data=_rnn_data())
def test_user_join_values_match_without_the_pass(rows, mode, data):
    _check(("user", rows), lambda: _user_join(rows), mode, data)


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


# -- which rows a chain of slices picks ------------------------------------------------------
@st.composite
def _chains(draw):
    """A chain of first-axis slices (reversals, [a:b] with bounds >= 0 or open, a last row)."""
    ops = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["rev", "slice", "slice"]))
        if kind == "rev":
            ops.append(("rev",))
        else:
            bound = st.one_of(st.none(), st.integers(0, 7))
            ops.append(("slice", draw(bound), draw(bound)))
    if draw(st.booleans()):
        ops.append(("row", draw(st.integers(0, 3))))
    return ops


def _apply_chain(x, ops):
    for op in ops:
        x = x[::-1] if op[0] == "rev" else x[op[1]:op[2]] if op[0] == "slice" else x[op[1]]
    return x


@pytest.mark.parametrize("kind", ["dim", "value"])
@settings(max_examples=150, deadline=None)
@given(ops=_chains(), k=st.integers(0, 3), c=st.integers(-2, 2))
def test_picked_rows_are_the_rows_numpy_picks(kind, ops, k, c):
    # J has K + c rows (K a size, or a symbolic value known only through len(J) >= k); the
    # span found must be the rows NumPy's indexing picks for every such K it allows
    from bptt.scan.rewriting.join_rows import _Forms, _row_index, _row_slice

    P = T.tensor3("P")
    nodes, v = [], P
    for op in ops:
        w = _apply_chain(v, [op])
        if w.owner is not None and w.owner.inputs[0] is v:
            assert _row_slice(w.owner) or _row_index(w.owner) or not w.owner.op.idx_list
            if w.owner.op.idx_list:     # x[:] may be a Subtensor with no index at all
                nodes.append(w.owner)
        v = w
    forms = _Forms(((kind, "K"), c), k)
    span = forms.picked(None, nodes)
    if span is None:
        return
    low = max(k - c, 0 if kind == "dim" else k - c)
    for K in range(low, low + 8):
        length = K + c
        rows = _apply_chain(np.arange(length), ops[:-1] if ops[-1][0] == "row" else ops)
        if ops[-1][0] == "row":
            if ops[-1][1] >= len(rows):
                continue        # an IndexError at run time: the span claims nothing
            rows = rows[ops[-1][1]:ops[-1][1] + 1]
        lo, hi = ((f[1] + (K if f[0] is not None else 0)) for f in span)
        assert sorted(rows.tolist()) == list(range(lo, max(hi, lo))), (K, span)
