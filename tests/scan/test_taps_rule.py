"""Sequence taps and direction mean what they mean in Theano (issue 20, section 2).

The rule, tap 0 always counting as present: with ``lo = min(min(taps), 0)``
and ``hi = max(max(taps), 0)``, a sequence of L rows allows ``L - (hi - lo)``
positions, and at position p tap k reads row ``p + k - lo``. Forwards, step t
is position t; go_backwards and negative n_steps visit the same positions
from the last one down. An explicit n_steps takes the first n positions
forwards and the last n (visited backwards) backwards, as Theano and PyTensor
cut ``seq[:n_steps]`` after reversing each shifted sequence. Several
sequences run for the fewest positions any allows.

Every expectation here is computed by `positions` / `numpy_loop`, written
from the rule above, not from bptt's code.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.graph.traversal import toposort
from bptt.scan.op import Scan

from .unrolled import unroll


def positions(taps, length, n_steps=None, go_backwards=False):
    """The rows each executed step reads for one sequence: a list of lists of row indices."""
    backwards = go_backwards
    if n_steps is not None and n_steps < 0:
        backwards, n_steps = not backwards, -n_steps
    lo, hi = min(min(taps), 0), max(max(taps), 0)
    usable = length - (hi - lo)
    n = usable if n_steps is None else n_steps
    order = range(usable - 1, usable - 1 - n, -1) if backwards else range(n)
    return [[p + k - lo for k in taps] for p in order]


def numpy_loop(seqs, n_steps, go_backwards, h0):
    """Outputs (rows read, stacked per step; a running state) of the test scan, in NumPy."""
    backwards = go_backwards
    if n_steps is not None and n_steps < 0:
        backwards, n_steps = not backwards, -n_steps
    usable = [len(u) - (max(max(t), 0) - min(min(t), 0)) for u, t in seqs]
    n = min(usable) if n_steps is None else n_steps
    if n > min(usable) or min(usable) < 0:
        return None
    read, states, h = [], [], h0
    for j in range(n):
        args = []
        for (u, taps), m in zip(seqs, usable):
            p = m - 1 - j if backwards else j
            args += [u[p + k - min(min(taps), 0)] for k in taps]
        read.append(np.stack(args))
        h = 0.5 * h + sum((i + 1) * a for i, a in enumerate(args))
        states.append(h)
    row = np.shape(h0)
    return (np.stack(read) if read else np.zeros((0, len(args_of(seqs))) + row),
            np.stack(states) if states else np.zeros((0,) + row))


def args_of(seqs):
    return [k for _, taps in seqs for k in taps]


def step_rows(*args):
    """The test step: the rows it reads, stacked, and a state that depends on their order."""
    *reads, h = args
    return [T.stack(reads), 0.5 * h + sum((i + 1) * a for i, a in enumerate(reads))]


def tap_scan(seq_vars, taps_list, h0, **kwargs):
    seqs = [dict(input=u, taps=list(t)) for u, t in zip(seq_vars, taps_list)]
    return bptt.scan(step_rows, sequences=seqs, outputs_info=[None, h0], name="taps", **kwargs)[0]


def has_scan(outputs):
    return any(isinstance(n.op, Scan) for n in toposort(outputs))


# -- the table ----------------------------------------------------------------------------------
TABLE = [  # taps, L, steps, what step 0 receives
    ([2], 6, 4, [2]),
    ([-3], 7, 4, [0]),
    ([-2, -1], 5, 3, [0, 1]),
    ([1, 2], 6, 4, [1, 2]),
    ([-1, 0, 1], 6, 4, [0, 1, 2]),
    ([0], 3, 3, [0]),
]


@pytest.mark.parametrize("taps, length, steps, first", TABLE)
def test_table(mode, taps, length, steps, first):
    u = T.dvector("u")
    read = tap_scan([u], [taps], T.constant(0.0))[0]
    got = bptt.function([u], read, mode=mode)(np.arange(float(length)))
    assert got.shape == (steps, len(taps))
    assert got[0].tolist() == first
    assert got.tolist() == positions(taps, length)


def test_theano_backwards_example(mode):
    """u = [10..15], taps [-1, 0, 1]: (13, 14, 15) first, (10, 11, 12) last."""
    u = T.dvector("u")
    back = tap_scan([u], [[-1, 0, 1]], T.constant(0.0), go_backwards=True)[0]
    neg = tap_scan([u], [[-1, 0, 1]], T.constant(0.0), n_steps=-4)[0]
    f = bptt.function([u], [back, neg], mode=mode)
    want = [[13, 14, 15], [12, 13, 14], [11, 12, 13], [10, 11, 12]]
    for got in f(np.arange(10.0, 16.0)):
        assert got.tolist() == want


@pytest.mark.parametrize("n_steps, go_backwards, want", [
    (2, False, [[10, 11, 12], [11, 12, 13]]),      # forwards: the first n positions
    (-2, False, [[13, 14, 15], [12, 13, 14]]),     # backwards: the last n, from the end
    (2, True, [[13, 14, 15], [12, 13, 14]]),
    (-2, True, [[10, 11, 12], [11, 12, 13]]),      # both: forwards
    (0, True, []),
])
def test_explicit_n_steps(mode, n_steps, go_backwards, want):
    u = T.dvector("u")
    read = tap_scan([u], [[-1, 0, 1]], T.constant(0.0), n_steps=n_steps,
                    go_backwards=go_backwards)[0]
    got = bptt.function([u], read, mode=mode)(np.arange(10.0, 16.0))
    assert got.tolist() == want
    assert want == [[r + 10 for r in p] for p in positions([-1, 0, 1], 6, n_steps, go_backwards)]


def test_symbolic_n_steps_either_sign(mode):
    """A symbolic n_steps picks the direction at run time, with the same slices."""
    u, n = T.dvector("u"), T.lscalar("n")
    read = tap_scan([u], [[-2, 1]], T.constant(0.0), n_steps=n)[0]
    f = bptt.function([u, n], read, mode=mode)
    uv = np.arange(8.0)
    for k in (-5, -2, 0, 2, 5):
        assert f(uv, k).tolist() == positions([-2, 1], 8, k), k


def test_sequences_with_different_taps_run_for_the_fewest_positions(mode):
    """u (taps [-3]) allows 7 - 3 = 4 positions, v (taps [0, 2]) 6 - 2 = 4, w (taps [1]) 5."""
    u, v, w = T.dvector("u"), T.dvector("v"), T.dvector("w")
    taps = [[-3], [0, 2], [1]]
    fwd = tap_scan([u, v, w], taps, T.constant(0.0))[0]
    back = tap_scan([u, v, w], taps, T.constant(0.0), go_backwards=True)[0]
    f = bptt.function([u, v, w], [fwd, back], mode=mode)
    uv, vv, wv = np.arange(7.0), 100 + np.arange(6.0), 200 + np.arange(6.0)
    got_f, got_b = f(uv, vv, wv)
    assert got_f.tolist() == [[t, 100 + t, 102 + t, 201 + t] for t in range(4)]
    # Backwards each sequence is visited from its own last position (Theano reverses each).
    assert got_b.tolist() == [[3 - j, 103 - j, 105 - j, 205 - j] for j in range(4)]


# -- one inlined step ---------------------------------------------------------------------------
@pytest.mark.parametrize("taps", [[2], [-3], [-2, -1], [1, 2], [-1, 0, 1]])
@pytest.mark.parametrize("n_steps, go_backwards", [(1, False), (-1, False), (1, True)])
def test_one_inlined_step_follows_the_rule(taps, n_steps, go_backwards):
    """n_steps of 1 or -1 inlines the step (no Scan node) and reads what the loop would."""
    u = T.dvector("u")
    read = tap_scan([u], [taps], T.constant(0.0), n_steps=n_steps, go_backwards=go_backwards)[0]
    assert not has_scan([read])
    f = bptt.function([u], read, mode="PY")
    assert f(np.arange(9.0)).tolist() == positions(taps, 9, n_steps, go_backwards)


# -- errors ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("n_steps", [None, 3, -3, "symbolic", 1])
def test_too_short_names_scan_and_sequence(mode, n_steps):
    """taps [2] need n_steps + 2 rows (tap 0 counts): 4 rows give 2 steps, not 3."""
    u, k = T.dvector("u"), T.lscalar("k")
    out = bptt.scan(lambda a: 2 * a, sequences=dict(input=u, taps=[2]), name="short",
                    n_steps=k if n_steps == "symbolic" else n_steps)[0]
    f = bptt.function([u, k] if n_steps == "symbolic" else [u], out, mode=mode)
    args = [3] if n_steps == "symbolic" else []
    rows = {None: 1, 1: 2}.get(n_steps, 4)
    with pytest.raises(ValueError) as info:
        f(np.arange(float(rows)), *args)
    msg = str(info.value)
    for part in ("scan 'short'", "sequence 'u'", "taps [2]", f"has {rows} rows"):
        assert part in msg, msg


@pytest.mark.parametrize("taps, n_steps, go_backwards, rows", [
    ([3], 2, False, 2), ([3], 0, False, 2), ([3], None, False, 2), ([-3], None, True, 1),
    ([2, 3], 2, False, 1)])
def test_too_short_with_every_slice_shifted(mode, taps, n_steps, go_backwards, rows):
    """Forwards, taps [3] slice from row 3: a sequence of 2 rows leaves an empty slice, which
    does not show how short the sequence is (exactly 3 rows would run zero steps)."""
    u = T.dvector("u")
    out = bptt.scan(lambda *a: 2 * a[0], sequences=dict(input=u, taps=taps), name="short",
                    n_steps=n_steps, go_backwards=go_backwards)[0]
    f = bptt.function([u], out, mode=mode)
    n = n_steps or 0
    lo, hi = min(min(taps), 0), max(max(taps), 0)
    have = f"has at most {min(taps)} rows" if taps == [2, 3] else f"has {rows} rows"
    with pytest.raises(ValueError) as info:
        f(np.arange(float(rows)))
    assert (f"scan 'short': sequence 'u' (taps {taps}) {have}, but {n} steps with these taps "
            f"need {n + hi - lo} (n_steps + {hi - lo})") in str(info.value)
    assert f(np.arange(float(n + hi - lo))).shape == (n, )


# -- gradients --------------------------------------------------------------------------------
GRAD_CASES = [  # taps, n_steps, go_backwards, truncate_gradient
    ([2], None, False, -1),
    ([-2, -1], None, True, -1),
    ([-1, 0, 1], -3, False, -1),
    ([1, 2], 3, True, 2),
    ([-3], None, False, 2),
]


def grad_step(*args):
    *reads, h, w = args
    return T.tanh(w * h + sum((i + 1.5) * a for i, a in enumerate(reads)) ** 2 * 0.3)


def grad_graphs(taps, n_steps, go_backwards, truncate_gradient, length):
    u, h0, w, v = T.dmatrix("u"), T.dvector("h0"), T.dvector("w"), T.dmatrix("v")
    hs = bptt.scan(grad_step, sequences=dict(input=u, taps=taps), outputs_info=h0,
                   non_sequences=w, n_steps=n_steps, go_backwards=go_backwards,
                   truncate_gradient=truncate_gradient)[0]
    executed = len(positions(taps, length, n_steps, go_backwards))
    backwards = go_backwards != (n_steps is not None and n_steps < 0)
    ref, frozen = unroll(grad_step, [(u, tuple(taps))], [(h0, (-1,))], [w], n_steps=executed,
                         backwards=backwards, truncate_gradient=truncate_gradient)
    ins = [u, h0, w]
    got = bptt.grad((hs * v).sum(), ins)
    want = bptt.grad((ref[0] * v).sum(), ins, consider_constant=frozen,
                     disconnected_inputs="ignore")
    return ins + [v], hs, got, want, executed


@pytest.mark.parametrize("taps, n_steps, go_backwards, truncate_gradient", GRAD_CASES)
def test_gradients_match_the_unrolled_loop(mode, taps, n_steps, go_backwards, truncate_gradient):
    """The gradient of the loop is the gradient of the same steps unrolled from the rule
    (truncate_gradient: the steps before the window held constant)."""
    length = 7
    ins, hs, got, want, executed = grad_graphs(taps, n_steps, go_backwards, truncate_gradient,
                                               length)
    rng = np.random.default_rng(len(taps) + 10 * executed)
    vals = [rng.normal(size=(length, 2)), rng.normal(size=2), rng.normal(size=2) * 0.5,
            rng.normal(size=(executed, 2))]
    f = bptt.function(ins, got, mode=mode)
    ref = bptt.function(ins, want, mode="PY")
    for g, r in zip(f(*vals), ref(*vals)):
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)
    rows = sorted({r for p in positions(taps, length, n_steps, go_backwards) for r in p})
    unread = [r for r in range(length) if r not in rows]
    assert np.all(f(*vals)[0][unread] == 0)


@pytest.mark.parametrize("taps, n_steps, go_backwards", [([2], None, False), ([-1, 0, 1], -3, True),
                                                          ([-2, -1], 3, True)])
def test_verify_grad(mode, taps, n_steps, go_backwards):
    def fun(u, h0, w):
        hs = bptt.scan(grad_step, sequences=dict(input=u, taps=taps), outputs_info=h0,
                       non_sequences=w, n_steps=n_steps, go_backwards=go_backwards)[0]
        return hs * T.arange(1, hs.shape[0] + 1).astype("float64").dimshuffle(0, "x")

    rng = np.random.default_rng(3)
    bptt.verify_grad(fun, [rng.normal(size=(6, 2)), rng.normal(size=2), rng.normal(size=2) * 0.5],
                     rng=rng, mode=mode)


def test_truncated_verify_grad_on_the_window(mode):
    """With truncate_gradient=k only the last k executed steps are differentiated: a cost of
    those steps' outputs alone, with the initial state fed in after the cut, is exact."""
    taps, k = [-1, 2], 2

    def fun(u, w):
        hs = bptt.scan(grad_step, sequences=dict(input=u, taps=taps), outputs_info=T.zeros(2),
                       non_sequences=w, go_backwards=True, truncate_gradient=k)[0]
        return hs[-1]

    rng = np.random.default_rng(4)
    uv, wv = rng.normal(size=(6, 2)), rng.normal(size=2) * 0.5
    u, w = T.dmatrix("u"), T.dvector("w")
    g = bptt.function([u, w], bptt.grad(fun(u, w).sum(), u), mode=mode)(uv, wv)
    # 6 rows allow 3 positions; backwards the last k=2 steps are positions 1 and 0, which
    # read rows (0, 3) and (1, 4): only they get gradients.
    read = {r for p in positions(taps, 6, None, True)[-k:] for r in p}
    assert read == {0, 1, 3, 4}
    assert np.all(g[[r for r in range(6) if r not in read]] == 0)
    assert np.all(np.abs(g[sorted(read)]).sum(axis=1) > 0)


