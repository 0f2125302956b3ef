"""Save-mem (bptt/scan/rewriting/savemem.py): ring buffers, capped nit_sots, the cotangent carry.

Oracles: the same function compiled with the pass excluded (PY), for values
and gradients; structure checks on the rewritten graph (which buffers are
rings, of how many rows; no T-long state left in a backward scan).
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.scan.info import ScanInfo
from bptt.scan.op import Scan
from bptt.scan.plan import StoragePlan
from bptt.scan.rewriting.savemem import NAME

from ..helpers import excluding

TAPS = [(-2,), (-3, -1), (-1, -2), (-2, -3, -1)]  # mit_sots (the sit_sot is h)


def compiled(inputs, outputs, mode, with_pass=True):
    with excluding(() if with_pass else (NAME,)):
        return bptt.function(inputs, outputs, mode=mode)


def scans(f):
    return [n for n in f.fgraph.toposort() if isinstance(n.op, Scan)]


def rings(node):
    """{(kind, index): ring rows} of a Scan node's state buffers."""
    return {(b.kind, b.index): node.op.plan.buffer_ring(s)
            for s, b in enumerate(node.op.info.buffers)}


def build(taps, go_backwards, until, truncate=-1):
    """A loop with a mit_sot `a` (taps), a sit_sot `h`, a nit_sot `y`; its last-row readers.

    Returns (inputs, value outputs, cost).
    """
    x, a0, h0 = T.dmatrix("x"), T.dmatrix("a0"), T.dvector("h0")
    w, thr, n = T.dscalar("w"), T.dscalar("thr"), T.lscalar("n")

    def step(x_t, *rest):
        *a_taps, h, w, thr = rest
        a = T.tanh(w * sum(a_taps) + x_t)
        h_new = h * w + a
        out = [a, h_new, a * h_new]
        return (out, bptt.until(h_new.sum() > thr)) if until else out

    (a, h, y), _ = bptt.scan(step, sequences=x, outputs_info=[dict(initial=a0, taps=list(taps)),
                                                               h0, None],
                             non_sequences=[w, thr], n_steps=n, go_backwards=go_backwards,
                             truncate_gradient=truncate)
    # Readers that work on zero steps (x[-1] would raise): last rows, reversed first rows, shapes.
    outs = [a[-1:], h[-2:], h[::-1][:1], y[::-1][:2], a.shape[0], h.shape[0], y.shape[0]]
    cost = (a[-1:] ** 2).sum() + h[-1:].sum() + y[::-1][:2].sum()
    return [x, a0, h0, w, thr, n], outs, cost


def draw_values(data, depth, until):
    n = data.draw(st.integers(0, 6), label="n_steps")
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16), label="seed"))
    thr = data.draw(st.sampled_from([-5.0, 0.0, 0.5, 100.0])) if until else 100.0
    return [rng.standard_normal((n + 1, 2)), rng.standard_normal((depth + 1, 2)),
            rng.standard_normal(2), 0.7, thr, n]


def assert_same(got, want):
    assert len(got) == len(want)
    for g, e in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-12, atol=1e-12)
        assert np.shape(g) == np.shape(e)


# -- values and gradients: pass included vs excluded ----------------------------------------
@given(data=st.data(), taps=st.sampled_from(TAPS), go_backwards=st.booleans(),
       until=st.booleans(), truncate=st.sampled_from([-1, 1, 2]))
def test_values_and_gradients_match_without_the_pass_py(data, taps, go_backwards, until,
                                                        truncate):
    inputs, outs, cost = build(taps, go_backwards, until, truncate)
    wrt = inputs[:4]
    outputs = outs + bptt.grad(cost, wrt)
    f, ref = compiled(inputs, outputs, "PY"), compiled(inputs, outputs, "PY", with_pass=False)
    vals = draw_values(data, -min(taps), until)
    assert_same(f(*vals), ref(*vals))


@pytest.fixture(scope="module")
def numba_pair():
    """One NUMBA structure with every feature (mit_sot taps, until, go_backwards), and its PY oracle."""
    inputs, outs, cost = build((-3, -1), True, True)
    outputs = outs + bptt.grad(cost, inputs[:4])
    return (compiled(inputs, outputs, "NUMBA"),
            compiled(inputs, outputs, "PY", with_pass=False))


