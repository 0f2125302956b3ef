"""Rop of a Scan (one scan carrying states and tangents) against finite differences, Lop,
and, through a backward scan, reverse-over-reverse Hessian-vector products."""
from __future__ import annotations

import functools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.graph.traversal import toposort
from bptt.scan import Scan


def build(x, h0, m0, w):
    """Every category: sequence taps (-1, 1), a sit_sot, a (-2, -1) mit_sot, a nit_sot, until."""
    def step(xa, xb, h, m2, m1, w):
        h_new = T.tanh(w * h + xa * xb)
        m_new = 0.5 * m2 - T.sin(m1 * w) + xb
        return [h_new, m_new, h_new * m1], bptt.until(T.gt(h_new.sum(), 1.5))

    outs, _ = bptt.scan(step, sequences=dict(input=x, taps=[-1, 1]),
                        outputs_info=[h0, dict(initial=m0, taps=[-2, -1]), None],
                        non_sequences=w, name="rop")
    return outs


@functools.lru_cache(maxsize=None)
def tangent_function(mode):
    x, h0, m0, w = T.dmatrix("x"), T.dvector("h0"), T.dmatrix("m0"), T.dvector("w")
    outs = build(x, h0, m0, w)
    dx, dm0, dw = T.dmatrix("dx"), T.dmatrix("dm0"), T.dvector("dw")
    tangents = bptt.Rop(outs, [x, h0, m0, w], [dx, None, dm0, dw])   # h0 does not move
    return bptt.function([x, h0, m0, w, dx, dm0, dw], outs + tangents, mode=mode)


@settings(max_examples=10)
@given(steps=st.integers(0, 5), m=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_rop_matches_finite_differences(mode, steps, m, seed):
    rng = np.random.default_rng(seed)
    pt = [rng.normal(size=(steps + 2, m)), rng.normal(size=m), rng.normal(size=(2, m)),
          rng.normal(size=m)]
    dirs = [rng.normal(size=pt[0].shape), rng.normal(size=pt[2].shape), rng.normal(size=m)]
    f = tangent_function(mode)
    got = f(*pt, *dirs)
    outs, tangents = got[:3], got[3:]

    def at(eps):
        moved = [pt[0] + eps * dirs[0], pt[1], pt[2] + eps * dirs[1], pt[3] + eps * dirs[2]]
        return f(*moved, *dirs)[:3]

    hi, lo = at(1e-6), at(-1e-6)
    for k, (t, a, b) in enumerate(zip(tangents, hi, lo)):
        assert t.shape == outs[k].shape
        if a.shape != b.shape:   # the perturbation changed the executed steps: no derivative
            continue
        np.testing.assert_allclose(t, (a - b) / 2e-6, rtol=1e-5, atol=1e-6, err_msg=f"output {k}")


def test_rop_is_one_scan_carrying_states_and_tangents():
    x, h0, m0, w = T.dmatrix("x"), T.dvector("h0"), T.dmatrix("m0"), T.dvector("w")
    outs = build(x, h0, m0, w)
    tangents = bptt.Rop(outs, [x, w], [T.dmatrix("dx"), T.dvector("dw")])
    nodes = [n for n in toposort(tangents) if isinstance(n.op, Scan)]
    carrying = [n for n in nodes if n.op.info.n_sit_sot == 2]
    assert len(carrying) == 1   # (the forward scan may appear too, read for its shapes)
    assert all(n.op.info.n_sit_sot == 1 for n in nodes if n is not carrying[0])
    info = carrying[0].op.info
    assert info.n_sit_sot == 2 and info.mit_sot_in_slices == ((-2, -1), (-2, -1))
    assert info.n_nit_sot == 2 and info.as_while and info.n_seqs == 4 and info.n_non_seqs == 2


def test_rop_agrees_with_lop(mode):
    """<Rop(v), u> == <v, Lop(u)> for the outputs of a scan without until."""
    x, h0, w = T.dmatrix("x"), T.dvector("h0"), T.dvector("w")
    hs, _ = bptt.scan(lambda x_t, h, w: T.tanh(w * h + x_t ** 2), sequences=x, outputs_info=h0,
                      non_sequences=w)
    v = [T.dmatrix("vx"), T.dvector("vh"), T.dvector("vw")]
    u = T.dmatrix("u")
    jvp = bptt.Rop(hs, [x, h0, w], v)
    vjp = bptt.Lop(hs, [x, h0, w], u)
    lhs = (jvp * u).sum()
    rhs = sum(((a * b).sum() for a, b in zip(v, vjp)), start=0.0)
    f = bptt.function([x, h0, w, u] + v, [lhs, rhs], mode=mode)
    rng = np.random.default_rng(3)
    vals = [rng.normal(size=s) for s in ((4, 2), 2, 2, (4, 2), (4, 2), 2, 2)]
    left, right = f(*vals)
    np.testing.assert_allclose(left, right, rtol=1e-12)


def test_forward_over_reverse_hessian_vector_product(mode):
    """Rop through the backward scan (mit_mot buffers) equals reverse-over-reverse."""
    x, h0, w, v = T.dmatrix("x"), T.dvector("h0"), T.dvector("w"), T.dvector("v")
    hs, _ = bptt.scan(lambda x_t, h, w: T.tanh(w * h + x_t), sequences=x, outputs_info=h0,
                      non_sequences=w)
    g = bptt.grad((hs ** 2).sum(), w)
    hv_fwd = bptt.Rop(g, w, v)
    hv_rev = bptt.grad((g * v).sum(), w)
    f = bptt.function([x, h0, w, v], [hv_fwd, hv_rev], mode=mode)
    rng = np.random.default_rng(4)
    a, b = f(rng.normal(size=(5, 3)), rng.normal(size=3), rng.normal(size=3), rng.normal(size=3))
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
