"""What the gradient of a scan means at the edges: truncation, until, direction, inputs
of every kind (shared, captured, random), disconnected and undefined gradients, mit_mot
buffers, nesting and second order.

References: the unrolled oracle (`unrolled.py`), finite differences
(`bptt.verify_grad`) and values worked out by hand (the truncate_gradient example
of docs/scan-gradient.md).
"""
from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.scan import Scan, ScanInfo

from .unrolled import unroll


def _info(**kw):
    base = dict(n_seqs=0, mit_mot_in_slices=(), mit_mot_out_slices=(), mit_sot_in_slices=(),
                n_sit_sot=0, n_nit_sot=0, n_shared_outs=0, n_non_seqs=0)
    base.update(kw)
    return ScanInfo(**base)


def check_gradient(fun, pt, mode, seed=0):
    """In PY, finite differences (`verify_grad`); in NUMBA, the compiled gradient of a random
    projection must equal PY's: one numba compilation per test. The PY variant of each test
    runs the finite differences at the same point, so the NUMBA variant does not repeat them."""
    if mode == "PY":
        bptt.verify_grad(fun, pt, mode="PY", rng=np.random.default_rng(seed))
        return
    rng = np.random.default_rng(seed)
    xs = [T.tensor(p.dtype.name, (None,) * p.ndim) for p in map(np.asarray, pt)]
    outs = fun(*xs)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    shapes = [np.shape(o) for o in bptt.function(xs, outs, mode="PY")(*pt)]
    rs = [T.tensor("float64", (None,) * o.ndim) for o in outs]
    cost = sum(((o * r).sum() for o, r in zip(outs, rs)), start=0.0)
    grads = bptt.grad(cost, xs, disconnected_inputs="ignore")
    r_vals = [rng.normal(size=s) for s in shapes]
    got = bptt.function(xs + rs, grads, mode="NUMBA")(*pt, *r_vals)
    want = bptt.function(xs + rs, grads, mode="PY")(*pt, *r_vals)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


# -- truncate_gradient: the worked example of docs/scan-gradient.md ------------------------------
#: truncate_gradient -> (g_x, g_h0, g_w) for h_t = w h_{t-1} + x_t, h_0 = 1, w = 0.5,
#: x = [1, 2, 3, 4], cost = sum of h (docs/scan-gradient.md works them out).
WORKED_EXAMPLE = {
    -1: ([1.875, 1.75, 1.5, 1.0], 0.9375, 13.0),
    4: ([1.875, 1.75, 1.5, 1.0], 0.9375, 13.0),
    3: ([0.0, 1.75, 1.5, 1.0], 0.0, 11.125),
    2: ([0.0, 0.0, 1.5, 1.0], 0.0, 8.5),
    1: ([0.0, 0.0, 0.0, 1.0], 0.0, 4.375),
}


def test_truncate_gradient_worked_example(mode):
    x, h0, w = T.dvector("x"), T.dscalar("h0"), T.dscalar("w")
    outputs = []
    for truncate in WORKED_EXAMPLE:
        hs, _ = bptt.scan(lambda x_t, h, w: w * h + x_t, sequences=x, outputs_info=h0,
                          non_sequences=w, truncate_gradient=truncate)
        outputs += [hs] + bptt.grad(hs.sum(), [x, h0, w])
    got = bptt.function([x, h0, w], outputs, mode=mode)([1.0, 2.0, 3.0, 4.0], 1.0, 0.5)
    for k, (g_x, g_h0, g_w) in enumerate(WORKED_EXAMPLE.values()):
        hs, gx, gh0, gw = got[4 * k:4 * k + 4]
        np.testing.assert_array_equal(hs, [1.5, 2.75, 4.375, 6.1875])
        np.testing.assert_array_equal(gx, g_x)
        assert gh0 == g_h0 and gw == g_w