@given(data=st.data())
def test_values_and_gradients_match_without_the_pass_numba(numba_pair, data):
    f, ref = numba_pair
    vals = draw_values(data, 3, True)
    assert_same(f(*vals), ref(*vals))


def test_numba_structure_has_rings(numba_pair):
    f, _ = numba_pair
    fwd, bwd = scans(f)
    # The backward scan reads the forward buffers as sequences: never cut.
    assert fwd.op.plan.buffer_rows == ()
    # h's cotangent (0, 1)/(1,) became a 2-row carry; w's accumulator is a ring (unless the
    # push-out made it a nit_sot); a's cotangent (a mit_sot's mit_mot) stays whole.
    assert bwd.op.info.mit_mot_in_slices == ((0, 3, 1),)
    assert [bwd.op.plan.buffer_ring(s) for s, b in enumerate(bwd.op.info.buffers)
            if b.kind != "mit_mot"] in ([2], [2, 2])


# -- structure ------------------------------------------------------------------------------
def test_forward_buffers_become_rings_and_nit_sot_is_capped(mode):
    inputs, outs, _ = build((-3, -1), False, False)
    f = compiled(inputs, outs, mode)
    (node,) = scans(f)
    # a (mit_sot, extent 3) read at [-1]: 3 + 1 rows; h (sit_sot) read at [-2:]: 2 rows.
    assert rings(node) == {("mit_sot", 0): 4, ("sit_sot", 0): 2}
    (length,) = [node.inputs[i] for i in node.op.info.outer_in_nit_sot]
    vals = [np.ones((9, 2)), np.ones((4, 2)), np.ones(2), 0.5, 0.0, 8]
    cap = bptt.function(f.fgraph.inputs, length, mode="PY", on_unused_input="ignore")
    assert cap(*vals) == 2                                     # y[::-1][:2]: 2 of its 8 rows
    assert_same(f(*vals), compiled(inputs, outs, "PY", with_pass=False)(*vals))


def test_whole_reader_keeps_the_whole_buffer(mode):
    inputs, outs, _ = build((-2,), False, False)
    a_full = outs[0].owner.inputs[0]                      # a (the user's a[1:]), read whole
    f = compiled(inputs, [outs[0], outs[1], a_full.sum()], mode)
    (node,) = scans(f)
    # `a` is read whole (its sum), `h` only at its last rows.
    assert sorted(rings(node).values(), key=str) == [2, None]


def test_backward_scan_keeps_no_history(mode):
    """The RNN's backward scan: cotangent carry of 2 rows, accumulators as rings."""
    X, h0, W, U = T.dtensor3("X"), T.dmatrix("h0"), T.dmatrix("W"), T.dmatrix("U")
    H, _ = bptt.scan(lambda x, h, U, W: T.tanh(T.dot(x, U) + T.dot(h, W)), sequences=X,
                     outputs_info=h0, non_sequences=[U, W])
    cost = 0.5 * (H ** 2).sum()
    inputs, outputs = [X, h0, U, W], [cost] + bptt.grad(cost, [h0, U, W])
    f = compiled(inputs, outputs, mode)
    fwd, bwd = scans(f)
    assert fwd.op.plan.buffer_rows == ()
    info = bwd.op.info
    assert info.n_mit_mot == 0                      # the (0, 1)/(1,) mit_mot became a carry
    assert bwd.op.plan.buffer_rows == (2,) * info.n_states   # carry, accumulators: 2-row rings
    rng = np.random.default_rng(0)
    vals = [rng.standard_normal((7, 2, 3)), rng.standard_normal((2, 3)),
            rng.standard_normal((3, 3)), rng.standard_normal((3, 3))]
    assert_same(f(*vals), compiled(inputs, outputs, "PY", with_pass=False)(*vals))


