"""`scan_chunk_accumulators` (bptt/scan/rewriting/chunks.py): weight gradients summed in
chunks of steps inside the backward loop (``StoragePlan.nit_sot_sums``).

Structure (PY rewriting, no compile): the RNN and LSTM backward scans sum dU/dW (dWx/dWh)
as summed nit_sots, keep no T-long step cotangent and no T-long float join; the bias
gradient is a nit_sot summed over rows (no per-step sum left in the step), as is a
broadcast bias row's; a loop with ``until`` keeps its accumulator; debugprint names
the sums. Values: one graph holding two RNN gradients -- symbolic n_steps (0 and fewer
than T included; float64), go_backwards with truncate_gradient (the backward reads X forward
and the trace reversed: one of them is copied per chunk; float32) -- compiled once per mode,
against the same graph in PY with the pass excluded; `config.chunk_rows` is lowered so that
hypothesis over T and B gives several chunks of 1 to 6 steps and a partial last chunk.
A zeros initial accumulator (the gradient's): the outer value is the sum, no zeros + add
(structure), values against a NumPy loop for n_steps 0, 1, 5 with a broadcast bias row (PY,
NUMBA), and a sum of another shape than the accumulator's rows raises ValueError naming both.
"""
from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.config import config
from bptt.graph.traversal import toposort
from bptt.scan.info import ScanInfo
from bptt.scan.plan import ROW_SUM, StoragePlan
from bptt.tensor.basic import Join

from ..helpers import lstm_grad_graph, numpy_rnn_grads, rnn_grad_graph
from .test_rewriting import backward_scan, only_scan, rewritten

import bptt.compile.passes  # noqa: F401  (loads the rewrite modules)

PASS = "scan_chunk_accumulators"


_rnn = rnn_grad_graph


def _summed(node):
    return [node.op.plan.nit_sot_sum(k) for k in range(node.op.info.n_nit_sot)]


def _float_joins(fg):
    return [n for n in fg.apply_nodes if isinstance(n.op, Join) and n.outputs[0].ndim == 3]


def test_rnn_backward_sums_weight_gradients_in_chunks():
    ins, outs = _rnn()
    fg = rewritten(ins, outs)
    node = backward_scan(fg)
    # dU (with X's rows), dW (with h's rows) and db (over rows): summed; nothing stacked
    assert len(_summed(node)) == 3
    assert all(e is not None and e[1] == config.chunk_rows for e in _summed(node))
    assert [e[0] == ROW_SUM for e in _summed(node)].count(True) == 1
    # only the step cotangent carry stays a state; no per-step sum; no T-long join of h
    assert node.op.info.n_states == 1
    assert not [n for n in toposort(node.op.inner_outputs)
                if n.op.__class__.__name__ in ("Sum", "SumTo") and n.outputs[0].ndim == 1]
    assert not _float_joins(fg)
    before = backward_scan(rewritten(ins, outs, exclude=(PASS,)))
    # with the pass excluded the push-out stacks dpre and sums after the loop, as before
    assert not before.op.plan.nit_sot_sums and before.op.info.n_states == 1
    f = bptt.function(ins, outs, mode="PY")
    text = io.StringIO()
    with redirect_stdout(text):
        f.debugprint()
    assert "summed with seq" in text.getvalue() and "summed over rows" in text.getvalue()


def test_broadcast_bias_row_is_summed_over_rows():
    """``b.dimshuffle("x", 0)``'s gradient, DimShuffle{1}(SumTo(q, (1, H))), too (PY values
    against the pass excluded, n_steps 0 included)."""
    from ..helpers import excluding

    X, h0, W, b = T.tensor3("X"), T.matrix("h0"), T.matrix("W"), T.vector("b")
    hs, _ = bptt.scan(lambda x, h, W, b: T.tanh(T.dot(h, W) + x + b.dimshuffle("x", 0)),
                      sequences=X, outputs_info=h0, non_sequences=[W, b])
    loss = 0.5 * (hs ** 2).sum()
    ins, outs = [X, h0, W, b], bptt.grad(loss, [W, b])
    assert [e[0] for e in _summed(backward_scan(rewritten(ins, outs)))] == [1, ROW_SUM]
    with excluding((PASS,)):
        before = bptt.function(ins, outs, mode="PY")
    after = bptt.function(ins, outs, mode="PY")
    rng = np.random.default_rng(0)
    for t in (0, 5):
        args = [rng.normal(size=(t, 3, 2)), rng.normal(size=(3, 2)), rng.normal(size=(2, 2)),
                rng.normal(size=2)]
        for g, e in zip(after(*args), before(*args)):
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