# -- until ------------------------------------------------------------------------------------
@pytest.mark.parametrize("go_backwards", [False, True])
def test_until_stops_on_the_rule_positions(mode, go_backwards):
    """A step that stops when its future tap reaches 4 stops where the rule says it reads 4."""
    u = T.dvector("u")

    def step(a, b):
        return T.stack([a, b]), bptt.until(T.eq(b, 4.0))

    out = bptt.scan(step, sequences=dict(input=u, taps=[-1, 2]), go_backwards=go_backwards)[0]
    got = bptt.function([u], out, mode=mode)(np.arange(8.0))
    want = positions([-1, 2], 8, None, go_backwards)
    stop = next(j for j, p in enumerate(want) if p[1] == 4)
    assert got.tolist() == want[:stop + 1]


# -- any taps, any direction ------------------------------------------------------------------
TAPS = st.one_of(
    st.lists(st.integers(-3, -1), min_size=1, max_size=2, unique=True),     # past only
    st.lists(st.integers(1, 3), min_size=1, max_size=2, unique=True),       # future only
    st.lists(st.integers(-2, 2), min_size=2, max_size=3, unique=True),      # mixed, maybe 0
    st.sampled_from([[0], [-2], [2]]),                                      # lone
)


@st.composite
def programs(draw):
    n_seqs = draw(st.integers(1, 2))
    row = draw(st.sampled_from([(), (2,), (2, 1)]))
    taps = [draw(st.permutations(draw(TAPS))) for _ in range(n_seqs)]
    lengths = [draw(st.integers(0, 8)) for _ in range(n_seqs)]
    n_kind = draw(st.sampled_from(["none", "static", "symbolic"]))
    n_steps = None if n_kind == "none" else draw(st.integers(-5, 5))
    return dict(taps=taps, row=row, lengths=lengths, n_kind=n_kind, n_steps=n_steps,
                go_backwards=draw(st.booleans()), seed=draw(st.integers(0, 2**16)))