def test_cotangent_carry_is_pre_added(mode):
    """The carry is what the step sends back (dpre @ W.T), not loss row + that: the loop reads
    the loss cotangent of the state step t wrote (rows T..1, never h0's row) and adds it in
    the step; h0's cotangent is its row plus the last carry. Values against NumPy."""
    X, h0, W, U = T.dtensor3("X"), T.dmatrix("h0"), T.dmatrix("W"), T.dmatrix("U")
    H, _ = bptt.scan(lambda x, h, U, W: T.tanh(T.dot(x, U) + T.dot(h, W)), sequences=X,
                     outputs_info=h0, non_sequences=[U, W])
    cost = 0.5 * (H ** 2).sum() + (h0 ** 3).sum()      # h0's own row of the cotangent
    f = compiled([X, h0, U, W], bptt.grad(cost, [h0]), mode)
    bwd = scans(f)[-1]
    (carry,) = [bwd.op.inner_outputs[o] for b in bwd.op.info.buffers for o in b.inner_outputs]
    assert type(carry.owner.op).__name__ in ("Dot", "Gemm")
    init = bwd.inputs[bwd.op.info.buffers[0].outer_input]
    assert type(init.owner.op).__name__ == "Alloc" and init.type.shape[0] == 1
    rng = np.random.default_rng(1)
    for t in (0, 1, 5):
        x, h, u, w = (rng.standard_normal((t, 2, 3)), rng.standard_normal((2, 3)),
                      rng.standard_normal((3, 3)), 0.5 * rng.standard_normal((3, 3)))
        hs, g = [h], 0 * h
        for k in range(t):
            hs.append(np.tanh(x[k] @ u + hs[-1] @ w))
        for k in reversed(range(t)):
            g = ((g + hs[k + 1]) * (1 - hs[k + 1] ** 2)) @ w.T
        np.testing.assert_allclose(f(x, h, u, w)[0], g + 3 * h ** 2, rtol=1e-12, atol=1e-12)


def test_truncated_gradient_carries_one_cotangent(mode):
    """The initial state's cotangent is read through the truncation window's concatenate."""
    x, h0, w = T.dvector("x"), T.dscalar("h0"), T.dscalar("w")
    hs, _ = bptt.scan(lambda x_t, h, w: w * h + x_t, sequences=x, outputs_info=h0,
                      non_sequences=w, truncate_gradient=2)
    outputs = bptt.grad(hs.sum(), [x, h0, w])
    f = compiled([x, h0, w], outputs, mode)
    bwd = scans(f)[-1]
    assert bwd.op.info.n_mit_mot == 0 and bwd.op.plan.buffer_ring(0) == 2
    for xs in ([1.0, 2.0, 3.0, 4.0], [1.0], [0.5, 2.0]):
        assert_same(f(xs, 1.0, 0.5), compiled([x, h0, w], outputs, "PY", with_pass=False)(
            xs, 1.0, 0.5))
    assert_same(f([1.0, 2.0, 3.0, 4.0], 1.0, 0.5), [[0, 0, 1.5, 1], 0, 8.5])  # docs table


def test_pass_is_idempotent():
    from bptt.graph.fg import FunctionGraph
    from bptt.scan.rewriting.savemem import scan_save_mem

    inputs, outs, _ = build((-2,), False, True)
    fg = FunctionGraph(inputs, outs)
    assert scan_save_mem.apply(fg)
    assert not scan_save_mem.apply(fg)


# -- the op's contract ---------------------------------------------------------------------
def test_ring_must_hold_extent_plus_one():
    with pytest.raises(ValueError, match="StoragePlan: mit_sot 0 cannot be a ring of 2 rows"):
        StoragePlan(buffer_rows=(2,)).check(ScanInfo(0, (), (), ((-2,),), 0, 0, 0, 0))
    with pytest.raises(ValueError, match="StoragePlan: buffer_rows needs one entry per state"):
        StoragePlan(buffer_rows=(3,)).check(ScanInfo(0, (), (), ((-2,),), 1, 0, 0, 0))
    with pytest.raises(ValueError, match="mit_mot 0 cannot be a ring"):
        StoragePlan(buffer_rows=(3,)).check(ScanInfo(0, ((0, 1),), ((1,),), (), 0, 0, 0, 0))
    plan = StoragePlan(buffer_rows=(None, 3))
    plan.check(ScanInfo(0, (), (), ((-2,),), 1, 0, 0, 0))
    assert plan.buffer_ring(0) is None and plan.buffer_ring(1) == 3
    assert StoragePlan(buffer_rows=(None,)).buffer_rows == () and StoragePlan().buffer_ring(0) is None


def test_derivative_of_a_ring_scan_is_refused():
    inputs, outs, _ = build((-2,), False, False)
    f = compiled(inputs, outs, "PY")
    (node,) = scans(f)
    with pytest.raises(NotImplementedError, match="save-mem"):
        node.op.L_op(node.inputs, node.outputs, [None] * len(node.outputs))
