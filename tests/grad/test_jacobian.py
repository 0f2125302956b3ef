"""jacobian and hessian (built with scan) against closed forms and finite differences."""
from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.tensor as T


def numeric_jacobian(f, x, eps=1e-6):
    """d f(x) / d x by central differences, shape f(x).shape + x.shape."""
    x = np.asarray(x, dtype="float64")
    y = np.asarray(f(x))
    out = np.zeros(y.shape + x.shape)
    for idx in np.ndindex(x.shape):
        hi, lo = x.copy(), x.copy()
        hi[idx] += eps
        lo[idx] -= eps
        out[(...,) + idx] = (np.asarray(f(hi)) - np.asarray(f(lo))) / (2 * eps)
    return out


def test_exported_under_every_name():
    from bptt.grad import hessian, jacobian
    from bptt.gradient import hessian as h2, jacobian as j2

    assert bptt.jacobian is jacobian is j2 and bptt.hessian is hessian is h2


@functools.lru_cache(maxsize=None)
def tanh_layer(mode):
    x, W = T.dvector("x"), T.dmatrix("W")
    y = T.tanh(T.dot(W, x))
    jx, jW = bptt.jacobian(y, [x, W])
    return bptt.function([x, W], [jx, jW, bptt.hessian((y ** 2).sum(), x)], mode=mode)


@settings(max_examples=10)
@given(n=st.integers(0, 3), m=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_jacobian_and_hessian_of_a_layer(mode, n, m, seed):
    rng = np.random.default_rng(seed)
    x, W = rng.normal(size=m), rng.normal(size=(n, m))
    jx, jW, h = tanh_layer(mode)(x, W)
    d = 1 - np.tanh(W @ x) ** 2
    np.testing.assert_allclose(jx, d[:, None] * W, rtol=1e-12, atol=1e-14)
    want_jW = np.zeros((n, n, m))
    for i in range(n):
        want_jW[i, i] = d[i] * x
    np.testing.assert_allclose(jW, want_jW, rtol=1e-12, atol=1e-14)
    want_h = numeric_jacobian(lambda v: 2 * (np.tanh(W @ v) * (1 - np.tanh(W @ v) ** 2)) @ W, x)
    np.testing.assert_allclose(h, want_h, rtol=1e-6, atol=1e-8)
    assert jx.shape == (n, m) and jW.shape == (n, n, m) and h.shape == (m, m)


def test_jacobian_forms_and_shapes(mode):
    """A scalar gives its gradient; lists and tuples come back as given; an expression with
    several dimensions gives expression.shape + wrt.shape; the quadratic form's Hessian."""
    x, A = T.dvector("x"), T.dmatrix("A")
    q = T.dot(x, T.dot(A, x))
    outer = x[:, None] * x[None, :]
    g = bptt.jacobian(q, x)
    (j_tuple,) = bptt.jacobian(x * 2.0, (x,))
    assert isinstance(bptt.jacobian(x * 2.0, (x,)), tuple)
    assert isinstance(bptt.jacobian(x * 2.0, [x]), list)
    jo = bptt.jacobian(outer, x)
    h = bptt.hessian(q, [x])[0]
    f = bptt.function([x, A], [g, j_tuple, jo, h], mode=mode)
    xv, Av = np.array([1.0, -2.0, 0.5]), np.arange(9.0).reshape(3, 3)
    gv, jt, jov, hv = f(xv, Av)
    np.testing.assert_allclose(gv, (Av + Av.T) @ xv)
    np.testing.assert_allclose(jt, 2 * np.eye(3))
    assert jov.shape == (3, 3, 3)
    np.testing.assert_allclose(jov, numeric_jacobian(lambda v: np.outer(v, v), xv), atol=1e-8)
    np.testing.assert_allclose(hv, Av + Av.T)


def test_disconnected_wrt(mode):
    x, z = T.dvector("x"), T.dvector("z")
    with pytest.raises(bptt.DisconnectedInputError, match="'z'"):
        bptt.jacobian(x * 3.0, z)
    j = bptt.jacobian(x * 3.0, z, disconnected_inputs="ignore")
    f = bptt.function([x, z], j, mode=mode, on_unused_input="ignore")
    np.testing.assert_array_equal(f([1.0, 2.0], [0.0, 0.0, 0.0]), np.zeros((2, 3)))
    with pytest.raises(TypeError, match="scalar"):
        bptt.hessian(x, x)


@functools.lru_cache(maxsize=None)
def rnn_jacobian(mode):
    """The Jacobian of a scan's outputs (a scan of backward scans) and the Hessian of its cost."""
    x, h0, w = T.dmatrix("x"), T.dvector("h0"), T.dvector("w")
    hs, _ = bptt.scan(lambda x_t, h, w: T.tanh(w * h + x_t), sequences=x, outputs_info=h0,
                      non_sequences=w)
    jx, jw = bptt.jacobian(hs[-1], [x, w])
    hw = bptt.hessian((hs ** 2).sum(), w)
    return bptt.function([x, h0, w], [hs, jx, jw, hw], mode=mode)


def rnn_numpy(x, h0, w):
    h = h0
    rows = []
    for t in range(len(x)):
        h = np.tanh(w * h + x[t])
        rows.append(h)
    return np.array(rows)


@settings(max_examples=6)
@given(steps=st.integers(1, 4), m=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_jacobian_and_hessian_through_a_scan(mode, steps, m, seed):
    rng = np.random.default_rng(seed)
    x, h0, w = rng.normal(size=(steps, m)), rng.normal(size=m), rng.normal(size=m)
    hs, jx, jw, hw = rnn_jacobian(mode)(x, h0, w)
    np.testing.assert_allclose(hs, rnn_numpy(x, h0, w), rtol=1e-12)
    np.testing.assert_allclose(jx, numeric_jacobian(lambda v: rnn_numpy(v, h0, w)[-1], x),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(jw, numeric_jacobian(lambda v: rnn_numpy(x, h0, v)[-1], w),
                               rtol=1e-6, atol=1e-8)

    def grad_w(v):   # NumPy BPTT of sum(h^2) with respect to w
        hs_ = rnn_numpy(x, h0, v)
        prev = np.vstack([h0[None], hs_[:-1]])
        gh, gw = np.zeros(m), np.zeros(m)
        for t in reversed(range(steps)):
            ga = (gh + 2 * hs_[t]) * (1 - hs_[t] ** 2)
            gw += ga * prev[t]
            gh = ga * v
        return gw

    np.testing.assert_allclose(hw, numeric_jacobian(grad_w, w), rtol=1e-6, atol=1e-8)