def check_program(p, mode):
    rng = np.random.default_rng(p["seed"])
    row = p["row"]
    seq_vars = [T.tensor("float64", (None,) + tuple(None for _ in row), name=f"u{i}")
                for i in range(len(p["taps"]))]
    h0 = T.tensor("float64", tuple(None for _ in row), name="h0")
    n = T.lscalar("n")
    n_steps = n if p["n_kind"] == "symbolic" else p["n_steps"]
    read, hs = tap_scan(seq_vars, p["taps"], h0, n_steps=n_steps, go_backwards=p["go_backwards"])
    ins = seq_vars + [h0] + ([n] if p["n_kind"] == "symbolic" else [])
    values = [rng.normal(size=(m,) + row) for m in p["lengths"]] + [rng.normal(size=row)]
    values += [np.int64(p["n_steps"])] if p["n_kind"] == "symbolic" else []
    want = numpy_loop(list(zip(values, p["taps"])), p["n_steps"], p["go_backwards"], values[-1]
                      if p["n_kind"] != "symbolic" else values[-2])
    f = bptt.function(ins, [read, hs], mode=mode)
    if want is None:
        with pytest.raises(ValueError, match=r"scan 'taps': sequence 'u\d' \(taps \["):
            f(*values)
        return
    got = f(*values)
    assert got[0].shape == want[0].shape
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-12)


@settings(max_examples=40)
@given(p=programs())
def test_any_taps_py(p):
    check_program(p, "PY")


@settings(max_examples=6)
@given(p=programs())
def test_any_taps_numba(p):
    check_program(p, "NUMBA")