def test_lstm_backward_sums_weight_gradients_in_chunks():
    ins, outs = lstm_grad_graph()
    node = backward_scan(rewritten(ins, outs))
    assert [e[0] for e in _summed(node) if e is not None] == [1, 2, ROW_SUM]   # dWx, dWh, db
    assert not [k for k, e in enumerate(_summed(node)) if e is None
                and node.outputs[node.op.info.outer_out_nit_sot[k]].ndim == 3
                and node.op.plan.nit_sot_seq(k) is None]


def test_until_loops_are_left_alone():
    """A loop with until keeps its accumulator (its backward, a plain loop, chunks)."""
    X, h0, a0, W = T.tensor3("X"), T.matrix("h0"), T.matrix("a0"), T.matrix("W")

    def step(x, h, a, W):
        h_new = T.tanh(T.dot(h, W) + x)
        return [h_new, a + T.dot(x.T, h_new)], bptt.until(h_new.sum() > 9)

    (hs, acc), _ = bptt.scan(step, sequences=X, outputs_info=[h0, a0], non_sequences=W)
    fg = rewritten([X, h0, a0, W], [acc[-1]])
    (node,) = [n for n in fg.apply_nodes if n.op.__class__.__name__ == "Scan"]
    assert node.op.info.as_while and not node.op.plan.nit_sot_sums
    assert node.op.info.n_sit_sot == 2


def test_plan_rejects_bad_sums():
    base = dict(n_seqs=1, mit_mot_in_slices=(), mit_mot_out_slices=(), mit_sot_in_slices=(),
                n_sit_sot=0, n_nit_sot=1, n_shared_outs=0, n_non_seqs=0)
    info = ScanInfo(**base)
    plan = StoragePlan(nit_sot_sums=((0, 4),))
    plan.check(info)
    assert plan.nit_sot_sum(0) == (0, 4) and not plan.nit_sot_row_sum(0)
    assert StoragePlan(nit_sot_sums=((ROW_SUM, 4),)).nit_sot_row_sum(0)
    assert StoragePlan(nit_sot_sums=(None,)).empty
    for bad in (((1, 4),), ((0, 0),), ((0, 4), None), ((-2, 4),)):
        with pytest.raises(ValueError, match="StoragePlan: nit_sot_sums needs one entry"):
            StoragePlan(nit_sot_sums=bad).check(info)
    with pytest.raises(ValueError, match="and no until"):
        plan.check(ScanInfo(**base, as_while=True))


# -- equal values, PY and NUMBA ------------------------------------------------------------
ROWS = 6    # chunks of 6 // B steps: 6, 3, 2, 2, 2 for B = 1..5


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
        from ..helpers import excluding

        ins, outs = _graph()
        with excluding((PASS,)):
            before = bptt.function(ins, outs, mode="PY")
        default, config.chunk_rows = config.chunk_rows, ROWS   # read when rewriting
        try:
            _FUNCS[mode] = before, bptt.function(ins, outs, mode=mode)
        finally:
            config.chunk_rows = default
    return _FUNCS[mode]


def _data(rng, t, b, n, dtype):
    x = rng.normal(size=(t, b, 3)).astype(dtype)
    h0 = rng.normal(size=(b, 2)).astype(dtype)
    u, w = rng.normal(size=(3, 2)).astype(dtype), (0.5 * rng.normal(size=(2, 2))).astype(dtype)
    return [x, h0, u, w, rng.normal(size=2).astype(dtype)]


@settings(deadline=None, max_examples=20)
@given(t=st.integers(0, 13), b=st.integers(1, 5), cut=st.integers(0, 13),
       seed=st.integers(0, 2 ** 16))
def test_chunked_sums_equal_the_loop(mode, t, b, cut, seed):
    before, after = _functions(mode)
    rng = np.random.default_rng(seed)
    args = (_data(rng, t, b, None, "float64") + [min(cut, t)]
            + _data(rng, t, b, None, "float32"))
    got, want = after(*args), before(*args)
    for k, (g, e) in enumerate(zip(got, want)):
        tol = 1e-4 if g.dtype == np.float32 else 1e-10
        assert g.dtype == e.dtype and g.shape == e.shape, k
        np.testing.assert_allclose(g, e, rtol=tol, atol=tol, err_msg=f"output {k}")


# -- a zeros accumulator is the sum itself ---------------------------------------------------
def _bias_row_rnn():
    """An RNN whose bias is broadcast as a row, symbolic n_steps: loss and 4 gradients."""
    n = T.iscalar("n")
    X, h0, U, W, b = T.tensor3("X"), T.matrix("h0"), T.matrix("U"), T.matrix("W"), T.vector("b")

    def step(x, h, U, W, b):
        return T.tanh(T.dot(x, U) + T.dot(h, W) + b.dimshuffle("x", 0))

    hs, _ = bptt.scan(step, sequences=X, outputs_info=h0, non_sequences=[U, W, b], n_steps=n)
    loss = 0.5 * (hs ** 2).sum()
    return [X, h0, U, W, b, n], [loss] + bptt.grad(loss, [U, W, b, h0])