def test_truncation_gives_initial_rows_a_gradient_only_when_read_in_the_window(mode):
    """taps (-3, -1), 4 steps, truncate 2: the window (steps 2, 3) reads rows 2..5 of the
    buffer, so of the initial rows 0..2 only row 2 (h[-1]) gets a gradient."""
    h0 = T.dmatrix("h0")
    hs, _ = bptt.scan(lambda a, b: 0.5 * a + 2.0 * b, outputs_info=dict(initial=h0, taps=[-3, -1]),
                      n_steps=4, truncate_gradient=2)
    g = bptt.function([h0], bptt.grad(hs.sum(), h0), mode=mode)(np.ones((3, 1)))
    # step 3 reads rows 3 (=out[0], outside) and 5; step 2 reads rows 2 (h[-1]) and 4
    assert g[0, 0] == 0.0 and g[1, 0] == 0.0 and g[2, 0] != 0.0


# -- until: exactly the executed steps ----------------------------------------------------------
@functools.lru_cache(maxsize=None)
def until_function(mode):
    """Values and gradients of a mit_sot loop with until, with cotangents v of its rows."""
    x, h0, w = T.dmatrix("x"), T.dmatrix("h0"), T.dvector("w")

    def step(x_t, h2, h1, w):
        h = T.tanh(w * h1 + 0.5 * h2 + x_t)
        return h, bptt.until(h.sum() > 1.0)

    hs, _ = bptt.scan(step, sequences=x, outputs_info=dict(initial=h0, taps=[-2, -1]),
                      non_sequences=w)
    v = T.dmatrix("v")
    return bptt.function([x, h0, w, v], [hs] + bptt.grad((hs * v).sum(), [x, h0, w]), mode=mode)


@functools.lru_cache(maxsize=None)
def unrolled_until_gradient(executed):
    """The gradient of until_function's loop unrolled over its `executed` steps (PY)."""
    x, h0, w, v = T.dmatrix("x"), T.dmatrix("h0"), T.dvector("w"), T.dmatrix("v")
    outs, _ = unroll(lambda x_t, h2, h1, w: [T.tanh(w * h1 + 0.5 * h2 + x_t)], [(x, (0,))],
                     [(h0, (-2, -1))], [w], n_steps=executed)
    return bptt.function([x, h0, w, v], bptt.grad((outs[0] * v).sum(), [x, h0, w]), mode="PY")


@settings(max_examples=10)
@given(seed=st.integers(0, 2**16), steps=st.integers(1, 6))
def test_until_gradient_runs_over_executed_steps_only(mode, seed, steps):
    """Sequence gradients land on the rows the executed steps read (PyTensor shifts them by
    the number of initial rows); rows past the last executed step get exactly zero."""
    rng = np.random.default_rng(seed)
    xv, h0v, wv = rng.normal(size=(steps + 2, 2)), rng.normal(size=(3, 2)), rng.normal(size=2)
    f = until_function(mode)
    hist, executed = list(h0v[:2]), len(xv)
    for t in range(len(xv)):                      # the loop in NumPy, for the executed steps
        hist.append(np.tanh(wv * hist[-1] + 0.5 * hist[-2] + xv[t]))
        if hist[-1].sum() > 1.0:
            executed = t + 1
            break
    vv = rng.normal(size=(executed, 2))
    got = f(xv, h0v, wv, vv)
    for g, r in zip(got[1:], unrolled_until_gradient(executed)(xv, h0v, wv, vv)):
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)
    assert np.all(got[1][executed:] == 0)


# -- direction ----------------------------------------------------------------------------------
def test_go_backwards_and_negative_n_steps_land_in_input_order(mode):
    """Running backwards over x is running forwards over x[::-1]: gradients mirror."""
    x, h0 = T.dmatrix("x"), T.dvector("h0")
    step = lambda x_t, h: T.tanh(0.8 * h + x_t ** 2)   # noqa: E731
    back, _ = bptt.scan(step, sequences=x, outputs_info=h0, go_backwards=True)
    neg, _ = bptt.scan(step, sequences=x, outputs_info=h0, n_steps=-3)
    fwd, _ = bptt.scan(step, sequences=x[::-1], outputs_info=h0)
    v = T.dmatrix("v")
    costs = [(back * v).sum(), (neg * v).sum(), (fwd * v).sum()]
    grads = [bptt.grad(c, x) for c in costs]
    f = bptt.function([x, h0, v], grads, mode=mode)
    rng = np.random.default_rng(0)
    g_back, g_neg, g_fwd = f(rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal(size=(3, 2)))
    np.testing.assert_allclose(g_back, g_fwd, rtol=1e-12)
    np.testing.assert_allclose(g_neg, g_fwd, rtol=1e-12)
    assert not np.allclose(g_back, g_back[::-1])


