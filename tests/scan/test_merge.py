"""Scan merging (bptt/scan/rewriting/merge.py): equal outputs of one scan, and scans over the
same steps. The graph's structure after rewriting, and equal values and gradients with the
two passes excluded (`config.exclude_rewrites`), in PY and NUMBA.

Hypothesis varies the data and the run-time sizes (n_steps 0 included, and a batch of 1
for x against a batch of B for h, so the SumTo the output merge looks through really sums)
of a few fixed graph structures, so NUMBA compiles each once.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.graph.rewriting import fired
from bptt.graph.traversal import toposort

from .test_rewriting import assert_close, compiled, rewritten, scans

PASSES = ("scan_merge", "scan_merge_outputs")
NO_CHUNKS = ("scan_chunk_accumulators",)


def _n_scans(ins, outs, exclude=()):
    return len(scans(rewritten(ins, outs, exclude=exclude)))


def _nit_sots(fg):
    return sum(n.op.info.n_nit_sot for n in scans(fg))


# -- two RNNs over one sequence, and their gradients -----------------------------------------
CONFIGS = {
    "plain": dict(),
    "backwards": dict(go_backwards=True),
    "truncate_symbolic": dict(truncate_gradient=2, n_steps="symbolic"),
    "backwards_truncate_symbolic": dict(truncate_gradient=2, go_backwards=True,
                                        n_steps="symbolic"),
    "until": dict(until=True),
    "until_truncate": dict(until=True, truncate_gradient=2),
    "all": dict(until=True, truncate_gradient=2, go_backwards=True, n_steps="symbolic"),
}


def _model(cfg):
    X, h0, g0 = T.tensor3("X"), T.matrix("h0"), T.matrix("g0")
    U, W, V, b = T.matrix("U"), T.matrix("W"), T.matrix("V"), T.vector("b")
    n, stop = T.iscalar("n"), T.dscalar("stop")
    ins = [X, h0, g0, U, W, V, b, n, stop]

    def rnn(weight, scale):
        def step(x, h, U, Wh, b, stop):
            a = T.tanh(scale * T.dot(x, U) + T.dot(h, Wh) + b)
            return (a, bptt.until(x.sum() > stop)) if cfg.get("until") else a

        hs, _ = bptt.scan(step, sequences=X, outputs_info=h0 if scale == 1.0 else g0,
                          non_sequences=[U, weight, b, stop],
                          n_steps=n if cfg.get("n_steps") == "symbolic" else None,
                          truncate_gradient=cfg.get("truncate_gradient", -1),
                          go_backwards=cfg.get("go_backwards", False))
        return hs

    hs, gs = rnn(W, 1.0), rnn(V, 0.5)
    loss = 0.5 * (hs ** 2).sum() + 0.3 * (gs ** 2).sum()
    return ins, [loss, hs, gs] + bptt.grad(loss, [U, W, V, b, h0, g0, X])


@st.composite
def _data(draw):
    t, bsz, nin, nh = (draw(st.integers(2, 5)), draw(st.integers(1, 3)),
                       draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    bx = draw(st.sampled_from([1, bsz]))      # x's batch may broadcast against h's
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    return [rng.standard_normal((t, bx, nin)), 0.5 * rng.standard_normal((bsz, nh)),
            0.5 * rng.standard_normal((bsz, nh)), rng.standard_normal((nin, nh)),
            0.5 * rng.standard_normal((nh, nh)), 0.5 * rng.standard_normal((nh, nh)),
            rng.standard_normal(nh), np.int32(draw(st.integers(0, t))),
            np.float64(draw(st.floats(-2.0, 2.0)))]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_two_rnns_and_their_gradients_are_two_loops(name):
    ins, outs = _model(CONFIGS[name])
    before = rewritten(ins, outs, exclude=PASSES)
    after = rewritten(ins, outs)
    assert len(scans(before)) >= 4                  # two forward loops, two backward loops
    assert len(scans(after)) == 2                   # one forward loop, one backward loop
    assert fired(after)["scan_merge"] >= 2
    # the weight gradients are summed in the loop (scan_chunk_accumulators): no stacked
    # cotangent left to store once; the merged loop stores no more than the two did
    assert _nit_sots(after) <= _nit_sots(before)


_FUNCTIONS = {}


def _functions(name, mode):
    if (name, mode) not in _FUNCTIONS:
        ins, outs = _model(CONFIGS[name])
        _FUNCTIONS[name, mode] = (compiled(ins, outs, "PY", PASSES), compiled(ins, outs, mode))
    return _FUNCTIONS[name, mode]


@pytest.mark.parametrize("name", sorted(CONFIGS))
@given(data=_data())
def test_merging_keeps_values_and_gradients_py(name, data):
    before, after = _functions(name, "PY")
    assert_close(after(*data), before(*data), name)


@given(data=_data())
def test_merging_keeps_values_and_gradients_numba(data):
    # One structure with every setting (each NUMBA compile of the two RNNs costs a minute).
    before, after = _functions("all", "NUMBA")
    assert_close(after(*data), before(*data), "all")


# -- one scan: equal outputs -----------------------------------------------------------------
def _rnn_grad(kind):
    X, h0, c0 = T.tensor3("X"), T.matrix("h0"), T.matrix("c0")
    U, W, b = T.matrix("U"), T.matrix("W"), T.vector("b")
    if kind == "rnn":
        hs, _ = bptt.scan(lambda x, h, U, W, b: T.tanh(T.dot(x, U) + T.dot(h, W) + b),
                          sequences=X, outputs_info=h0, non_sequences=[U, W, b])
    else:
        def step(x, h, c, U, W, b):
            n = h.shape[1]
            z = T.dot(x, U) + T.dot(h, W) + b
            i, f, o = (T.nnet.sigmoid(z[:, k * n:(k + 1) * n]) for k in range(3))
            c_new = f * c + i * T.tanh(z[:, 3 * n:])
            return o * T.tanh(c_new), c_new

        (hs, _), _ = bptt.scan(step, sequences=X, outputs_info=[h0, c0],
                               non_sequences=[U, W, b])
    loss = 0.5 * (hs ** 2).sum()
    return [X, h0, c0, U, W, b], [loss] + bptt.grad(loss, [U, W, b, h0])


@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_backward_cotangent_is_stored_once(kind):
    # with scan_chunk_accumulators excluded the push-out stacks the step cotangent for the
    # weight gradients (otherwise summed in chunks in the loop: nothing stacked to merge)
    ins, outs = _rnn_grad(kind)
    before = rewritten(ins, outs, exclude=PASSES + NO_CHUNKS)
    after = rewritten(ins, outs, exclude=NO_CHUNKS)
    back = [n for n in scans(after) if n.op.info.name.startswith("grad of")]
    (old,) = [n for n in scans(before) if n.op.info.name.startswith("grad of")]
    assert old.op.info.n_nit_sot == 3               # read by the U, W and b gradients
    assert len(back) == 1 and back[0].op.info.n_nit_sot == 1
    assert fired(after)["scan_merge_outputs"] > 0


_LSTM = []


@given(t=st.integers(0, 4), bsz=st.integers(1, 3), nh=st.integers(1, 3),
       x_batch_1=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_lstm_gradients_keep_values_py(t, bsz, nh, x_batch_1, seed):
    if not _LSTM:
        ins, outs = _rnn_grad("lstm")
        _LSTM.extend([compiled(ins, outs, "PY", PASSES), compiled(ins, outs, "PY")])
    before, after = _LSTM
    rng = np.random.default_rng(seed)
    data = [rng.standard_normal((t, 1 if x_batch_1 else bsz, 2)),
            rng.standard_normal((bsz, nh)), rng.standard_normal((bsz, nh)),
            rng.standard_normal((2, 4 * nh)), 0.5 * rng.standard_normal((nh, 4 * nh)),
            rng.standard_normal(4 * nh)]
    assert_close(after(*data), before(*data), "lstm")


def _twin_states():
    x, h0, W = T.matrix("x"), T.vector("h0"), T.matrix("W")
    m0 = T.matrix("m0")

    def step(x_t, a2, a1, b2, b1, h, k, W):
        s = T.tanh(T.dot(x_t, W))
        return a1 * 0.5 + a2 * s, b1 * 0.5 + b2 * s, h * s + 1.0, k * s + 1.0

    (a, b_, h, k), _ = bptt.scan(
        step, sequences=x, non_sequences=W,
        outputs_info=[dict(initial=m0, taps=[-2, -1]), dict(initial=m0, taps=[-2, -1]), h0, h0])
    loss = (a ** 2).sum() + 0.5 * b_.sum() + (h * k).sum()
    ins = [x, h0, W, m0]
    return ins, [a, b_, h, k] + bptt.grad(loss, ins)


def test_equal_states_become_one():
    ins, outs = _twin_states()
    fwd = [n for n in scans(rewritten(ins, outs)) if not n.op.info.name.startswith("grad of")]
    (old,) = [n for n in scans(rewritten(ins, outs, exclude=PASSES))
              if not n.op.info.name.startswith("grad of")]
    assert (old.op.info.n_mit_sot, old.op.info.n_sit_sot) == (2, 2)
    assert [(n.op.info.n_mit_sot, n.op.info.n_sit_sot) for n in fwd] == [(1, 1)]


_TWINS = {}


@given(t=st.integers(0, 4), n=st.integers(1, 3), seed=st.integers(0, 2 ** 16))
def test_equal_states_keep_values_and_gradients(mode, t, n, seed):
    if mode not in _TWINS:
        ins, outs = _twin_states()
        _TWINS[mode] = (compiled(ins, outs, "PY", PASSES), compiled(ins, outs, mode))
    before, after = _TWINS[mode]
    rng = np.random.default_rng(seed)
    data = [rng.standard_normal((t, n)), rng.standard_normal(n),
            0.5 * rng.standard_normal((n, n)), 0.5 * rng.standard_normal((2, n))]
    assert_close(after(*data), before(*data), "states")


def test_states_that_differ_stay_apart():
    x, h0 = T.vector("x"), T.dscalar("h0")
    (h, k), _ = bptt.scan(lambda x_t, h, k: (h + x_t, k * x_t), sequences=x,
                          outputs_info=[h0, h0])
    (node,) = scans(rewritten([x, h0], [h, k]))
    assert node.op.info.n_sit_sot == 2


# -- scans that must not merge ---------------------------------------------------------------
def test_scans_that_read_each_other_or_differ_stay_apart():
    x, h0, stop = T.vector("x"), T.dscalar("h0"), T.dscalar("stop")
    hs, _ = bptt.scan(lambda x_t, h: h + x_t, sequences=x, outputs_info=h0)
    ks, _ = bptt.scan(lambda h_t, k: k * h_t, sequences=hs, outputs_info=h0)  # reads hs
    assert _n_scans([x, h0], [ks]) == 2
    short, _ = bptt.scan(lambda x_t, k: k * x_t, sequences=x[1:], outputs_info=h0)
    assert _n_scans([x, h0], [hs, short]) == 2      # another n_steps
    u1, _ = bptt.scan(lambda x_t, h, s: (h + x_t, bptt.until(h > s)), sequences=x,
                      outputs_info=h0, non_sequences=stop)
    u2, _ = bptt.scan(lambda x_t, h, s: (h * x_t, bptt.until(h < s)), sequences=x,
                      outputs_info=h0, non_sequences=stop)
    assert _n_scans([x, h0, stop], [u1, u2]) == 2   # other conditions
    assert _n_scans([x, h0, stop], [u1, hs]) == 2   # until against a plain loop
    p1, _ = bptt.scan(lambda x_t, h: h + x_t, sequences=x, outputs_info=h0, profile="a")
    p2, _ = bptt.scan(lambda x_t, h: h * x_t, sequences=x, outputs_info=h0, profile="b")
    assert _n_scans([x, h0], [p1, p2]) == 2         # separate profiles
    t1, _ = bptt.scan(lambda x_t, h: h * x_t, sequences=x, outputs_info=h0)
    assert _n_scans([x, h0], [hs, t1]) == 1         # ... and one that does merge


def test_merged_loops_with_shared_work_compute_it_once(mode):
    x, h0 = T.vector("x"), T.dscalar("h0")
    hs, _ = bptt.scan(lambda x_t, h: h + T.exp(x_t), sequences=x, outputs_info=h0)
    ks, _ = bptt.scan(lambda x_t, k: k * T.exp(x_t), sequences=x, outputs_info=h0)
    (node,) = scans(rewritten([x, h0], [hs, ks]))
    inner = toposort(node.op.inner_outputs, blockers=node.op.inner_inputs)
    assert sum("exp" in str(n.op) for n in inner) == 1
    assert node.op.info.n_seqs == 1
    xv = np.linspace(-1.0, 1.0, 5)
    assert_close(compiled([x, h0], [hs, ks], mode)(xv, 0.5),
                 compiled([x, h0], [hs, ks], "PY", PASSES)(xv, 0.5), "shared work")
