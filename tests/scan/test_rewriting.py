"""Scan rewrites (bptt/scan/rewriting/{basic,inner,pushout}.py): the graph's structure after
each rewrite, and equal values and gradients with and without them.

Oracles: the same graph compiled in PY with every scan rewrite excluded
(`config.exclude_rewrites`), and the NumPy scan loop of `reference.py` for
forward values. Hypothesis varies the data and the run-time sizes (n_steps 0
included) of a few fixed graph structures, so NUMBA compiles each once.
"""
from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.graph.fg import FunctionGraph
from bptt.graph.traversal import toposort
from bptt.scan import Scan
from bptt.tensor.math import Dot
from bptt.tensor.shape import DimShuffle

from ..helpers import excluding, lstm_grad_graph
from .reference import scan_reference

from bptt.compile.passes import pm

#: The rewrites under test; the "before" graphs also skip other step-graph rewriting.
OURS = ("scan_inline_constants", "scan_merge_inputs", "scan_remove_unused", "scan_inner",
        "scan_pushout_non_seqs", "scan_pushout_seqs", "scan_pushout_accumulators",
        "scan_pushout_last_step", "scan_chunk_accumulators", "scan_pushout_rows",
        "scan_state_rows")
SCAN_PASSES = OURS + tuple(n for n in pm.names() if n.startswith("scan_inner") and n not in OURS)
BASE = ("merge", "constant_folding", "canonicalize", "remove_dead_code")


def compiled(inputs, outputs, mode, exclude=()):
    with excluding(exclude):
        return bptt.function(inputs, outputs, mode=mode, on_unused_input="ignore")


def rewritten(inputs, outputs, exclude=()):
    """The FunctionGraph `bptt.function` would link (rewritten with the passes not excluded)."""
    from bptt.compile.passes import run_passes

    from bptt.graph.basic import Constant
    from bptt.graph.traversal import graph_inputs

    inputs = list(inputs) + [v for v in graph_inputs(outputs)
                             if v not in inputs and not isinstance(v, Constant)]
    fg = FunctionGraph(inputs, outputs)
    run_passes(fg, exclude=exclude)
    return fg


def scans(fg):
    return [n for n in toposort(fg.outputs, blockers=fg.inputs) if isinstance(n.op, Scan)]


def inner_nodes(op):
    return toposort(op.inner_outputs, blockers=op.inner_inputs)


def backward_scan(fg):
    (node,) = [n for n in scans(fg) if n.op.info.name.startswith("grad of")]
    return node


def only_scan(fg):
    (node,) = scans(fg)
    return node


def all_but(name):
    """Every pass but the tensor clean-ups and `name` excluded: `name`'s effect alone."""
    return tuple(p for p in pm.names() if p != name and p not in BASE)


def assert_close(actual, expected, what):
    for k, (a, e) in enumerate(zip(actual, expected)):
        np.testing.assert_allclose(a, e, rtol=1e-9, atol=1e-11, err_msg=f"{what}: output {k}")


# -- structure after each rewrite ---------------------------------------------------------------
def test_remove_unused_drops_outputs_and_inputs_nobody_needs():
    x, U, V = T.matrix("x"), T.matrix("U"), T.matrix("V")
    h0 = T.vector("h0")
    (h, y), _ = bptt.scan(lambda x_t, h, U, V: (T.tanh(T.dot(h, U) + x_t), T.dot(x_t, V)),
                          sequences=x, outputs_info=[h0, None], non_sequences=[U, V])
    before = only_scan(rewritten([x, h0, U, V], [h], exclude=SCAN_PASSES))
    assert before.op.info.n_nit_sot == 1 and before.op.info.n_non_seqs == 2
    node = only_scan(rewritten([x, h0, U, V], [h], exclude=all_but("scan_remove_unused")))
    info = node.op.info
    assert (info.n_nit_sot, info.n_non_seqs, info.n_sit_sot, info.n_seqs) == (0, 1, 1, 1)


def test_remove_unused_keeps_states_a_kept_output_reads():
    x = T.vector("x")
    (a, b), _ = bptt.scan(lambda x_t, a, b: (a + x_t, b * a), sequences=x,
                          outputs_info=[T.dscalar("a0"), T.dscalar("b0")])
    node = only_scan(rewritten([x], [b], exclude=all_but("scan_remove_unused")))
    assert node.op.info.n_sit_sot == 2       # b reads a
    node = only_scan(rewritten([x], [a], exclude=all_but("scan_remove_unused")))
    assert node.op.info.n_sit_sot == 1       # a does not read b