# -- inputs of every kind -------------------------------------------------------------------------
def test_shared_and_captured_variables_get_gradients(mode):
    """W shared (found by scan), V shared and passed, b computed outside from x (captured)."""
    rng = np.random.default_rng(1)
    W = bptt.shared(rng.normal(size=(2, 2)) * 0.5, name="W")
    V = bptt.shared(rng.normal(size=2), name="V")
    x = T.dmatrix("x")
    b = T.tanh(x.mean(axis=0))

    def step(x_t, h, V):
        return T.tanh(T.dot(h, W) + x_t * V + b)

    hs, _ = bptt.scan(step, sequences=x, outputs_info=T.zeros((2,)), non_sequences=V)
    cost = (hs ** 2).sum()
    gx, gW, gV = bptt.grad(cost, [x, W, V])
    f = bptt.function([x], [cost, gx, gW, gV], mode=mode)
    xv = rng.normal(size=(4, 2))
    _, gxv, gWv, gVv = f(xv)

    def numeric(set_value, value):
        out = np.zeros_like(value)
        for idx in np.ndindex(value.shape):
            for sign in (1, -1):
                v = value.copy()
                v[idx] += sign * 1e-6
                out[idx] += sign * set_value(v) / 2e-6
        return out

    def cost_with(W_=None, V_=None, x_=None):
        old = W.get_value(), V.get_value()
        W.set_value(W_ if W_ is not None else old[0])
        V.set_value(V_ if V_ is not None else old[1])
        try:
            return f(x_ if x_ is not None else xv)[0]
        finally:
            W.set_value(old[0])
            V.set_value(old[1])

    np.testing.assert_allclose(gWv, numeric(lambda v: cost_with(W_=v), W.get_value()), rtol=1e-6)
    np.testing.assert_allclose(gVv, numeric(lambda v: cost_with(V_=v), V.get_value()), rtol=1e-6)
    np.testing.assert_allclose(gxv, numeric(lambda v: cost_with(x_=v), xv), rtol=1e-6)


def test_random_draws_inside_the_step_are_recorded_not_redrawn(mode):
    """h_t = tanh(w h_{t-1} noise_t + x_t): the gradient needs each step's noise; without the
    updates the function draws the same noise at every call, so finite differences apply."""
    srng = bptt.RandomStreams(3)

    def fun(x, w):
        def step(x_t, h, w):
            return T.tanh(w * h * srng.normal(size=h.shape) + x_t)

        hs, _ = bptt.scan(step, sequences=x, outputs_info=T.ones((2,)), non_sequences=w)
        return hs

    rng = np.random.default_rng(2)
    check_gradient(fun, [rng.normal(size=(4, 2)), rng.normal(size=2)], mode)


def test_nit_sot_keeping_fewer_rows_than_steps(mode):
    """A nit_sot of length 2 keeps the last 2 of 4 rows: earlier rows have no cotangent."""
    x_t, w = T.dvector("x_t"), T.dvector("w")
    op = Scan([x_t, w], [T.tanh(x_t * w)], _info(n_seqs=1, n_nit_sot=1, n_non_seqs=1))

    def fun(x, w):
        return op(T.constant(np.int64(4)), x, T.constant(np.int64(2)), w)

    rng = np.random.default_rng(4)
    check_gradient(fun, [rng.normal(size=(5, 3)), rng.normal(size=3)], mode)
    x, wv = T.dmatrix("x"), T.dvector("wv")
    g = bptt.function([x, wv], bptt.grad(fun(x, wv).sum(), x), mode="PY")(
        rng.normal(size=(5, 3)), rng.normal(size=3))
    assert np.all(g[:2] == 0) and np.all(g[4] == 0) and np.all(g[2:4] != 0)


# -- disconnected and undefined ----------------------------------------------------------------
def two_loops():
    x, a, b = T.dvector("x"), T.dscalar("a"), T.dscalar("b")
    (ha, hb), _ = bptt.scan(lambda x_t, ha, hb: [ha * 0.5 + x_t, hb * 2.0], sequences=x,
                            outputs_info=[a, b])
    return x, a, b, ha, hb


