"""A product read as a sequence stored in its state's buffer (bptt/scan/rewriting/seq_buffer.py).

Structure: `StoragePlan.seq_into_buffer` is set on the forward RNN (x @ U written by
`ProductRows` behind the initial row, the loop's buffer in those rows), shown by
debugprint, also on a go_backwards loop (a product of X's reversed view is fresh memory in
the loop's order), and NOT set for a reversed view of a product, until, a
sequence that is not a product or has another reader, or a nit_sot that may view the row.
Values: one compiled graph (the RNN with a symbolic n_steps, whose sign picks the
direction, and its gradients reading the trace) equal with the pass excluded, PY and
NUMBA, hypothesis over T, B, |n_steps| <= T (0 and negative) and values; the loop's
buffer IS the product's memory (checked on the raw outputs); a row shape that differs at
run time keeps fresh rows; the two new ops on sizes 0, row shapes that differ and sizes
that do not fit; an initial state that is a constant of the graph (a read-only global in
the generated module), on both of HeadRows' branches, against a NumPy loop.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.graph.evaluate import PerformProgram
from bptt.graph.fg import FunctionGraph
from bptt.link.numba.linker import make_numba_callable
from bptt.scan.info import ScanInfo
from bptt.scan.plan import StoragePlan
from bptt.tensor.product_rows import HeadRows, ProductRows

from .test_rewriting import assert_close, compiled, rewritten, scans

PASS = ("scan_seq_into_buffer",)


def _rnn(X, h0, U, W, n, **kw):
    hs, _ = bptt.scan(lambda x, h, U, W: T.tanh(T.dot(x, U) + T.dot(h, W)), sequences=X,
                      outputs_info=h0, non_sequences=[U, W], n_steps=n, **kw)
    return hs


def _model(backwards=False):
    """An RNN over X (n steps: a negative n runs backwards), and gradients reading its trace."""
    X, h0, U, W, n = T.tensor3("X"), T.matrix("h0"), T.matrix("U"), T.matrix("W"), T.iscalar("n")
    hs = _rnn(X, h0, U, W, n, name="rnn", go_backwards=backwards)
    loss = 0.5 * (hs ** 2).sum()
    return [X, h0, U, W, n], [loss, hs] + bptt.grad(loss, [U, W, h0, X])


def _flagged(fg):
    return [n for n in scans(fg) if n.op.plan.seq_into_buffer]


@pytest.mark.parametrize("backwards", [False, True])
def test_the_forward_product_is_stored_in_the_state_buffer(backwards):
    # go_backwards (or n < 0): the product of X's reversed view is fresh memory whose
    # rows are in the loop's order
    ins, outs = _model(backwards)
    assert not _flagged(rewritten(ins, outs, exclude=PASS))
    (node,) = _flagged(rewritten(ins, outs))
    info = node.op.info
    assert node.op.plan.seq_into_buffer == (0,) and info.name == "rnn"
    seq, init = node.inputs[info.outer_in_seqs[0]], node.inputs[info.buffers[0].outer_input]
    rows = seq.owner.inputs[0]                       # seq = rows[1:]
    assert isinstance(rows.owner.op, ProductRows) and rows.owner.op.k == 1
    assert isinstance(init.owner.op, HeadRows) and init.owner.inputs[0] is rows
    assert ", seq 0 into sit_sot 0" in str(node.op)  # what debugprint shows


def _one(seq_of, step, **kw):
    X, h0, U = T.matrix("X"), T.vector("h0"), T.matrix("U")
    ys, _ = bptt.scan(step, sequences=seq_of(X, U), outputs_info=kw.pop("outputs_info", h0),
                      **kw)
    return [X, h0, U], list(ys) if isinstance(ys, list) else [ys]


@pytest.mark.parametrize("case", ["input", "other_reader", "until", "reversed", "nit_view"])
def test_the_flag_is_not_set(case):
    prod = lambda X, U: T.dot(X, U)           # noqa: E731
    step = lambda p, h: T.tanh(p + h)         # noqa: E731
    kw = {}
    if case == "input":
        prod = lambda X, U: X                 # noqa: E731  (the caller's array)
    elif case == "until":
        step = lambda p, h: (T.tanh(p + h), bptt.until(h.sum() > 1.0))   # noqa: E731
    elif case == "reversed":                  # rows of a reversed view are not in loop order
        prod = lambda X, U: T.dot(X, U)[::-1]     # noqa: E731
    elif case == "nit_view":                  # a nit_sot that is the row: read after the write
        step, kw = (lambda p, h: [T.tanh(p + h), p[::-1]]), dict(outputs_info=[T.vector("h"),
                                                                               None])
    ins, outs = _one(prod, step, **kw)
    if case == "other_reader":
        outs.append(T.dot(ins[0], ins[2]).sum())        # the product read again after the loop
    if case == "nit_view":
        ins.append(kw["outputs_info"][0])
    assert not _flagged(rewritten(ins, outs))
    if case in ("other_reader", "reversed"):           # the same graph, flagged
        ins, outs = _one(lambda X, U: T.dot(X, U), lambda p, h: T.tanh(p + h))
        assert _flagged(rewritten(ins, outs))


def test_storage_plan_checks_the_field():
    base = dict(n_seqs=1, mit_mot_in_slices=(), mit_mot_out_slices=(), n_sit_sot=1,
                n_nit_sot=0, n_shared_outs=0, n_non_seqs=0)
    with pytest.raises(ValueError, match="seq_into_buffer"):
        StoragePlan(seq_into_buffer=(1,)).check(ScanInfo(mit_sot_in_slices=(), **base))
    with pytest.raises(ValueError, match="seq_into_buffer"):    # two initial rows
        StoragePlan(seq_into_buffer=(0, None)).check(
            ScanInfo(mit_sot_in_slices=((-2, -1),), **base))
    with pytest.raises(ValueError, match="seq_into_buffer"):    # a ring
        StoragePlan(seq_into_buffer=(0,), buffer_rows=(2,)).check(
            ScanInfo(mit_sot_in_slices=(), **base))
    plan = StoragePlan(seq_into_buffer=(None, 0))
    plan.check(ScanInfo(mit_sot_in_slices=((-1,),), **base))
    assert plan.buffer_seq(1) == 0 and StoragePlan(seq_into_buffer=(None,)).empty


# -- values: one compiled graph per mode ------------------------------------------------------
@st.composite
def _data(draw):
    t, bsz, nin, nh = (draw(st.integers(1, 5)), draw(st.integers(1, 3)),
                       draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    return [rng.standard_normal((t, bsz, nin)), 0.5 * rng.standard_normal((bsz, nh)),
            rng.standard_normal((nin, nh)), 0.5 * rng.standard_normal((nh, nh)),
            np.int32(draw(st.integers(-t, t)))]     # n < 0 runs backwards


_CACHE = {}


def _functions(mode):
    """The reference (PY, pass excluded), and the rewritten graph with the product's rows and
    the forward output as extra outputs, linked raw (no output copies: aliasing shows)."""
    if mode not in _CACHE:
        ins, outs = _model()
        fg = rewritten(ins, outs)
        (node,) = _flagged(fg)
        rows = node.inputs[node.op.info.outer_in_seqs[0]].owner.inputs[0]
        extra = FunctionGraph(fg.inputs, list(fg.outputs) + [rows, node.outputs[0]])
        raw = PerformProgram(extra.inputs, extra.outputs) if mode == "PY" else \
            make_numba_callable(extra).numba_function
        _CACHE[mode] = compiled(ins, outs, "PY", PASS), raw
    return _CACHE[mode]


def _same_memory(a, b, mode):
    if mode == "PY":
        return np.shares_memory(a, b)
    return a.base.data == b.base.data     # one NRT allocation (MemInfo)


@pytest.mark.parametrize("mode", ["PY", "NUMBA"])
@given(data=_data())
def test_values_equal_with_the_pass_excluded(mode, data):
    before, raw = _functions(mode)
    kept = [np.array(d, copy=True) for d in data]
    *outs, rows, trace = raw(*data)
    assert_close(outs, before(*data), mode)
    if data[-1]:                               # (no rows after the first: either way)
        assert _same_memory(rows, trace, mode)  # the loop wrote h over the product's rows
    for d, k in zip(data, kept):
        np.testing.assert_array_equal(d, k)    # the caller's arrays are not written


@pytest.mark.parametrize("mode", ["PY", "NUMBA"])
def test_a_row_shape_that_differs_at_run_time_keeps_fresh_rows(mode):
    # p's rows are as wide as U's columns, h's as h0: they broadcast when p's is 1
    ins, outs = _one(lambda X, U: T.dot(X, U), lambda p, h: T.tanh(p + h))
    assert _flagged(rewritten(ins, outs))
    before, after = compiled(ins, outs, "PY", PASS), compiled(ins, outs, mode)
    rng = np.random.default_rng(0)
    for nh, nu in ((3, 1), (3, 3)):
        data = [rng.standard_normal((4, 2)), rng.standard_normal(nh), rng.standard_normal((2, nu))]
        assert_close(after(*data), before(*data), f"{mode} {nh} {nu}")


# -- the two ops, straight: every branch of the inline lowering ------------------------------
_OPS = {}


@pytest.mark.parametrize("mode", ["PY", "NUMBA"])
@given(m=st.integers(0, 3), b=st.integers(0, 2), h=st.integers(0, 2), hb=st.integers(0, 2),
       rows=st.integers(0, 2), minus=st.integers(-1, 2))
def test_product_rows_and_head_rows(mode, m, b, h, hb, rows, minus):
    """rows[1:] is reshape(x @ y, shape); HeadRows(1)(rows, head) is rows (its first row
    head's) when head has a row of the product's row shape, else head."""
    if mode not in _OPS:
        head, x, y, shape = T.tensor3("head"), T.matrix("x"), T.matrix("y"), T.lvector("shape")
        rows_ = ProductRows(1, (None, None, None))(head, x, y, shape)
        _OPS[mode] = bptt.function([head, x, y, shape], [rows_[1:], HeadRows(1)(rows_, head)],
                                   mode=mode)
    rng = np.random.default_rng(m * 100 + b * 10 + h)
    x, y = rng.standard_normal((m * b, 2)), rng.standard_normal((2, h))
    head = rng.standard_normal((rows, hb, h))
    shape = np.array([m, b, h], dtype=np.int64)
    if minus >= 0:
        shape[minus] = -1 if minus else m + 1   # a negative size; rows that do not fit
    if minus > 0 or (minus == 0 and b * h):
        with pytest.raises(ValueError):
            _OPS[mode](head, x, y, shape)
        return
    expected = np.reshape(x @ y, tuple(shape))
    product, first = _OPS[mode](head, x, y, shape)
    np.testing.assert_allclose(product, expected, rtol=1e-12, atol=1e-12)
    same = rows >= 1 and (hb, h) == expected.shape[1:]
    np.testing.assert_array_equal(first[:1] if same else first, head[:1] if same else head)
    assert first.shape[0] == (1 + len(expected) if same else rows)


# -- an initial state that is a constant of the graph ------------------------------------------
# numba types a constant of the generated module as a read-only global; the loop may take
# HeadRows' result as its buffer, so that result must stay writable on both branches.
_H = 3
_CONSTANT_INITS = {"zeros": (lambda: T.zeros((_H,)), np.zeros(_H)),
                   "values": (lambda: T.constant(np.array([0.5, -1.0, 2.0])),
                              np.array([0.5, -1.0, 2.0]))}


def _constant_init_graph(init, gates):
    """An RNN (gates=False: the product is as wide as the state, HeadRows is the rows) or a
    gated step (gates=True: the product is twice as wide and sliced, HeadRows is the head)
    over X from a constant initial state; the RNN with its loss and gradient too."""
    X, U = T.matrix("X"), T.matrix("U")

    def step(x, h, U):
        p = T.dot(x, U)          # pushed out of the loop: a product read as a sequence
        return T.tanh(p[:_H] + p[_H:] * h) if gates else T.tanh(p + h)

    hs, _ = bptt.scan(step, sequences=X, outputs_info=_CONSTANT_INITS[init][0](),
                      non_sequences=[U])
    if gates:           # (the gradient's loop would read the product: no flag)
        return [X, U], [hs]
    loss = (hs ** 2).sum()
    return [X, U], [hs, loss, bptt.grad(loss, U)]


def _constant_init_reference(x, u, h, gates):
    hs = []
    for p in x @ u:
        h = np.tanh(p[:_H] + p[_H:] * h) if gates else np.tanh(p + h)
        hs.append(h)
    return np.reshape(hs, (len(x), _H))


_CONSTANT_CACHE = {}


@pytest.mark.parametrize("mode", ["PY", "NUMBA"])
@pytest.mark.parametrize("gates", [False, True])
@pytest.mark.parametrize("init", sorted(_CONSTANT_INITS))
@given(t=st.integers(0, 4), seed=st.integers(0, 2 ** 16))
def test_a_constant_initial_state(mode, gates, init, t, seed):
    key = (mode, gates, init)
    if key not in _CONSTANT_CACHE:
        ins, outs = _constant_init_graph(init, gates)
        assert _flagged(rewritten(ins, outs))
        _CONSTANT_CACHE[key] = compiled(ins, outs, mode), compiled(ins, outs, "PY", PASS)
    after, before = _CONSTANT_CACHE[key]
    rng = np.random.default_rng(seed)
    x, u = rng.standard_normal((t, 2)), 0.5 * rng.standard_normal((2, 2 * _H if gates else _H))
    got = after(x, u)
    assert_close(got, before(x, u), f"{mode} {init} gates={gates}")
    h0 = _CONSTANT_INITS[init][1]
    np.testing.assert_allclose(got[0], _constant_init_reference(x, u, h0, gates), rtol=1e-12)
