"""Push-out of outputs read only at their last step, and invariant push-out in `until` loops
(bptt/scan/rewriting/pushout.py: `scan_pushout_last_step`, `scan_pushout_non_seqs`).

Oracles: the same graph compiled in PY with the pass excluded
(`config.exclude_rewrites`); `verify_grad` for gradients; the structure of
the rewritten graph. Hypothesis varies data, run-time sizes and n_steps (0
included) of a few fixed graph structures, so NUMBA compiles each once.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.graph.basic import Constant
from bptt.graph.traversal import toposort
from bptt.scan import Scan
from bptt.tensor.blas import Gemm
from bptt.tensor.math import Dot
from bptt.tensor.shape import DimShuffle

from .test_rewriting import (SCAN_PASSES, all_but, assert_close, compiled, inner_nodes,
                             only_scan, rewritten, scans)

LAST = "scan_pushout_last_step"
PRODUCTS = (Dot, Gemm)


def _outer_nodes(fg):
    return toposort(fg.outputs, blockers=fg.inputs)


# -- the model: a mit_sot (taps -2, -1) RNN whose output y_t is read at ys[-1] ------------------
def _step(cfg):
    def step(x, h2, h1, U, W, V):
        hn = T.tanh(T.dot(x, U) + T.dot(h1, W.T) + 0.5 * h2)
        y = T.dot(hn + h2, V) + x.sum()            # the new state, a deeper tap, the sequence row
        if cfg.get("until"):
            return [hn, y], bptt.until(hn.sum() > cfg["until"])
        return [hn, y]
    return step


def _forward(cfg, X, H0, U, W, V, n):
    n_steps = n if cfg.get("n_steps") == "symbolic" else cfg.get("n_steps")
    (hs, ys), _ = bptt.scan(_step(cfg), sequences=X,
                            outputs_info=[dict(initial=H0, taps=[-2, -1]), None],
                            non_sequences=[U, W, V], n_steps=n_steps,
                            truncate_gradient=cfg.get("truncate_gradient", -1),
                            go_backwards=cfg.get("go_backwards", False))
    return hs, ys


def _symbols():
    return (T.tensor3("X"), T.tensor3("H0"), T.matrix("U"), T.matrix("W"), T.matrix("V"),
            T.iscalar("n"))


def _loss(hs, ys):
    return (ys[-1] ** 2).sum() + 0.1 * (hs ** 2).sum()


def _model(cfg):
    X, H0, U, W, V, n = ins = _symbols()
    hs, ys = _forward(cfg, X, H0, U, W, V, n)
    loss = _loss(hs, ys)
    return list(ins), [loss, ys[-1]] + bptt.grad(loss, [U, W, V, H0, X])


CONFIGS = {
    "plain": dict(),
    "backwards": dict(go_backwards=True),
    "negative": dict(n_steps=-3),
    "symbolic": dict(n_steps="symbolic"),
    "truncate_backwards_symbolic": dict(truncate_gradient=2, go_backwards=True,
                                        n_steps="symbolic"),
    "until": dict(until=0.3),
    "until_truncate_backwards": dict(until=0.3, truncate_gradient=2, go_backwards=True),
}


# -- structure ------------------------------------------------------------------------------------
def test_last_step_output_leaves_the_loop():
    X, H0, U, W, V, n = ins = _symbols()
    hs, ys = _forward({}, X, H0, U, W, V, n)
    fg = rewritten(ins, [ys[-1]], exclude=SCAN_PASSES + (LAST,))
    before = only_scan(fg)
    assert before.op.info.n_nit_sot == 1 and any(i is fg.inputs[4] for i in before.inputs)
    fg = rewritten(ins, [ys[-1]], exclude=all_but(LAST))
    node, V = only_scan(fg), fg.inputs[4]
    assert node.op.info.n_nit_sot == 0
    inner_v = [node.op.inner_inputs[i] for i, o in zip(node.op.info.inner_in_non_seqs,
                                                       node.op.info.outer_in_non_seqs)
               if node.inputs[o] is V]
    # nothing in the step reads V any more: y's product is computed once, after the loop
    assert not any(v in n_.inputs for n_ in inner_nodes(node.op) for v in inner_v)
    dots = [n_ for n_ in _outer_nodes(fg) if isinstance(n_.op, Dot)]
    assert len(dots) == 1 and dots[0].inputs[1] is V
    assert _reads_scan_output(dots[0].inputs[0], node)


def _reads_scan_output(var, node):
    return any(i in node.outputs for n_ in toposort([var], blockers=node.outputs)
               for i in n_.inputs)


def test_whole_pipeline_keeps_one_product_per_step_and_no_history():
    X, H0, U, W, V, n = ins = _symbols()
    hs, ys = _forward({}, X, H0, U, W, V, n)
    fg = rewritten(ins, [ys[-1]])
    node = only_scan(fg)
    assert sum(isinstance(n_.op, PRODUCTS) for n_ in inner_nodes(node.op)) == 1   # h1 @ W.T
    assert node.op.info.n_nit_sot == 0
    # the state is read only at its last rows now: save-mem makes it a ring
    assert node.op.plan.buffer_rows and all(r is not None for r in node.op.plan.buffer_rows)
    outer = [n_ for n_ in _outer_nodes(fg) if isinstance(n_.op, PRODUCTS)]
    assert len(outer) == 1          # dot(h + h2, V) once
    # x_t @ U: one product per chunk of steps inside the loop (scan_chunk_seq_products),
    # no T-long array (a ring buffer cannot hold it, as the trace would)
    info = node.op.info
    (j, (w, _)), = [(j, e) for j, e in enumerate(node.op.plan.seq_products) if e is not None]
    assert node.inputs[info.outer_in_non_seqs[w]] is fg.inputs[ins.index(U)]


@pytest.mark.parametrize("reader", ["all", "second_last"])
def test_outputs_read_elsewhere_stay(reader):
    X, H0, U, W, V, n = ins = _symbols()
    hs, ys = _forward({}, X, H0, U, W, V, n)
    out = ys.sum() if reader == "all" else ys[-2]
    node = only_scan(rewritten(ins, [out], exclude=all_but(LAST)))
    assert node.op.info.n_nit_sot == 1


def test_random_draws_stay_in_the_loop():
    srng = bptt.RandomStreams(3)
    x = T.matrix("x")
    ys, _ = bptt.scan(lambda r: r + srng.normal(r.shape), sequences=x)
    fg = rewritten([x], [ys[-1]], exclude=all_but(LAST))
    assert only_scan(fg).op.info.n_nit_sot == 1


def test_nested_last_step_in_a_step_graph():
    x = T.tensor3("x")

    def outer_step(m):
        inner, _ = bptt.scan(lambda r: T.exp(r) * 2.0, sequences=m)
        return inner[-1]

    ys, _ = bptt.scan(outer_step, sequences=x)
    fg = rewritten([x], [ys], exclude=[p for p in all_but(LAST) if p != "scan_inner"])
    # the nested loop had only that output: it is gone, exp(m[-1]) * 2 is left in the step
    assert not any(isinstance(n_.op, Scan) for n_ in inner_nodes(only_scan(fg).op))
    xv = np.random.default_rng(0).standard_normal((3, 4, 2))
    assert_close([compiled([x], ys, "PY")(xv)], [np.exp(xv[:, -1]) * 2.0], "nested")


# -- values and gradients -------------------------------------------------------------------------
@st.composite
def _data(draw):
    t, bsz, nin, nh, no = (draw(st.integers(3, 5)), draw(st.integers(1, 3)),
                           draw(st.integers(1, 3)), draw(st.integers(1, 3)),
                           draw(st.integers(1, 2)))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    return [rng.standard_normal((t, bsz, nin)), 0.5 * rng.standard_normal((2, bsz, nh)),
            rng.standard_normal((nin, nh)), 0.5 * rng.standard_normal((nh, nh)),
            rng.standard_normal((nh, no)), np.int32(draw(st.integers(0, t)))]


_FUNCTIONS = {}


def _functions(name, mode):
    if (name, mode) not in _FUNCTIONS:
        ins, outs = _model(CONFIGS[name])
        _FUNCTIONS[name, mode] = (compiled(ins, outs, "PY", (LAST,)), compiled(ins, outs, mode))
        forward = [s for s in scans(rewritten(ins, outs)) if not s.op.info.name.startswith("grad")]
        assert [s.op.info.n_nit_sot for s in forward] == [0]       # the pass fired
    return _FUNCTIONS[name, mode]


def _check(name, mode, data):
    before, after = _functions(name, mode)
    try:
        expected = before(*data)
    except IndexError:            # no step ran: ys[-1] of an empty output
        with pytest.raises(ValueError, match="ran 0 steps"):
            after(*data)
        return
    assert_close(after(*data), expected, name)


@pytest.mark.parametrize("name", sorted(CONFIGS))
@given(data=_data())
def test_last_step_keeps_values_and_gradients_py(name, data):
    _check(name, "PY", data)


def _forward_model(cfg):
    """Forward values only (a NUMBA compile of the gradient graph costs a minute here)."""
    X, H0, U, W, V, n = ins = _symbols()
    hs, ys = _forward(cfg, X, H0, U, W, V, n)
    return list(ins), [ys[-1], hs[-1], ys.shape[0] * 10 + ys.shape[1]]


NUMBA_CFG = dict(until=0.3, go_backwards=True, n_steps="symbolic")


def _numba_functions():
    if "numba" not in _FUNCTIONS:
        ins, outs = _forward_model(NUMBA_CFG)
        _FUNCTIONS["numba"] = (compiled(ins, outs, "PY", (LAST,)), compiled(ins, outs, "NUMBA"))
        fg = rewritten(ins, outs)
        assert not any(s.op.info.n_nit_sot for s in scans(fg))    # the pass fired
    return _FUNCTIONS["numba"]


@given(data=_data())
def test_last_step_keeps_values_numba(data):
    before, after = _numba_functions()
    try:
        expected = before(*data)
    except IndexError:
        with pytest.raises(ValueError, match="ran 0 steps"):
            after(*data)
        return
    assert_close(after(*data), expected, "numba")


def test_zero_steps_raise_in_both_modes():
    rng = np.random.default_rng(5)
    data = [rng.standard_normal((3, 2, 2)), rng.standard_normal((2, 2, 2)),
            rng.standard_normal((2, 2)), rng.standard_normal((2, 2)),
            rng.standard_normal((2, 1)), np.int32(0)]
    for before, after in (_functions("symbolic", "PY"), _numba_functions()):
        with pytest.raises(IndexError):
            before(*data)
        with pytest.raises(ValueError, match="read at its last step"):
            after(*data)
    data[-1] = np.int32(1)
    assert_close(after(*data), before(*data), "one step")


#: Finite differences see the full gradient: truncate_gradient here is at least the number of
#: steps (the truncated backward loop still runs); truncation that cuts steps is compared with
#: the graph without the pass above.
VERIFY = {"backwards": dict(go_backwards=True),
          "truncate": dict(truncate_gradient=4),
          "until": dict(until=0.3),
          "until_truncate": dict(until=0.3, truncate_gradient=4),
          "symbolic_backwards": dict(n_steps="shape", go_backwards=True)}


def _verify_cost(cfg):
    def cost(X, H0, U, W, V):
        n = X.shape[0] - 1 if cfg.get("n_steps") == "shape" else None
        hs, ys = _forward({**cfg, "n_steps": "symbolic" if n is not None else None},
                          X, H0, U, W, V, n)
        return _loss(hs, ys)
    return cost


@pytest.mark.parametrize("name", sorted(VERIFY))
def test_last_step_gradients_verify(name):
    rng = np.random.default_rng(11)
    pt = [rng.standard_normal((4, 2, 2)), 0.5 * rng.standard_normal((2, 2, 3)),
          rng.standard_normal((2, 3)), 0.5 * rng.standard_normal((3, 3)),
          rng.standard_normal((3, 2))]
    bptt.verify_grad(_verify_cost(VERIFY[name]), pt, mode="PY", rng=np.random.default_rng(0))


# -- invariant push-out in `until` loops ----------------------------------------------------------
def _until_rnn(X, h0, U, W, cfg):
    n = X.shape[0] - cfg["minus"] if "minus" in cfg else None
    hs, _ = bptt.scan(lambda x, h, U, W: (T.tanh(T.dot(x, U) + T.dot(h, W.T)),
                                          bptt.until(h.sum() > 0.5)),
                      sequences=X, outputs_info=h0, non_sequences=[U, W], n_steps=n,
                      truncate_gradient=cfg.get("truncate", -1),
                      go_backwards=cfg.get("backwards", False))
    return 0.5 * (hs ** 2).sum()


#: truncate >= steps, as for VERIFY (X has 4 rows; minus: n_steps = 4 - minus, 0 included).
UNTIL = {"backwards": dict(backwards=True),
         "truncate": dict(truncate=4),
         "truncate_backwards": dict(truncate=4, backwards=True),
         "symbolic_backwards_truncate": dict(minus=1, truncate=3, backwards=True),
         "zero_steps": dict(minus=4, truncate=2)}


def test_until_loops_hoist_invariants_forward_and_backward():
    X, h0, U, W = T.tensor3("X"), T.matrix("h0"), T.matrix("U"), T.matrix("W")
    loss = _until_rnn(X, h0, U, W, dict(truncate=2, backwards=True))
    outs = [loss] + bptt.grad(loss, [U, W, h0, X])
    ins = [X, h0, U, W]
    before = rewritten(ins, outs, exclude=SCAN_PASSES)
    assert any(isinstance(n_.op, DimShuffle) and n_.op.new_order == (1, 0)
               for s in scans(before) for n_ in inner_nodes(s.op))
    fg = rewritten(ins, outs, exclude=all_but("scan_pushout_non_seqs"))
    (fwd,) = [s for s in scans(fg) if s.op.info.as_while]
    for s in scans(fg):          # no step node computed from non-sequences alone, in either loop
        ns = {s.op.inner_inputs[i] for i in s.op.info.inner_in_non_seqs}
        assert not any(all(i in ns or isinstance(i, Constant) for i in n_.inputs)
                       for n_ in inner_nodes(s.op)), s.op.info.name
    ns = [fwd.inputs[i] for i in fwd.op.info.outer_in_non_seqs]
    assert any(v.owner is not None and isinstance(v.owner.op, DimShuffle) for v in ns)


@pytest.mark.parametrize("name", sorted(UNTIL))
def test_until_gradients_with_hoisted_invariants_verify(name):
    rng = np.random.default_rng(2)
    pt = [rng.standard_normal((4, 2, 2)), 0.3 * rng.standard_normal((2, 3)),
          rng.standard_normal((2, 3)), 0.5 * rng.standard_normal((3, 3))]
    cfg = UNTIL[name]
    bptt.verify_grad(lambda X, h0, U, W: _until_rnn(X, h0, U, W, cfg), pt, mode="PY",
                     rng=np.random.default_rng(0))


@pytest.mark.parametrize("mode", ["PY", "NUMBA"])
@given(seed=st.integers(0, 2 ** 16), t=st.integers(1, 5))
def test_until_values_and_gradients_equal_without_the_pushout(mode, seed, t):
    """n_steps = len(X) - 1: 0 to 4 steps, go_backwards, truncate_gradient=2, until."""
    X, h0, U, W = T.tensor3("X"), T.matrix("h0"), T.matrix("U"), T.matrix("W")
    key = ("hoist_until", mode)
    if key not in _FUNCTIONS:
        cfg = dict(minus=1, truncate=2, backwards=True)
        loss = _until_rnn(X, h0, U, W, cfg)
        # gradients in PY; NUMBA compiles the forward loop only (its gradient graph costs a
        # minute to compile on this machine)
        outs = [loss] + (bptt.grad(loss, [U, W, h0, X]) if mode == "PY" else [])
        _FUNCTIONS[key] = (compiled([X, h0, U, W], outs, "PY", ("scan_pushout_non_seqs",)),
                           compiled([X, h0, U, W], outs, mode))
    before, after = _FUNCTIONS[key]
    rng = np.random.default_rng(seed)
    data = [rng.standard_normal((t, 2, 2)), 0.3 * rng.standard_normal((2, 3)),
            rng.standard_normal((2, 3)), 0.5 * rng.standard_normal((3, 3))]
    assert_close(after(*data), before(*data), "until")