def test_disconnected_inputs_raise_or_give_zeros(mode):
    x, a, b, ha, hb = two_loops()
    with pytest.raises(bptt.DisconnectedInputError, match="'b'"):
        bptt.grad(ha.sum(), b)
    gb, gx = bptt.grad(ha.sum(), [b, x], disconnected_inputs="ignore")
    f = bptt.function([x, a, b], [gb, gx], mode=mode, on_unused_input="ignore")
    gbv, gxv = f([1.0, 2.0, 3.0], 1.0, 1.0)
    assert gbv == 0.0
    np.testing.assert_allclose(gxv, [1.75, 1.5, 1.0])
    assert bptt.grad(hb.sum(), x, disconnected_inputs="ignore", return_disconnected="None") is None


def test_outputs_of_every_kind_carry_cotangents_some_disconnected(mode):
    """Several outputs at once (a sit_sot through its last row, a nit_sot through a slice),
    one output unused."""
    x, h0 = T.dmatrix("x"), T.dvector("h0")

    def step(x_t, h):
        h_new = T.tanh(h + x_t)
        return h_new, h_new * x_t, x_t ** 2

    (hs, ys, unused), _ = bptt.scan(step, sequences=x, outputs_info=[h0, None, None])

    def fun(x, h0):
        (hs, ys, _), _ = bptt.scan(step, sequences=x, outputs_info=[h0, None, None])
        return [hs[-1], ys[1:3]]

    rng = np.random.default_rng(6)
    check_gradient(fun, [rng.normal(size=(4, 2)), rng.normal(size=2)], mode)


def test_n_steps_is_not_differentiable(mode):
    x, n, s = T.dvector("x"), T.lscalar("n"), T.dscalar("s")
    hs, _ = bptt.scan(lambda x_t, h: h * x_t, sequences=x, outputs_info=T.ones(()), n_steps=n)
    assert bptt.grad(hs.sum(), n).dtype == bptt.config.floatX   # Theano: zeros for integers
    hs2, _ = bptt.scan(lambda h: h * 2.0, outputs_info=T.ones(()),
                       n_steps=T.cast(s, "int64"))
    with pytest.raises(bptt.DisconnectedInputError, match="'s'"):
        bptt.grad(hs2.sum(), s)
    f = bptt.function([x, n], bptt.grad(hs.sum(), n), mode=mode, on_unused_input="ignore")
    assert f([1.0, 2.0], 2) == 0.0


def test_a_state_the_step_never_reads_has_a_disconnected_initial_value(mode):
    """z_t = x_{t-1} + 1 never reads z_{t-1}, and scan returns only the rows the loop
    computed: the cost depends on x0 and y0, not on z0 (known or unknown n_steps)."""
    x0, y0, z0, n = T.dvector("x0"), T.dvector("y0"), T.dvector("z0"), T.lscalar("n")
    for steps in (10, n):
        [x, y, z], _ = bptt.scan(lambda a, b, c: (a ** 2, b, a + 1),
                                 outputs_info=[x0, y0, z0], n_steps=steps)
        cost = (x + y + z).sum()
        with pytest.raises(bptt.DisconnectedInputError, match="'z0'"):
            bptt.grad(cost, z0)
        with pytest.raises(bptt.DisconnectedInputError, match="'y0'"):
            bptt.grad(x.sum(), y0)
        with pytest.warns(UserWarning, match="'z0'"):
            bptt.grad(cost, z0, disconnected_inputs="warn")
    gx, gy, gz = bptt.grad(cost, [x0, y0, z0], disconnected_inputs="ignore")
    f = bptt.function([x0, y0, z0, n], [gx, gy, gz], mode=mode, on_unused_input="ignore")
    gxv, gyv, gzv = f([0.5, -0.5], [1.0, 2.0], [3.0, 4.0], 3)
    # x_t = x0^(2^t), z_t = x_{t-1} + 1 for t = 1..3: d/dx0 of sum x_t + sum z_t.
    xv = np.array([0.5, -0.5])
    want = sum(2 ** t * xv ** (2 ** t - 1) for t in (1, 2, 3)) + sum(
        2 ** t * xv ** (2 ** t - 1) for t in (0, 1, 2))
    np.testing.assert_allclose(gxv, want)
    np.testing.assert_allclose(gyv, [3.0, 3.0])
    assert np.all(gzv == 0.0)


