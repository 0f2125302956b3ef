"""`scan_chunk_seq_products` (bptt/scan/rewriting/product_seqs.py): a product read as a
sequence is computed in chunks of steps inside the loop, so no T-long ``x @ W`` is kept.

Structure (PY rewriting, no compile): the benchmark LSTM gradient (plain, go_backwards,
truncate_gradient, symbolic n_steps) has no product over the stacked steps left outside
its loops; the forward reads ``X`` times ``Wx``, the backward ``X[::-1]`` times ``Wx`` and
the reversed h trace times ``Wh``, its gate cotangent staged in its own rows; with the
gradient of ``X``, ``dX``'s rows are its own. Left alone: the forward RNN's ``x @ U``
(held in the trace's rows), a product something else reads, an ``until`` loop and, with
``config.reuse_forward`` on, the recorded pre-activation (every other test turns it off).
A GRU gradient: its gates' elementwise expressions, stacked by the push-out, move into
both loops, over six chunked products. Values: NUMBA and PY against PY with the pass
excluded, with chunks of 3 rows (several chunks and a partial last one), for the LSTM
configurations, the LSTM gradient of X with everything, and the GRU plain and with
everything, hypothesis over T (0 and 1 included), B, In, H and n_steps; a sequence whose steps are not one row stride apart. Errors: a matrix of the
wrong height names the scan and the sizes; `StoragePlan` and `ScanArgs` refuse what they
cannot carry.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings

import bptt
import bptt.tensor as T
from bptt.scan.args import ScanArgs
from bptt.scan.plan import StoragePlan
from bptt.tensor.math import Dot
from bptt.tensor.product_rows import ProductRows

from ..helpers import excluding, lstm_grad_graph, rnn_grad_graph
from .test_fill_sequences import LSTM_CONFIGS, _lstm_data, assert_close
from .test_fill_sequences import _lstm as fill_lstm
from .test_rewriting import backward_scan, rewritten, scans

PASS = "scan_chunk_seq_products"


@pytest.fixture(autouse=True)
def _recompute(monkeypatch):
    """The plan these tests check: the backward recomputes the products
    (``config.reuse_forward = False``; its default "auto" records the LSTM's pre-activation)."""
    monkeypatch.setattr(bptt.config, "reuse_forward", False)


def _lstm(cfg, wrt_x=False):
    """The LSTM gradient of test_fill_sequences (inputs X, h0, c0, Wx, Wh, b, n), of X
    only when asked (`wrt_x`, or the config's "wrt_x")."""
    return fill_lstm(dict(cfg, wrt_x=wrt_x or cfg.get("wrt_x", False)))


def _outer_products(fg):
    return [n for n in fg.apply_nodes if isinstance(n.op, (Dot, ProductRows))]


def _chunked(node):
    """{sequence index: the outer matrix it is multiplied by} of a Scan node."""
    info = node.op.info
    return {j: node.inputs[info.outer_in_non_seqs[e[0]]]
            for j, e in enumerate(node.op.plan.seq_products) if e is not None}


@pytest.mark.parametrize("name", sorted(LSTM_CONFIGS))
def test_lstm_gradient_keeps_no_stacked_product(name):
    ins, outs = _lstm(LSTM_CONFIGS[name])
    before = rewritten(ins, outs, exclude=(PASS,))
    assert {n.inputs[1].name for n in _outer_products(before) if isinstance(n.op, Dot)} \
        >= {"Wx", "Wh"}
    fg = rewritten(ins, outs)
    assert not _outer_products(fg)
    bwd = backward_scan(fg)
    (fwd,) = [n for n in scans(fg) if n is not bwd]
    assert [w.name for w in _chunked(fwd).values()] == ["Wx"]
    assert sorted(w.name for w in _chunked(bwd).values()) == ["Wh", "Wx"]
    # the gate cotangent (summed in chunks) is staged in its own rows
    info, plan = bwd.op.info, bwd.op.plan
    assert not {plan.nit_sot_seq(k) for k in range(info.n_nit_sot)} & set(_chunked(bwd))
    assert "times non-seq" in str(bwd.op)


def test_rnn_products_stay_in_the_trace():
    # the forward RNN's x @ U costs no memory in the trace's rows: left to seq_into_buffer
    ins, outs = rnn_grad_graph()
    fg = rewritten(ins, outs)
    assert not any(_chunked(n) for n in scans(fg))
    assert any(isinstance(n.op, ProductRows) for n in fg.apply_nodes)


def test_the_gradient_of_x_is_stacked_in_its_own_rows():
    # dX_t = dz_t @ Wx.T is a stacked nit_sot the backward stored in its pre-activation
    # sequence's rows (usable only when In == 4H): the sequence is computed in chunks, and
    # dX gets rows of its own, as it did whenever In != 4H
    ins, outs = _lstm({}, wrt_x=True)
    before = rewritten(ins, outs, exclude=(PASS,))
    assert any(j is not None for j in backward_scan(before).op.plan.nit_sot_into_seq)
    fg = rewritten(ins, outs)
    bwd = backward_scan(fg)
    assert sorted(w.name for w in _chunked(bwd).values()) == ["Wh", "Wx"]
    assert not any(j is not None for j in bwd.op.plan.nit_sot_into_seq)
    assert not _outer_products(fg)


def _gru(cfg):
    X, h0, n = T.tensor3("X"), T.matrix("h0"), T.iscalar("n")
    Wz, Wr, Wn = T.matrix("Wz"), T.matrix("Wr"), T.matrix("Wn")
    Uz, Ur, Un = T.matrix("Uz"), T.matrix("Ur"), T.matrix("Un")
    b = T.vector("b")

    def step(x, h, Wz, Wr, Wn, Uz, Ur, Un, b):
        z = T.nnet.sigmoid(T.dot(x, Wz) + T.dot(h, Uz))
        r = T.nnet.sigmoid(T.dot(x, Wr) + T.dot(h, Ur) + b)
        c = T.tanh(T.dot(x, Wn) + r * T.dot(h, Un))
        return (1 - z) * c + z * h

    hs, _ = bptt.scan(step, sequences=X, outputs_info=h0, name="gru",
                      non_sequences=[Wz, Wr, Wn, Uz, Ur, Un, b],
                      n_steps=n if cfg.get("symbolic") else None,
                      go_backwards=cfg.get("backwards", False),
                      truncate_gradient=cfg.get("truncate", -1))
    loss = 0.5 * (hs ** 2).sum()
    params = [Wz, Wr, Wn, Uz, Ur, Un, b, h0] + ([X] if cfg.get("wrt_x") else [])
    return [X, h0, Wz, Wr, Wn, Uz, Ur, Un, b, n], [loss] + bptt.grad(loss, params)


def test_gru_gradient_moves_its_gate_expressions_into_the_loops():
    # The push-out stacked the backward's recomputed gates (z, -z, r, h @ Un, r * (h @ Un),
    # the candidate, its derivative, -r): eight T x B x H arrays. In the loop now, from six
    # chunked products (x @ W and h @ U of the three gates), each computed once per chunk.
    ins, outs = _gru({})
    before = rewritten(ins, outs, exclude=(PASS,))
    assert backward_scan(before).op.info.n_seqs >= 10
    fg = rewritten(ins, outs)
    assert not _outer_products(fg)
    bwd = backward_scan(fg)
    (fwd,) = [n for n in scans(fg) if n is not bwd]
    assert sorted(w.name for w in _chunked(fwd).values()) == ["Wn", "Wr", "Wz"]
    assert sorted(w.name for w in _chunked(bwd).values()) == ["Un", "Ur", "Uz", "Wn", "Wr", "Wz"]
    info = bwd.op.info
    # what is left as plain sequences: the trace rows, X[::-1] and the loss cotangent's
    plain = [bwd.inputs[info.outer_in_seqs[j]] for j in range(info.n_seqs)
             if bwd.op.plan.seq_product(j) is None]
    assert len(plain) <= 4, plain


def test_the_recorded_pre_activation_is_left_alone(monkeypatch):
    monkeypatch.setattr(bptt.config, "reuse_forward", True)
    ins, outs = lstm_grad_graph()
    fg = rewritten(ins, outs)
    bwd = backward_scan(fg)
    (fwd,) = [n for n in scans(fg) if n is not bwd]
    assert fwd.op.plan.nit_sot_into_seq == (0,)      # z recorded in x @ Wx's rows
    assert not _chunked(fwd) and not _chunked(bwd)


def _user_scan(case):
    X, W, h0 = T.tensor3("X"), T.matrix("W"), T.matrix("h0")
    P = T.dot(X, W)          # a sequence the user computed for all steps
    hs, _ = bptt.scan(lambda p, h: T.tanh(p + h), sequences=P, outputs_info=h0, name="user")
    out = [hs[-1].sum()] if case == "last_only" else [hs.sum()]
    if case == "extra_reader":
        out.append(P.sum())
    return [X, W, h0], out


@pytest.mark.parametrize("case", ["last_only", "trace", "extra_reader", "until"])
def test_a_users_product_sequence(case):
    ins, outs = _until_scan() if case == "until" else _user_scan(case)
    fg = rewritten(ins, outs)
    (node,) = scans(fg)
    if case == "last_only":     # h is a ring (save-mem): the product is computed in chunks
        assert node.op.plan.buffer_rows
        assert [w.name for w in _chunked(node).values()] == ["W"]
        assert not _outer_products(fg)
    elif case == "trace":       # the whole h trace holds the product's rows (seq_into_buffer)
        assert not _chunked(node) and node.op.plan.seq_into_buffer
    else:   # another reader keeps the product computed; an until loop is left alone
        assert not _chunked(node)


def _until_scan():
    from bptt.scan import until

    X, W, h0 = T.tensor3("X"), T.matrix("W"), T.matrix("h0")

    def step(x, h, W):
        h_new = T.tanh(T.dot(x, W) + h)
        return h_new, until(h_new.sum() > 1e9)

    hs, _ = bptt.scan(step, sequences=X, outputs_info=h0, non_sequences=W, name="user")
    return [X, W, h0], [hs.sum()]


# -- values ------------------------------------------------------------------------------
_FUNCS = {}
# the gradient of X too (dX's stacked rows) with go_backwards, truncate and symbolic n_steps;
# a GRU (its gates' elementwise expressions move into the loop), plain and with everything
VALUE_CONFIGS = dict(LSTM_CONFIGS, grad_x={"wrt_x": True, "backwards": True, "truncate": 3,
                                           "symbolic": True},
                     gru={"gru": True},
                     gru_all={"gru": True, "wrt_x": True, "backwards": True, "truncate": 3,
                              "symbolic": True})


def _functions(name, mode):
    """(reference: PY without the pass, the function under test) with chunks of 3 rows."""
    if (name, mode) not in _FUNCS:
        cfg = VALUE_CONFIGS[name]
        ins, outs = _gru(cfg) if cfg.get("gru") else _lstm(cfg)
        old = bptt.config.chunk_rows
        bptt.config.chunk_rows = 3
        try:
            with excluding((PASS,)):
                ref = bptt.function(ins, outs, mode="PY", on_unused_input="ignore")
            under = bptt.function(ins, outs, mode=mode, on_unused_input="ignore")
        finally:
            bptt.config.chunk_rows = old
        _FUNCS[name, mode] = ref, under
    return _FUNCS[name, mode]


# NUMBA compiles each graph (about 15 s): the plain LSTM (which the other tests use too)
# and the three graphs with every feature; PY runs them all.
_NUMBA = ("plain", "symbolic_backwards_truncate", "grad_x", "gru_all")
_CASES = [(name, "PY") for name in sorted(VALUE_CONFIGS)] + [(name, "NUMBA") for name in _NUMBA]


@pytest.mark.parametrize("name, mode", _CASES)
@settings(max_examples=12, deadline=None)
@given(data=_lstm_data(max_t=7))
def test_values_equal_without_the_pass(name, mode, data):
    ref, under = _functions(name, mode)
    if VALUE_CONFIGS[name].get("gru"):   # X, h0, Wz, Wr, Wn, Uz, Ur, Un, b, n from the LSTM's
        X, h0, _, Wx, Wh, b, n = data
        nh = h0.shape[1]
        data = [X, h0, *(Wx[:, k * nh:(k + 1) * nh] for k in range(3)),
                *(Wh[:, k * nh:(k + 1) * nh] for k in range(3)), b[:nh], n]
    assert_close(under(*data), ref(*data), f"{name} {mode}")


@pytest.mark.parametrize("mode", ["PY", "NUMBA"])
def test_steps_not_one_row_stride_apart(mode):
    # X's steps are B + 1 rows apart (a slice of wider batches): a product per step
    ref, under = _functions("plain", mode)
    rng = np.random.default_rng(5)
    t, bsz, nin, nh = 7, 2, 3, 2
    wide = rng.standard_normal((t, bsz + 1, nin))
    data = [wide[:, :bsz], 0.5 * rng.standard_normal((bsz, nh)),
            0.5 * rng.standard_normal((bsz, nh)), rng.standard_normal((nin, 4 * nh)),
            0.5 * rng.standard_normal((nh, 4 * nh)), rng.standard_normal(4 * nh), np.int32(t)]
    assert_close(under(*data), ref(*data), f"gapped {mode}")


@pytest.mark.parametrize("mode", ["PY", "NUMBA"])
def test_a_matrix_of_the_wrong_height_is_named(mode):
    _, under = _functions("plain", mode)
    rng = np.random.default_rng(1)
    data = [rng.standard_normal((4, 2, 3)), np.zeros((2, 2)), np.zeros((2, 2)),
            rng.standard_normal((5, 8)), rng.standard_normal((2, 8)), np.zeros(8), np.int32(4)]
    with pytest.raises(ValueError, match=r"scan 'lstm': sequence 0 is multiplied by a matrix "
                                         r"of 5 rows, but its rows have 3 columns"):
        under(*data)


# -- what StoragePlan and ScanArgs refuse --------------------------------------------------------
def _node():
    ins, outs = lstm_grad_graph()
    fg = rewritten(ins, outs)
    bwd = backward_scan(fg)
    return bwd


def test_storage_plan_validates_seq_products():
    op = _node().op
    info = op.info
    # the node's own sums, with other products
    check = lambda products: dataclasses.replace(  # noqa: E731
        op.plan, seq_products=products).check(info)
    with pytest.raises(ValueError, match="seq_products needs one entry per sequence"):
        check(((0, 8),))
    with pytest.raises(ValueError, match="seq_products"):
        check(((info.n_non_seqs, 8),) + (None,) * (info.n_seqs - 1))
    with pytest.raises(ValueError, match="seq_products"):   # summed with: its rows are read
        j = op.plan.nit_sot_sums[0][0]
        check(tuple((0, 8) if k == j else None for k in range(info.n_seqs)))
    with pytest.raises(ValueError, match="seq_products"):   # a home: its memory holds rows
        home = StoragePlan(nit_sot_into_seq=(0,) + (None,) * (info.n_nit_sot - 1))
        dataclasses.replace(home, seq_products=((0, 8),) + (None,) * (info.n_seqs - 1)).check(info)
    check(op.plan.seq_products)
    assert StoragePlan(seq_products=(None,)).seq_products == ()


def test_scan_args_refuses_a_scan_with_seq_products():
    with pytest.raises(ValueError, match="no rewrite may edit such a scan"):
        ScanArgs.from_node(_node())


def test_derivatives_of_a_scan_with_seq_products_are_refused():
    # they run at compile time, after gradients: a derivative would read X as the sequence
    ins, outs = lstm_grad_graph()
    fg = rewritten(ins, outs)
    fwd = next(n for n in scans(fg) if n is not backward_scan(fg))
    with pytest.raises(NotImplementedError, match="sequence products in chunks"):
        fwd.op.L_op(fwd.inputs, fwd.outputs, [None] * len(fwd.outputs))
    with pytest.raises(NotImplementedError, match="sequence products in chunks"):
        fwd.op.R_op(fwd.inputs, [None] * len(fwd.inputs))