def _sum_source(v):
    """`v` seen through a `Check` (the run-time shape check of a sum that replaced zeros + sum)."""
    return v.owner.inputs[0] if v.owner is not None and type(v.owner.op).__name__ == "Check" else v


def test_zeros_accumulator_is_the_sum_without_zeros_or_add():
    """The gradient's initial accumulator is zeros: dU and dW are the loop's sums (dW through
    a shape check: h0's columns against W's rows are not provably equal), db their SumTo."""
    ins, outs = _bias_row_rnn()
    fg = rewritten(ins, outs)
    node = backward_scan(fg)
    _, du, dw, db, _ = fg.outputs
    assert du.owner is node and du.ndim == 2
    assert dw.owner.op.__class__.__name__ == "Check" and dw.owner.inputs[0].owner is node
    assert db.owner.op.__class__.__name__ == "SumTo" and db.owner.inputs[0].owner is node
    # the only float zeros: the carried cotangent's initial row (save-mem's pre-add form)
    zeros = [n for n in fg.apply_nodes if n.op.__class__.__name__ == "Alloc"
             and n.outputs[0].dtype == "float64"]
    assert [(z.outputs[0].type.shape[0], [c for c, _ in fg.clients[z.outputs[0]]])
            for z in zeros] == [(1, [node])]
    assert not [n for n in fg.apply_nodes if n.op.__class__.__name__ == "Elemwise"
                and any(i.owner is node for i in n.inputs)]


def test_zeros_accumulator_values_equal_a_numpy_loop(mode):
    ins, outs = _bias_row_rnn()
    f = bptt.function(ins, outs, mode=mode)
    rng = np.random.default_rng(1)
    x, h0 = rng.normal(size=(5, 3, 4)), rng.normal(size=(3, 2))
    u, w, b = rng.normal(size=(4, 2)), 0.5 * rng.normal(size=(2, 2)), rng.normal(size=2)
    for n in (0, 1, 5):
        got, want = f(x, h0, u, w, b, n), numpy_rnn_grads(x, h0, u, w, b, n)
        for k, (g, e) in enumerate(zip(got, want)):
            assert g.shape == np.shape(e), (n, k)
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12, err_msg=f"n={n} output {k}")


def _user_accumulator(init):
    """``acc + x_t.T @ tanh(x_t @ V)`` from `init` (a loop of the user's, named), its last
    row read as the grad code reads it: ``[-1]`` of the stored rows, initial row included
    (``acc[-1]`` of scan's result, ``rows[1:][-1]``, becomes a computed index the pass
    does not match)."""
    X, V = T.tensor3("X"), T.matrix("V")
    acc, _ = bptt.scan(lambda x, a, V: a + T.dot(x.T, T.tanh(T.dot(x, V))), sequences=X,
                       outputs_info=init, non_sequences=V, name="acc")
    rows = acc.owner.inputs[0]
    assert acc.owner.op.idx_list[0].start == 1
    return [X, V], rows[-1]


def test_zeros_accumulator_of_another_shape_raises_naming_the_scan(mode):
    r, c = T.iscalar("r"), T.iscalar("c")
    (X, V), out = _user_accumulator(T.zeros((r, c)))
    node = only_scan(rewritten([X, V, r, c], [out]))
    assert node.op.plan.nit_sot_sums and not node.op.info.n_sit_sot
    f = bptt.function([X, V, r, c], out, mode=mode)
    rng = np.random.default_rng(2)
    x, v = rng.normal(size=(4, 3, 5)), rng.normal(size=(5, 2))
    want = sum(x[t].T @ np.tanh(x[t] @ v) for t in range(4))
    np.testing.assert_allclose(f(x, v, 5, 2), want, rtol=1e-12)
    with pytest.raises(ValueError, match=r"scan 'acc': .* sums to shape \(5, 2\) over the "
                                         r"steps, but its rows have shape \(6, 2\)"):
        f(x, v, 6, 2)


def test_nonzero_accumulator_keeps_its_initial_row():
    A = T.matrix("A")
    (X, V), out = _user_accumulator(A)
    assert only_scan(rewritten([X, V, A], [out])).op.plan.nit_sot_sums
    f = bptt.function([X, V, A], out, mode="PY")
    rng = np.random.default_rng(3)
    x, v, a = rng.normal(size=(4, 3, 5)), rng.normal(size=(5, 2)), rng.normal(size=(5, 2))
    want = a + sum(x[t].T @ np.tanh(x[t] @ v) for t in range(4))
    np.testing.assert_allclose(f(x, v, a), want, rtol=1e-12)