def test_inline_constants_and_merge_inputs():
    x, w = T.vector("x"), T.dscalar("w")
    ys, _ = bptt.scan(lambda x_t, c, w1, w2: x_t * c + w1 * w2, sequences=x,
                      non_sequences=[T.constant(np.float64(3.0)), w, w])
    fg = rewritten([x, w], [ys], exclude=SCAN_PASSES)
    assert only_scan(fg).op.info.n_non_seqs == 3
    node = only_scan(rewritten([x, w], [ys], exclude=("scan_inner", "scan_pushout_non_seqs",
                                                      "scan_pushout_seqs", "scan_pushout_rows")))
    assert node.op.info.n_non_seqs == 1
    assert node.inputs[node.op.info.outer_in_non_seqs[0]] is not None


def test_inner_graphs_are_rewritten_and_printed():
    x, W = T.matrix("x"), T.matrix("W")
    h0 = T.vector("h0")

    def step(x_t, h, W):
        inner, _ = bptt.scan(lambda r: (r * 1.0) + 0.0, sequences=x_t)   # nested scan
        return T.tanh(T.dot(h, W) * 1.0 + inner)

    hs, _ = bptt.scan(step, sequences=x, outputs_info=h0, non_sequences=W)
    fg = rewritten([x, h0, W], [hs], exclude=all_but("scan_inner"))
    node = only_scan(fg)
    names = [str(n.op) for n in inner_nodes(node.op)]
    assert "mul" not in names                      # x * 1 is gone from the step
    (nested,) = [n for n in inner_nodes(node.op) if isinstance(n.op, Scan)]
    assert [str(n.op) for n in inner_nodes(nested.op)] == []   # r * 1 + 0 is r
    f = compiled([x, h0, W], hs, "PY")
    out = io.StringIO()
    f.debugprint(file=out)
    text = out.getvalue()
    assert "Inner graph of Scan" in text and "mul" not in text
    xv, h0v, Wv = np.ones((3, 2)), np.zeros(2), np.eye(2)
    assert_close([f(xv, h0v, Wv)], [compiled([x, h0, W], hs, "PY", SCAN_PASSES)(xv, h0v, Wv)],
                 "nested")


def test_pushout_non_seqs_hoists_the_transpose():
    h0, W = T.matrix("h0"), T.matrix("W")
    hs, _ = bptt.scan(lambda h, W: T.tanh(T.dot(h, W.T)), outputs_info=h0, non_sequences=W,
                      n_steps=4)
    node = only_scan(rewritten([h0, W], [hs], exclude=all_but("scan_pushout_non_seqs")))
    assert not any(isinstance(n.op, DimShuffle) for n in inner_nodes(node.op))
    ns = [node.inputs[i] for i in node.op.info.outer_in_non_seqs]
    assert any(v.owner is not None and isinstance(v.owner.op, DimShuffle) for v in ns)


def test_pushout_seqs_makes_one_product_over_all_steps():
    X, U, W = T.tensor3("X"), T.matrix("U"), T.matrix("W")
    h0 = T.matrix("h0")
    hs, _ = bptt.scan(lambda x, h, U, W: T.tanh(T.dot(x, U) + T.dot(h, W)), sequences=X,
                      outputs_info=h0, non_sequences=[U, W])
    fg = rewritten([X, h0, U, W], [hs], exclude=all_but("scan_pushout_seqs"))
    node = only_scan(fg)
    dots = [n for n in inner_nodes(node.op) if isinstance(n.op, Dot)]
    assert len(dots) == 1 and dots[0].inputs[0] is node.op.inner_inputs[
        node.op.info.inner_in_sit_sot[0]]      # only h @ W stays in the loop
    outer_dots = [n for n in toposort(fg.outputs, blockers=fg.inputs) if isinstance(n.op, Dot)]
    assert len(outer_dots) == 1 and outer_dots[0].inputs[1] is fg.inputs[2]



def test_backward_reads_the_forward_product_of_the_reversed_sequence(monkeypatch):
    # With reuse_forward off, the LSTM's backward step recomputes z_t = x_t @ Wx + ...;
    # pushed out, that is a product over x[::-1], which is the reversed forward product
    # x @ Wx: one product. (Later, scan_chunk_seq_products computes it in chunks in each
    # loop: no T-long array.)
    monkeypatch.setattr(bptt.config, "reuse_forward", False)
    ins, outs = lstm_grad_graph()
    for exclude, products in ((("scan_chunk_seq_products",), 1), ((), 0)):
        fg = rewritten(ins, outs, exclude=exclude)
        Wx = fg.inputs[3]
        on_x = [n for n in toposort(fg.outputs, blockers=fg.inputs)
                if isinstance(n.op, Dot) and any(i is Wx for i in n.inputs)]
        assert len(on_x) == products    # was 2: x @ Wx forward, x[::-1] @ Wx backward
        chunked = [n.inputs[n.op.info.outer_in_non_seqs[e[0]]] for n in scans(fg)
                   for e in n.op.plan.seq_products if e is not None]
        assert chunked.count(Wx) == 2 * (1 - products)   # forward and backward loops


