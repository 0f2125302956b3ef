"""`scan_fill_sequences` (bptt/scan/rewriting/fill.py): a sequence that is one value
everywhere is a row computed in the step.

Structure: the LSTM backward scan reads no zeros sequence (one sequence fewer)
and no view of the T-long zeros. Values: the same graphs compiled with the
pass excluded (PY) against PY and NUMBA, hypothesis over the run-time sizes
(T = 0 and 1 included) and data of a few fixed graph structures (so NUMBA
compiles each once): LSTM gradients with go_backwards / truncate_gradient /
symbolic n_steps, and a forward scan over a fill with until, a symbolic
n_steps and a non-constant fill value. A fill shorter than n_steps still
raises the loop's error.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.tensor as T

from ..helpers import excluding, lstm_step
from .test_rewriting import backward_scan as backward
from .test_rewriting import rewritten, scans

import bptt.compile.passes  # noqa: F401  (loads the rewrite modules)

fill = sys.modules["bptt.scan.rewriting.fill"]
PASS = "scan_fill_sequences"


def compiled(inputs, outputs, mode, exclude=()):
    with excluding(exclude):
        return bptt.function(inputs, outputs, mode=mode, on_unused_input="ignore")



def assert_close(actual, expected, what):
    for k, (a, e) in enumerate(zip(actual, expected)):
        np.testing.assert_allclose(a, e, rtol=1e-9, atol=1e-11, err_msg=f"{what}: output {k}")


def check_against_pass_excluded(cache, key, build, pass_name, mode, data):
    """The graph `build()` returns, compiled in `mode`, against it in PY without `pass_name`.

    Both functions are compiled once per (key, mode) into `cache`; the caller's
    arrays must come back unwritten.
    """
    if (key, mode) not in cache:
        ins, outs = build()
        cache[key, mode] = (compiled(ins, outs, "PY", (pass_name,)), compiled(ins, outs, mode))
    before, after = cache[key, mode]
    args = [np.array(a, copy=True) for a in data]
    assert_close(after(*data), before(*data), f"{key} {mode}")
    for a, b in zip(args, data):
        np.testing.assert_array_equal(a, b)     # the caller's arrays are not written


# -- the LSTM gradient ------------------------------------------------------------------------
def _lstm(cfg):
    X, h0, c0 = T.tensor3("X"), T.matrix("h0"), T.matrix("c0")
    Wx, Wh, b = T.matrix("Wx"), T.matrix("Wh"), T.vector("b")
    n = T.iscalar("n")
    n_steps = n if cfg.get("symbolic") else None
    (hs, cs), _ = bptt.scan(lstm_step, sequences=X, outputs_info=[h0, c0],
                            non_sequences=[Wx, Wh, b], n_steps=n_steps, name="lstm",
                            truncate_gradient=cfg.get("truncate", -1),
                            go_backwards=cfg.get("backwards", False))
    loss = 0.5 * (hs ** 2).sum()      # c is not read: its cotangent is zeros
    wrt = [Wx, Wh, b, h0, c0] + ([X] if cfg.get("wrt_x", True) else [])
    return [X, h0, c0, Wx, Wh, b, n], [loss] + bptt.grad(loss, wrt)


def test_lstm_backward_reads_no_zeros_sequence():
    ins, outs = _lstm({})
    # without the fill pass, scan_read_through_join reads the loss cotangent through a mask
    before = backward(rewritten(ins, outs, exclude=(PASS, "scan_read_through_join")))
    fg = rewritten(ins, outs, exclude=("scan_read_through_join",))
    after = backward(fg)
    assert after.op.info.n_seqs == before.op.info.n_seqs - 1
    # n_steps is not wrapped by the kept length check: the rewrites that compare it by
    # identity still fire (the gate cotangent nit_sot stored in a dead sequence's rows)
    assert type(after.inputs[0].owner.op).__name__ != "Check"
    homes = lambda node: [j for j in node.op.plan.nit_sot_into_seq if j is not None]  # noqa
    assert homes(after) and homes(before)
    seqs = lambda node: node.inputs[1:1 + node.op.info.n_seqs]   # noqa: E731
    assert any(fill.fill_source(s) is not None for s in seqs(before))
    assert all(fill.fill_source(s) is None for s in seqs(after))
    # the first-row state is an alloc of its own rows, not a view of the T-long zeros
    assert _zeros_read_by_slices(rewritten(ins, outs, exclude=(PASS,)))
    assert not _zeros_read_by_slices(fg)


def _zeros_read_by_slices(fg):
    return [n for n in fg.apply_nodes if type(n.op).__name__ == "Alloc"
            and n.outputs[0].ndim == 3 and n.outputs[0].dtype == "float64"
            and any(c != "output" and type(c.op).__name__ == "Subtensor"
                    for c, _ in fg.clients.get(n.outputs[0], ()))]


LSTM_CONFIGS = {"plain": {}, "backwards": {"backwards": True}, "truncate": {"truncate": 2},
                "symbolic_backwards_truncate": {"symbolic": True, "backwards": True,
                                                "truncate": 1}}
_FUNCS = {}


def _functions(key, build, mode):
    if (key, mode) not in _FUNCS:
        ins, outs = build()
        _FUNCS[key, mode] = (compiled(ins, outs, "PY", (PASS,)), compiled(ins, outs, mode))
    return _FUNCS[key, mode]


@st.composite
def _lstm_data(draw, max_t=4):
    t, bsz, nin, nh = (draw(st.integers(0, max_t)), draw(st.integers(1, 3)),
                       draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    return [rng.standard_normal((t, bsz, nin)), 0.5 * rng.standard_normal((bsz, nh)),
            0.5 * rng.standard_normal((bsz, nh)), rng.standard_normal((nin, 4 * nh)),
            0.5 * rng.standard_normal((nh, 4 * nh)), rng.standard_normal(4 * nh),
            np.int32(draw(st.integers(0, t)))]


def _check_lstm(name, mode, data):
    before, after = _functions(name, lambda: _lstm(LSTM_CONFIGS[name]), mode)
    assert_close(after(*data), before(*data), f"{name} {mode}")


@pytest.mark.parametrize("name", sorted(LSTM_CONFIGS))
@settings(max_examples=15, deadline=None)
@given(data=_lstm_data())
def test_lstm_gradient_values_py(name, data):
    _check_lstm(name, "PY", data)


# NUMBA compiles one LSTM gradient per config (~30 s CPU each): the config with every
# feature exercises the same lowering as "plain"; PY above checks every config.
@pytest.mark.parametrize("name", ["symbolic_backwards_truncate"])
@settings(max_examples=8, deadline=None)
@given(data=_lstm_data())
def test_lstm_gradient_values_numba(name, data):
    _check_lstm(name, "NUMBA", data)


def test_lstm_pass_fires_in_every_config():
    for cfg in LSTM_CONFIGS.values():
        ins, outs = _lstm(cfg)
        before = backward(rewritten(ins, outs, exclude=(PASS, "scan_read_through_join")))
        after = backward(rewritten(ins, outs, exclude=("scan_read_through_join",)))
        assert after.op.info.n_seqs == before.op.info.n_seqs - 1


# -- a forward scan over a fill: until, symbolic n_steps, a non-constant value, errors ---------
def _forward(until, value_kind):
    x, h0 = T.tensor3("x"), T.matrix("h0")
    n, length, stop, s = T.iscalar("n"), T.iscalar("L"), T.dscalar("stop"), T.dscalar("s")
    value = s if value_kind == "scalar" else np.float64(0.0)
    full = T.alloc(value, length, x.shape[1], x.shape[2])
    seq = full[::-1][1:]

    def step(z, x_t, h, stop):
        new = T.tanh(h + x_t) + z * h
        if until:
            return new, bptt.until(new.sum() > stop)
        return new

    hs, _ = bptt.scan(step, sequences=[seq, x], outputs_info=h0, non_sequences=[stop],
                      n_steps=n)
    return [x, h0, n, length, stop, s], [hs, bptt.grad(hs.sum(), h0)]


FORWARD = {"zeros": (False, "zeros"), "zeros_until": (True, "zeros"),
           "scalar": (False, "scalar"), "scalar_until": (True, "scalar")}


@st.composite
def _forward_data(draw):
    t, bsz, nh = draw(st.integers(0, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    n = draw(st.integers(0, t))
    return [rng.standard_normal((t, bsz, nh)), rng.standard_normal((bsz, nh)), np.int32(n),
            np.int32(n + 1 + draw(st.integers(0, 2))), np.float64(draw(st.floats(-2, 2))),
            np.float64(draw(st.floats(-1, 1)))]


def test_forward_fill_is_removed():
    for name, cfg in FORWARD.items():
        ins, outs = _forward(*cfg)
        (fwd,) = scans(rewritten(ins, outs[:1]))
        assert fwd.op.info.n_seqs == 1, name


@pytest.mark.parametrize("mode", ["PY", "NUMBA"])
@pytest.mark.parametrize("name", sorted(FORWARD))
@settings(max_examples=10, deadline=None)
@given(data=_forward_data())
def test_forward_values(name, mode, data):
    if mode == "NUMBA" and name not in ("zeros_until", "scalar"):
        return   # NUMBA compiles are scarce: two structures cover until and a scalar fill
    before, after = _functions(name, lambda: _forward(*FORWARD[name]), mode)
    assert_close(after(*data), before(*data), f"{name} {mode}")


@pytest.mark.parametrize("mode", ["PY", "NUMBA"])
def test_too_short_fill_still_raises(mode):
    ins, outs = _forward(False, "zeros")
    f = compiled(ins, outs[:1], mode)
    x = np.zeros((3, 2, 2))
    with pytest.raises(ValueError, match=r"\(taps \[0\]\) has 2 rows, but 3 steps"):
        f(x, np.zeros((2, 2)), np.int32(3), np.int32(3), 0.0, 0.0)   # 3 - 1 rows < 3 steps
    assert f(x, np.zeros((2, 2)), np.int32(2), np.int32(3), 0.0, 0.0)[0].shape == (2, 2, 2)


# -- a fill given with taps: the loop's message, naming the sequence and its taps --------------
def _tapped_fill(taps):
    """A scan over ``alloc(0, L, w)`` read at `taps` (and over x, which sets the width)."""
    x, n, length = T.matrix("x"), T.iscalar("n"), T.iscalar("L")
    full = T.alloc(np.float64(0.0), length, x.shape[1])

    def step(*args):
        *rows, x_t, h = args
        return h + x_t + sum(rows[1:], rows[0])

    hs, _ = bptt.scan(step, sequences=[dict(input=full, taps=list(taps)), x],
                      outputs_info=T.zeros_like(x[0]), n_steps=n, name="tapped")
    return [x, n, length], [hs]


def _error(f, args):
    try:
        f(*args)
    except ValueError as exc:
        return str(exc).splitlines()[0]
    return None


def test_a_fill_read_at_one_tap_is_removed():
    (node,) = scans(rewritten(*_tapped_fill((0,))))
    assert node.op.info.n_seqs == 1    # x only


@pytest.mark.parametrize("mode", ["PY", "NUMBA"])
@settings(max_examples=12, deadline=None)
@given(n=st.integers(-1, 5), length=st.integers(0, 7))
def test_a_too_short_user_fill_gives_the_loop_message(mode, n, length):
    """The pass drops a fill read at tap 0 (at other taps its slices have symbolic steps
    and the loop keeps reading it); its check words the error as the loop does."""
    before, after = _functions("user fill", lambda: _tapped_fill((0,)), mode)
    args = (np.ones((6, 2)), np.int32(n), np.int32(length))
    want, got = _error(before, args), _error(after, args)
    assert got == want, (n, length)
    if want is None:
        assert_close(after(*args), before(*args), "user fill")