def test_initial_rows_read_from_the_whole_buffer_stay_connected():
    """The Scan's outer output holds the initial rows in front: read there, z0 counts."""
    x0, z0 = T.dvector("x0"), T.dvector("z0")
    [x, z], _ = bptt.scan(lambda a, c: (a ** 2, a + 1), outputs_info=[x0, z0], n_steps=3)
    buffer = z.owner.inputs[0]
    g = bptt.grad(buffer[0].sum() + z.sum(), z0)
    f = bptt.function([x0, z0], g, mode="PY", on_unused_input="ignore")
    np.testing.assert_allclose(f([0.5, 0.5], [1.0, 2.0]), [1.0, 1.0])


def test_gradient_through_a_shared_update_is_that_of_the_initial_value(mode):
    """s <- s + 1 ten times: the final value's gradient with respect to s is 1 (Theano's
    test_grad_numeric_shared); s <- s * w: it is w^n, and w^(n-1) n s0 for w."""
    s = bptt.shared(np.float32(1.0), name="s")
    _, updates = bptt.scan(lambda: ([], {s: s + np.float32(1.0)}), n_steps=10)
    assert bptt.function([], bptt.grad(updates[s], s), mode=mode)() == 1.0
    p, w = bptt.shared(np.float64(2.0), name="p"), T.dscalar("w")
    _, updates = bptt.scan(lambda w: ([], {p: p * w}), non_sequences=w, n_steps=4)
    gp, gw = bptt.function([w], bptt.grad(updates[p], [p, w]), mode=mode)(0.5)
    np.testing.assert_allclose([gp, gw], [0.5 ** 4, 4 * 0.5 ** 3 * 2.0])


def shared_recurrence(x, w, s0):
    """h_t = s_t x_t with s <- s w + x_t a shared update, as a function of s's initial
    value s0 (the shared variable replaced by s0 once the graph is built)."""
    from bptt.graph.replace import clone_replace

    s = bptt.shared(np.zeros(2), name="s")
    hs, updates = bptt.scan(lambda x_t, w: [s * x_t, {s: T.tanh(s * w + x_t)}],
                            sequences=x, non_sequences=w)
    return clone_replace([hs, updates[s]], {s: s0})


def test_shared_update_gradients_match_finite_differences(mode):
    rng = np.random.default_rng(11)
    check_gradient(shared_recurrence,
                   [rng.normal(size=(5, 2)), rng.normal(size=2), rng.normal(size=2)], mode)


def test_shared_update_gradient_is_zero_past_a_truncation_window():
    """truncate_gradient=2 backpropagates through the last 2 steps only, for a shared
    state as for a sit_sot."""
    x, w = T.dvector("x"), T.dscalar("w")
    s = bptt.shared(np.float64(1.0), name="s")
    _, updates = bptt.scan(lambda x_t, w: ([], {s: s * w + x_t}), sequences=x,
                           non_sequences=w, truncate_gradient=2)
    gx, gs = bptt.function([x, w], bptt.grad(updates[s], [x, s]), mode="PY")(
        [1.0, 2.0, 3.0, 4.0], 0.5)
    np.testing.assert_allclose(gx, [0.0, 0.0, 0.5, 1.0])
    assert gs == 0.0


def test_gradient_through_a_sampling_parameter_is_undefined():
    srng = bptt.RandomStreams(0)
    x, s = T.dvector("x"), T.dscalar("s")
    hs, _ = bptt.scan(lambda x_t, s: x_t + srng.normal(std=s), sequences=x, non_sequences=s)
    with pytest.raises(bptt.NullTypeGradError, match="sampling"):
        bptt.grad(hs.sum(), s)
    assert bptt.grad(hs.sum(), x) is not None