# NUMBA: tests/scan/test_grad.py::test_lstm_matches_numpy_bptt compiles the same rewritten
# LSTM gradient (shared reversed product included) and checks it against NumPy's BPTT.
@pytest.mark.parametrize("mode", ["PY"])
def test_lstm_gradient_with_the_shared_product_keeps_values(mode):
    ins, outs = lstm_grad_graph()
    rng = np.random.default_rng(3)
    t, bsz, nin, nh = 5, 2, 3, 4
    data = [rng.standard_normal((t, bsz, nin)), 0.5 * rng.standard_normal((bsz, nh)),
            0.5 * rng.standard_normal((bsz, nh)), 0.5 * rng.standard_normal((nin, 4 * nh)),
            0.5 * rng.standard_normal((nh, 4 * nh)), rng.standard_normal(4 * nh)]
    expected = compiled(ins, outs, "PY", SCAN_PASSES)(*data)
    assert_close(compiled(ins, outs, mode)(*data), expected, mode)

def _rnn_grad_graph(truncate=-1, go_backwards=False):
    X, h0 = T.tensor3("X"), T.matrix("h0")
    U, W, b = T.matrix("U"), T.matrix("W"), T.vector("b")
    hs, _ = bptt.scan(lambda x, h, U, W, b: T.tanh(T.dot(x, U) + T.dot(h, W) + b),
                      sequences=X, outputs_info=h0, non_sequences=[U, W, b],
                      truncate_gradient=truncate, go_backwards=go_backwards)
    loss = 0.5 * (hs ** 2).sum()
    return [X, h0, U, W, b], [loss] + bptt.grad(loss, [U, W, b, h0, X])


def test_pushout_accumulators_sums_weight_gradients_after_the_loop():
    # g_U = sum dot(tanh(x_t).T, da_t): tanh(x_t) is computed in the step, so its rows are
    # stacked (a nit_sot) and g_U is one product after the loop; g_W = sum dot(h_{t-1}.T,
    # da_t) reads a sequence row: left to scan_chunk_accumulators (summed in chunks)
    X, h0, U, W = T.tensor3("X"), T.matrix("h0"), T.matrix("U"), T.matrix("W")
    hs, _ = bptt.scan(lambda x, h, U, W: T.tanh(T.dot(T.tanh(x), U) + T.dot(h, W)),
                      sequences=X, outputs_info=h0, non_sequences=[U, W])
    loss = 0.5 * (hs ** 2).sum()
    ins, outs = [X, h0, U, W], bptt.grad(loss, [U, W])
    both = tuple(p for p in all_but("scan_pushout_accumulators")
                 if p != "scan_chunk_accumulators")
    fg = rewritten(ins, outs, exclude=both)
    before = backward_scan(rewritten(ins, outs, exclude=SCAN_PASSES))
    node = backward_scan(fg)
    assert node.op.info.n_states == before.op.info.n_states - 2
    assert len([e for e in node.op.plan.nit_sot_sums if e is not None]) == 1
    outer = [n for n in toposort(fg.outputs, blockers=fg.inputs) if isinstance(n.op, Dot)]
    assert len(outer) == 1                   # TANH_X_flat.T @ DA_flat
    # with scan_chunk_accumulators excluded, g_W is stacked too (as before that pass)
    fg = rewritten(ins, outs, exclude=all_but("scan_pushout_accumulators"))
    assert not backward_scan(fg).op.plan.nit_sot_sums
    outer = [n for n in toposort(fg.outputs, blockers=fg.inputs) if isinstance(n.op, Dot)]
    assert len(outer) == 2


def test_all_rewrites_on_the_rnn_gradient():
    ins, outs = _rnn_grad_graph()
    fg = rewritten(ins, outs[:4], exclude=[p for p in pm.names() if p not in BASE + OURS])
    back = backward_scan(fg)
    (fwd,) = [n for n in scans(fg) if n is not back]
    assert sum(isinstance(n.op, Dot) for n in inner_nodes(fwd.op)) == 1
    # the cotangent carry; g_U, g_W summed in chunks, g_b summed over rows
    assert back.op.info.n_states == 1 and back.op.info.n_nit_sot == 3
    assert all(e is not None for e in back.op.plan.nit_sot_sums)
    assert sum(isinstance(n.op, Dot) for n in inner_nodes(back.op)) == 1


