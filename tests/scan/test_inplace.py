"""A nit_sot stored in the rows of a dead sequence (bptt/scan/rewriting/inplace.py).

Structure: the flag `StoragePlan.nit_sot_into_seq` is set on the RNN backward scan (X's
cotangent goes into the loss cotangent's rows; `scan_read_through_join` is excluded: since
`scan_chunk_accumulators` keeps no T-long step cotangent, the join is otherwise read through
and no longer built), also when another reader
reads only rows the loop does not write, and NOT set when the sequence's memory has
another reader, is a graph input or shared value, when two sequences view it, or when the
dtype or ndim differ. Values: equal with the pass excluded, in PY and
NUMBA, hypothesis over n_steps (0 and 1 included), sizes, go_backwards, truncate_gradient
and until; the arrays the caller passed are never modified; a step value that is a
reversed view of its own row (copied through a temporary) and a row shape that differs at
run time (fresh rows) keep their values.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.scan.info import ScanInfo
from bptt.scan.plan import StoragePlan

from .test_rewriting import assert_close, compiled, rewritten, rnn_data, scans

PASS = ("scan_nit_sot_into_seq",)
KEEP_JOIN = ("scan_read_through_join",)


def _flags(fg):
    return [n.op.plan.nit_sot_into_seq for n in scans(fg)]


def _flagged(fg):
    return [n for n in scans(fg) if n.op.plan.nit_sot_into_seq]


# -- the RNN and its gradient ---------------------------------------------------------------
CONFIGS = {
    "plain": dict(),
    "symbolic": dict(n_steps="symbolic"),
    "until": dict(until=True),
    "backwards_truncate": dict(go_backwards=True, truncate_gradient=2, n_steps="symbolic"),
    "all": dict(until=True, truncate_gradient=2, go_backwards=True, n_steps="symbolic"),
}
#: where the pass applies: everywhere. Symbolic n_steps and until read the loss cotangent's
#: rows after those the loop writes, truncate_gradient its rows before them (h0's cotangent).
FLAGGED = set(CONFIGS)


def _model(cfg):
    X, h0 = T.tensor3("X"), T.matrix("h0")
    U, W, b = T.matrix("U"), T.matrix("W"), T.vector("b")
    n, stop = T.iscalar("n"), T.dscalar("stop")

    def step(x, h, U, W, b, stop):
        a = T.tanh(T.dot(x, U) + T.dot(h, W) + b)
        return (a, bptt.until(x.sum() > stop)) if cfg.get("until") else a

    hs, _ = bptt.scan(step, sequences=X, outputs_info=h0, non_sequences=[U, W, b, stop],
                      n_steps=n if cfg.get("n_steps") == "symbolic" else None,
                      truncate_gradient=cfg.get("truncate_gradient", -1),
                      go_backwards=cfg.get("go_backwards", False))
    loss = 0.5 * (hs ** 2).sum()
    return [X, h0, U, W, b, n, stop], [loss, hs] + bptt.grad(loss, [U, W, b, h0, X])


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_rnn_backward_cotangent_is_stored_in_the_loss_cotangent(name):
    ins, outs = _model(CONFIGS[name])
    after = rewritten(ins, outs, exclude=KEEP_JOIN)
    assert not any(_flags(rewritten(ins, outs, exclude=PASS + KEEP_JOIN)))
    (forward, backward) = scans(after)
    assert not forward.op.plan.nit_sot_into_seq
    if name not in FLAGGED:
        assert not backward.op.plan.nit_sot_into_seq
        return
    (j,) = [j for j in backward.op.plan.nit_sot_into_seq if j is not None]
    seq = backward.inputs[backward.op.info.outer_in_seqs[j]]
    # the loss cotangent, read as a reversed view of a fresh buffer
    assert "Subtensor" in str(seq.owner.op)
    assert ", nit_sot 0 into seq" in str(backward.op)         # what debugprint shows


_FUNCTIONS = {}


def _functions(name, mode):
    if (name, mode) not in _FUNCTIONS:
        ins, outs = _model(CONFIGS[name])
        _FUNCTIONS[name, mode] = (compiled(ins, outs, "PY", PASS + KEEP_JOIN),
                                  compiled(ins, outs, mode, KEEP_JOIN))
    return _FUNCTIONS[name, mode]


def _call_keeps_inputs(f, data):
    kept = [np.array(d, copy=True) for d in data]
    out = f(*data)
    for k, (d, c) in enumerate(zip(data, kept)):
        np.testing.assert_array_equal(d, c, err_msg=f"input {k} was modified")
    return out


@pytest.mark.parametrize("name", sorted(CONFIGS))
@given(data=rnn_data(min_steps=0))
def test_rnn_values_and_gradients_py(name, data):
    before, after = _functions(name, "PY")
    assert_close(_call_keeps_inputs(after, data), before(*data), name)


@pytest.mark.parametrize("name", ["symbolic", "all"])
@given(data=rnn_data(min_steps=0))
def test_rnn_values_and_gradients_numba(name, data):
    before, after = _functions(name, "NUMBA")
    assert_close(_call_keeps_inputs(after, data), before(*data), name)


# -- small scans: when the flag must stay off -------------------------------------------------
def _doubling(seq, step=lambda x: 2.0 * x, **kw):
    ys, _ = bptt.scan(step, sequences=seq, **kw)
    return ys


#: the maps below are vehicles for the storage plan: scan_pushout_rows would make them
#: whole-array operations
MAPS_KEPT = ("scan_pushout_rows",)


def _one_scan(ins, outs, exclude=()):
    (node,) = scans(rewritten(ins, outs, exclude=exclude + MAPS_KEPT))
    return node


@pytest.mark.parametrize("make", [lambda X: T.concatenate([X, X]), lambda X: X * 3.0,
                                  lambda X: T.tanh(X[::-1]) * 2.0 + 1.0])
def test_a_fresh_sequence_read_only_by_the_loop_holds_its_output(make):
    X = T.matrix("X")
    node = _one_scan([X], [_doubling(make(X))])  # Join, Elemwise, Composite: fresh
    assert node.op.plan.nit_sot_into_seq == (0,)


def test_an_integer_elemwise_is_not_trusted_to_be_fresh():
    # the reference perform of floor/round/sign on integers returns the input itself
    X = T.imatrix("X")
    node = _one_scan([X], [_doubling(X + 1, step=lambda x: x * 2)])
    assert not node.op.plan.nit_sot_into_seq


@pytest.mark.parametrize("case", ["input", "shared", "other_reader", "output", "two_taps",
                                  "dtype", "ndim"])
def test_the_flag_is_not_set(case):
    X = T.matrix("X")
    S = T.concatenate([X, X])
    ins, extra = [X], []
    if case == "input":
        seq, step = X, None
    elif case == "shared":
        seq, step = bptt.shared(np.ones((3, 2)), name="s"), None
    elif case == "other_reader":
        seq, step, extra = S, None, [S.sum()]          # read after the loop too
    elif case == "output":
        seq, step, extra = S, None, [S[1:]]            # a view of it is returned
    elif case == "two_taps":
        seq, step = dict(input=S, taps=[0, 1]), lambda a, b: a + b   # rows t and t+1
    elif case == "dtype":
        seq, step = S, lambda x: T.cast(x, "float32")
    else:
        seq, step = S, lambda x: x.sum()
    ys = _doubling(seq, step) if step else _doubling(seq)
    node = _one_scan(ins, [ys] + extra)
    assert not node.op.plan.nit_sot_into_seq


def test_readers_of_rows_the_loop_does_not_write_are_allowed():
    X, k = T.matrix("X"), T.iscalar("k")
    S = T.concatenate([X, X])
    ys = _doubling(S[k:])
    before, overlap = S[:k].sum(), S[:k + 1].sum()        # row k is the sequence's row 0
    assert _one_scan([X, k], [ys, before]).op.plan.nit_sot_into_seq == (0,)
    assert not _one_scan([X, k], [ys, overlap]).op.plan.nit_sot_into_seq
    f_ex, f = (compiled([X, k], [ys, before, overlap], "PY", ex + MAPS_KEPT)
               for ex in (PASS, ()))
    x = np.arange(6.0).reshape(3, 2)
    for kk in range(7):
        assert_close(_call_keeps_inputs(f, [x, np.int32(kk)]), f_ex(x, np.int32(kk)), kk)


def test_storage_plan_checks_the_field():
    info = ScanInfo(n_seqs=1, mit_mot_in_slices=(), mit_mot_out_slices=(), mit_sot_in_slices=(),
                    n_sit_sot=0, n_nit_sot=1, n_shared_outs=0, n_non_seqs=0)
    with pytest.raises(ValueError, match="nit_sot_into_seq"):
        StoragePlan(nit_sot_into_seq=(1,)).check(info)
    with pytest.raises(ValueError, match="nit_sot_into_seq"):   # one entry per nit_sot
        StoragePlan(nit_sot_into_seq=(0, None)).check(info)
    StoragePlan(nit_sot_into_seq=(0,)).check(info)


# -- small scans: values -------------------------------------------------------------------
STEPS = {
    "double": lambda x: 2.0 * x,
    "identity": lambda x: x,                        # the row itself: same memory
    "reversed_view": lambda x: x[::-1],             # overlaps the row: copied first
    "sliced": lambda x: x[:2],                      # another shape when x has != 2 rows
}


def _small(name, mode):
    X = T.tensor3("X")
    ys, _ = bptt.scan(STEPS[name], sequences=T.concatenate([X, X]))
    ins, outs = [X], [ys, ys.sum() * 1.5]
    return (compiled(ins, outs, "PY", PASS + MAPS_KEPT), compiled(ins, outs, mode, MAPS_KEPT),
            _one_scan(ins, outs))


_SMALL = {}


@pytest.mark.parametrize("mode_name", ["PY", "NUMBA"])
@pytest.mark.parametrize("name", sorted(STEPS))
@given(t=st.integers(0, 3), rows=st.integers(1, 4), cols=st.integers(1, 3),
       seed=st.integers(0, 2 ** 16))
def test_small_scans_keep_their_values(mode_name, name, t, rows, cols, seed):
    if (name, mode_name) not in _SMALL:
        _SMALL[name, mode_name] = _small(name, mode_name)
    before, after, node = _SMALL[name, mode_name]
    assert node.op.plan.nit_sot_into_seq == (0,)
    x = np.random.default_rng(seed).standard_normal((t, rows, cols))
    assert_close(_call_keeps_inputs(after, [x]), before(x), name)


def test_a_contiguous_view_typed_any_layout_reshapes_without_a_copy():
    # The RNN's nit_sot is a reversed view of the loss cotangent; its reversal, read by the
    # dU and dW products through a reshape, is contiguous at run time but typed "A".
    import numba

    from bptt.link.numba.alloc_runtime import c_contiguous

    @numba.njit
    def twice_reversed(x, step):
        return c_contiguous(x[::-1][::-1][::step])

    x = np.arange(12.0).reshape(6, 2)
    assert np.shares_memory(twice_reversed(x, 1), x)
    strided = twice_reversed(x, 2)                     # not contiguous: a copy
    assert not np.shares_memory(strided, x) and strided.flags.c_contiguous
    np.testing.assert_array_equal(strided, x[::2])