# -- mit_mot buffers (what gradients of scans contain) -----------------------------------------
def mit_mot_op(in_taps, out_taps, truncate=-1):
    """Out-tap j: tanh(w c_j + sum_i a_ij m_i) (1 + 0.2 sin(m_j)): every row read nonlinearly."""
    ins = [T.dvector(f"m{k:+d}") for k in in_taps]
    w = T.dvector("w")
    outs = []
    for j in range(len(out_taps)):
        acc = w * (0.3 + 0.1 * j)
        for i, v in enumerate(ins):
            acc = acc + v * (0.2 + 0.15 * ((i + 2 * j) % 3))
        outs.append(T.tanh(acc) * (1 + 0.2 * T.sin(ins[j % len(ins)])))
    info = _info(mit_mot_in_slices=(tuple(in_taps),), mit_mot_out_slices=(tuple(out_taps),),
                 n_non_seqs=1, truncate_gradient=truncate)
    return Scan(ins + [w], outs, info)


TAPS = st.lists(st.integers(-2, 2), min_size=1, max_size=3, unique=True).map(tuple)

#: NUMBA compiles one graph per tap pattern; this one has a slot read then overwritten
#: (tap 0), a slot written before it is read (tap -1) and one read before it is written
#: (tap 2), and a transient read (recorded by an augmented scan). Backward scans of
#: sit_sots (taps (0, 1) / (1,)) run in NUMBA in every other test.
NUMBA_TAPS = (((-1, 0, 2), (0, 1)),)


@functools.lru_cache(maxsize=None)
def mit_mot_gradients(in_taps, out_taps):
    """(NUMBA, PY) functions (n, buf, w, r) -> gradients of sum(op(n, buf, w) r) with respect
    to buf and w; n is symbolic, so each tap pattern is one structure, compiled once."""
    op = mit_mot_op(in_taps, out_taps)
    n, buf, w, r = T.lscalar("n"), T.dmatrix("buf"), T.dvector("w"), T.dmatrix("r")
    grads = bptt.grad((op(n, buf, w) * r).sum(), [buf, w])
    return tuple(bptt.function([n, buf, w, r], grads, mode=m) for m in ("NUMBA", "PY"))