# -- equal values and gradients --------------------------------------------------------------
CONFIGS = {
    "plain": dict(),
    "backwards": dict(go_backwards=True),
    "negative": dict(n_steps=-2),
    "symbolic": dict(n_steps="symbolic"),
    "truncate": dict(truncate_gradient=2),
    "truncate_backwards_symbolic": dict(truncate_gradient=2, go_backwards=True,
                                        n_steps="symbolic"),
    "until": dict(until=True),
    "until_truncate": dict(until=True, truncate_gradient=2),
}


def _model(cfg):
    X, h0, U, W, b = (T.tensor3("X"), T.matrix("h0"), T.matrix("U"), T.matrix("W"),
                      T.vector("b"))
    n = T.iscalar("n")
    stop = T.dscalar("stop")
    ins = [X, h0, U, W, b, n, stop]

    def step(x, h, U, W, b, stop):
        a = T.tanh(T.dot(x, U) + T.dot(h, W.T) + b)
        if cfg.get("until"):
            return [a, T.dot(x, U).sum()], bptt.until(a.sum() > stop)
        return [a, T.dot(x, U).sum()]

    n_steps = n if cfg.get("n_steps") == "symbolic" else cfg.get("n_steps")
    (hs, ys), _ = bptt.scan(step, sequences=X, outputs_info=[h0, None],
                            non_sequences=[U, W, b, stop], n_steps=n_steps,
                            truncate_gradient=cfg.get("truncate_gradient", -1),
                            go_backwards=cfg.get("go_backwards", False))
    loss = 0.5 * (hs ** 2).sum() + ys.sum()
    return ins, [loss, hs] + bptt.grad(loss, [U, W, b, h0, X])


@st.composite
def rnn_data(draw, min_steps=2):
    """Arguments of `_model`'s functions: X, h0, U, W, b, n, stop."""
    t, bsz, nin, nh = (draw(st.integers(min_steps, 5)), draw(st.integers(1, 3)),
                       draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((t, bsz, nin)), 0.5 * rng.standard_normal((bsz, nh)),
            rng.standard_normal((nin, nh)), 0.5 * rng.standard_normal((nh, nh)),
            rng.standard_normal(nh), np.int32(draw(st.integers(0, t))),
            np.float64(draw(st.floats(-2.0, 2.0)))]


_FUNCTIONS = {}


def _functions(name, mode):
    key = (name, mode)
    if key not in _FUNCTIONS:
        ins, outs = _model(CONFIGS[name])
        _FUNCTIONS[key] = (compiled(ins, outs, "PY", SCAN_PASSES), compiled(ins, outs, mode))
    return _FUNCTIONS[key]


def _check_config(name, mode, data):
    before, after = _functions(name, mode)
    assert_close(after(*data), before(*data), name)


@pytest.mark.parametrize("name", sorted(CONFIGS))
@given(data=rnn_data())
def test_rewrites_keep_values_and_gradients_py(name, data):
    _check_config(name, "PY", data)


@pytest.mark.parametrize("name", ["symbolic", "until_truncate"])
@given(data=rnn_data())
def test_rewrites_keep_values_and_gradients_numba(name, data):
    _check_config(name, "NUMBA", data)


@given(data=rnn_data())
def test_forward_matches_numpy_loop(data):
    X, h0v, Uv, Wv, bv, n, _ = data
    before, after = _functions("symbolic", "PY")
    hs = after(*data)[1]
    ref = scan_reference(lambda x, h, U, W, b: [np.tanh(x @ U + h @ W.T + b)],
                         sequences=[(X, (0,))], outputs_info=[(h0v, (-1,))],
                         non_sequences=[Uv, Wv, bv], n_steps=int(n))[0]
    np.testing.assert_allclose(hs, np.asarray(ref).reshape(hs.shape), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["symbolic", "until"])
def test_each_rewrite_alone_keeps_values(name):
    rng = np.random.default_rng(1)
    data = [rng.standard_normal((4, 2, 3)), rng.standard_normal((2, 3)),
            rng.standard_normal((3, 3)), 0.5 * rng.standard_normal((3, 3)),
            rng.standard_normal(3), np.int32(3), np.float64(0.5)]
    ins, outs = _model(CONFIGS[name])
    expected = compiled(ins, outs, "PY", SCAN_PASSES)(*data)
    for p in SCAN_PASSES:
        assert_close(compiled(ins, outs, "PY", all_but(p))(*data), expected, p)