@settings(max_examples=20)
@given(data=st.data())
def test_mit_mot_gradients_match_finite_differences(mode, data):
    """verify_grad in PY; in NUMBA, the compiled gradient must equal PY's (n_steps symbolic:
    one compilation per tap pattern)."""
    taps = st.sampled_from(NUMBA_TAPS) if mode == "NUMBA" else st.tuples(TAPS, TAPS)
    in_taps, out_taps = data.draw(taps, label="taps")
    steps = data.draw(st.integers(0, 4), label="steps")
    lo, hi = min(in_taps + out_taps), max(in_taps + out_taps)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    pt = [rng.normal(size=(steps + hi - lo + data.draw(st.integers(0, 1)), 2)),
          rng.normal(size=2)]
    op = mit_mot_op(in_taps, out_taps)
    if mode == "NUMBA":
        r_v = rng.normal(size=pt[0].shape)
        numba_f, py_f = mit_mot_gradients(in_taps, out_taps)
        for a, b in zip(numba_f(steps, *pt, r_v), py_f(steps, *pt, r_v)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    bptt.verify_grad(lambda buf, w: op(T.constant(np.int64(steps)), buf, w), pt, mode="PY",
                     rng=np.random.default_rng(1))


def unrolled_mit_mot(in_taps, out_taps, buf, w, steps, truncate):
    """The mit_mot loop written out: rows as a Python list, steps before the window frozen."""
    lo = min(in_taps + out_taps)
    rows = [buf[i] for i in range(steps + max(in_taps + out_taps) - lo + 1)]
    frozen, first_live = [], 0 if truncate == -1 else max(0, steps - truncate)
    for t in range(steps):
        reads = [rows[t + k - lo] for k in in_taps]
        written = []
        for j in range(len(out_taps)):
            acc = w * (0.3 + 0.1 * j)
            for i, v in enumerate(reads):
                acc = acc + v * (0.2 + 0.15 * ((i + 2 * j) % 3))
            written.append(T.tanh(acc) * (1 + 0.2 * T.sin(reads[j % len(reads)])))
        if t < first_live:
            frozen += written
        for k, v in zip(out_taps, written):
            rows[t + k - lo] = v
    return T.stack(rows), frozen


@pytest.mark.parametrize("in_taps, out_taps", [((0, 1), (1,)), ((-1, 0, 2), (0, 1)),
                                               ((2, 0), (1, 2))])
def test_truncated_mit_mot_matches_unrolled(in_taps, out_taps):
    steps, truncate = 4, 2
    lo, hi = min(in_taps + out_taps), max(in_taps + out_taps)
    buf, w, r = T.dmatrix("buf"), T.dvector("w"), T.dmatrix("r")
    out = mit_mot_op(in_taps, out_taps, truncate)(T.constant(np.int64(steps)), buf, w)
    ref, frozen = unrolled_mit_mot(in_taps, out_taps, buf, w, steps, truncate)
    got = bptt.grad((out * r).sum(), [buf, w])
    want = bptt.grad((ref * r).sum(), [buf, w], consider_constant=frozen)
    f = bptt.function([buf, w, r], got + want, mode="PY")
    rng = np.random.default_rng(8)
    bv, wv = rng.normal(size=(steps + hi - lo + 1, 2)), rng.normal(size=2)
    gb, gw, rb, rw = f(bv, wv, rng.normal(size=bv.shape))
    np.testing.assert_allclose(gb, rb, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gw, rw, rtol=1e-10, atol=1e-12)
    assert np.all(gb[rb == 0] == 0)


# -- nesting and second order ---------------------------------------------------------------------
def test_gradient_of_nested_scans(mode):
    """An outer loop over rows whose step runs an inner loop over the row's entries."""
    def fun(x, w):
        def row_step(x_row, acc, w):
            inner, _ = bptt.scan(lambda e, s, w: T.tanh(s * w + e), sequences=x_row,
                                 outputs_info=acc, non_sequences=w)
            return inner[-1] * 0.9

        outs, _ = bptt.scan(row_step, sequences=x, outputs_info=T.zeros(()), non_sequences=w)
        return outs

    rng = np.random.default_rng(9)
    check_gradient(fun, [rng.normal(size=(3, 4)), np.asarray(rng.normal())], mode)


def test_second_derivative_matches_finite_differences_of_the_gradient(mode):
    """d/dw of grad(cost, w) checked numerically: grad of a backward scan with mit_mot."""
    def fun(x, h0, w):
        def step(x0, h2, h1, w):
            return T.tanh(w * h1 - 0.3 * h2 + x0 * h2)

        hs, _ = bptt.scan(step, sequences=x, outputs_info=dict(initial=h0, taps=[-2, -1]),
                          non_sequences=w)
        cost = (hs ** 2).sum() + hs[-1].sum()
        return bptt.grad(cost, [w, h0, x])

    rng = np.random.default_rng(10)
    check_gradient(fun, [rng.normal(size=(5, 2)), rng.normal(size=(2, 2)), rng.normal(size=2)],
                   mode, seed=3)


def test_sequence_gradient_read_from_a_slot_the_backward_step_overwrites(mode):
    """mit_mot in-tap 0 / out-tap 0 with m_t <- 0.5 m_t + x_t: the gradient of x_t is the
    cotangent read from the very slot the backward step then overwrites with 0.5 of it."""
    m, x_t = T.dvector("m"), T.dvector("x_t")
    op = Scan([x_t, m], [0.5 * m + x_t],
              _info(n_seqs=1, mit_mot_in_slices=((0,),), mit_mot_out_slices=((0,),)))
    rng = np.random.default_rng(11)
    check_gradient(lambda x, buf: op(T.constant(np.int64(3)), x, buf),
                   [rng.normal(size=(3, 2)), rng.normal(size=(4, 2))], mode)


def test_state_with_a_constant_output_read_by_another_state(mode):
    """a_t = 2 (its cotangent reaches nothing), b_t = tanh(b_{t-1} a_{t-3} + x_t): a's
    backward mit_mot keeps its unused tap 0, which fixes where its buffer rows lie."""
    def fun(x, h0):
        def step(x_t, a3, a1, b):
            return [T.ones_like(a1) * 2.0, T.tanh(b * a3 + x_t)]

        (a, b), _ = bptt.scan(step, sequences=x,
                              outputs_info=[dict(initial=h0, taps=[-3, -1]), h0[0]])
        return [a, b]

    rng = np.random.default_rng(12)
    check_gradient(fun, [rng.normal(size=(4, 2)), rng.normal(size=(3, 2))], mode)
