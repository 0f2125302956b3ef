"""Gradients taken inside a step with respect to a non-sequence (Theano's Jacobian recipe).

The step receives a non-sequence variable itself, so ``grad(y[i], x)`` inside it
reaches `x` through the outer graph of `y`; scan then replaces the variable by its
inner placeholder. Checked against `bptt.jacobian` / `bptt.hessian`, closed forms in
NumPy and finite differences.
"""
import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.graph.traversal import toposort
from bptt.scan import Scan
from bptt.tensor.random import RandomVariable, copy_generator

X = np.array([0.3, -0.5, 1.2])


def _jacobian_np(x):
    """d y / d x for y = x**2 * sum(exp(x))."""
    s = np.exp(x).sum()
    return np.diag(2 * x * s) + np.outer(x ** 2, np.exp(x))


def _hessian_np(x):
    """Hessian of sum(sin(x) * x)."""
    return np.diag(2 * np.cos(x) - x * np.sin(x))


def test_jacobian_and_hessian_recipes(mode):
    x = T.dvector("x")
    y = x ** 2 * T.sum(T.exp(x))
    cost = T.sum(T.sin(x) * x)
    gy = bptt.grad(cost, x)
    jac = bptt.scan(lambda i, y, x: bptt.grad(y[i], x), sequences=T.arange(y.shape[0]),
                    non_sequences=[y, x])[0]
    hess = bptt.scan(lambda i, gy, x: bptt.grad(gy[i], x), sequences=T.arange(gy.shape[0]),
                     non_sequences=[gy, x])[0]
    # grad of grad inside the step: the cost's whole graph is rebuilt on x's placeholder
    hess2 = bptt.scan(lambda i, x: bptt.grad(bptt.grad(cost, x)[i], x),
                      sequences=T.arange(x.shape[0]), non_sequences=[x])[0]
    f = bptt.function([x], [jac, hess, hess2, bptt.jacobian(y, x), bptt.hessian(cost, x)],
                      mode=mode)
    got_j, got_h, got_h2, ref_j, ref_h = f(X)
    np.testing.assert_allclose(got_j, _jacobian_np(X), rtol=1e-12)
    np.testing.assert_allclose(got_j, ref_j, rtol=1e-12)
    for h in (got_h, got_h2):
        np.testing.assert_allclose(h, _hessian_np(X), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(h, ref_h, rtol=1e-12, atol=1e-15)


def test_gradient_of_the_jacobian_recipe():
    """The loop whose step holds a gradient is an ordinary Scan: its own gradient (third
    order in x here) agrees with finite differences."""
    def recipe(x):
        y = T.tanh(x) * T.sum(x ** 3)
        return bptt.scan(lambda i, y, x: bptt.grad(y[i], x), sequences=T.arange(y.shape[0]),
                         non_sequences=[y, x])[0]

    bptt.verify_grad(recipe, [X], rng=np.random.default_rng(0), mode="PY")


def test_matrix_non_sequence_that_is_shared_and_an_expression(mode):
    """Gradients inside the step with respect to a shared weight and to an input matrix,
    through an expression passed as a non-sequence and a constant non-sequence."""
    rng = np.random.default_rng(1)
    W = bptt.shared(rng.normal(size=(2, 3)), name="W")
    v = T.dvector("v")
    h = T.tanh(T.dot(W, v))                      # an expression of W and v
    rows, _ = bptt.scan(lambda i, h, W, v, c: (bptt.grad(h[i], W) * c, bptt.grad(h[i], v)),
                        sequences=T.arange(2), non_sequences=[h, W, v, np.float64(2.0)])
    f = bptt.function([v], rows, mode=mode)
    v0 = rng.normal(size=3)
    d_w, d_v = f(v0)
    sech2 = 1 - np.tanh(W.get_value() @ v0) ** 2
    for i in range(2):
        want_w = np.zeros((2, 3))
        want_w[i] = sech2[i] * v0
        np.testing.assert_allclose(d_w[i], 2.0 * want_w, rtol=1e-12)
        np.testing.assert_allclose(d_v[i], sech2[i] * W.get_value()[i], rtol=1e-12)


def test_non_sequences_of_every_kind_keep_their_values(mode):
    """A constant, a shared variable, an input and an expression as non-sequences."""
    w = bptt.shared(np.array([1.0, 2.0]), name="w")
    a = T.dvector("a")
    u = T.dmatrix("u")
    out, _ = bptt.scan(lambda r, h, k, w, a, e: h * k + r * w + a * e,
                       sequences=u, outputs_info=T.zeros((2,)),
                       non_sequences=[np.float64(0.5), w, a, T.exp(a)])
    f = bptt.function([u, a], out, mode=mode)
    u0, a0 = np.arange(6.0).reshape(3, 2), np.array([0.1, -0.2])
    h, want = np.zeros(2), []
    for r in u0:
        h = h * 0.5 + r * w.get_value() + a0 * np.exp(a0)
        want.append(h)
    np.testing.assert_allclose(f(u0, a0), want, rtol=1e-12)


def test_strict_with_received_non_sequences():
    """strict=True: what a passed expression is computed from stays outside the loop and
    needs no passing; an outer variable the step's gradient reaches does."""
    x, w = T.dvector("x"), T.dvector("w")
    y = x * w
    out, _ = bptt.scan(lambda i, y: y[i] * 2, sequences=T.arange(3), non_sequences=[y],
                       strict=True)
    f = bptt.function([x, w], out, mode="PY")
    np.testing.assert_allclose(f(X, np.ones(3)), 2 * X)
    # d(x * w)[i] / dx reads w: under strict=True it must be passed too
    with pytest.raises(ValueError, match=r"strict=True.*uses 'w'"):
        bptt.scan(lambda i, y, x: bptt.grad(y[i], x), sequences=T.arange(3),
                  non_sequences=[y, x], strict=True)
    out, _ = bptt.scan(lambda i, y, x, w: bptt.grad(y[i], x), sequences=T.arange(3),
                       non_sequences=[y, x, w], strict=True)
    np.testing.assert_allclose(bptt.function([x, w], out, mode="PY")(X, np.array([1, 2, 3.0])),
                               np.diag([1.0, 2.0, 3.0]))


def test_random_draw_sized_by_a_received_non_sequence(mode):
    """A draw whose size reads a non-sequence is one draw per step (its sample and its
    generator update stay one node), and a draw made outside the loop and passed in is
    left to its own stream."""
    srng = bptt.RandomStreams(2)
    x = T.dvector("x")
    outside = srng.uniform((2,))
    out, updates = bptt.scan(lambda i, x, o: srng.uniform(x.shape) + o.sum(),
                             sequences=T.arange(3), non_sequences=[x, outside])
    (rng,) = list(updates)
    op = out.owner.op
    assert isinstance(op, Scan)
    draws = [n for n in toposort(op.inner_outputs, blockers=op.inner_inputs)
             if isinstance(n.op, RandomVariable)]
    assert len(draws) == 1
    assert outside.owner.inputs[0].default_update is not None
    ref = copy_generator(rng.get_value())
    ref_out = copy_generator(outside.owner.inputs[0].get_value())
    f = bptt.function([x], [out, outside], updates=updates, mode=mode)
    got, o = f(X)
    np.testing.assert_allclose(o, ref_out.random(2), rtol=1e-12)
    np.testing.assert_allclose(got, ref.random((3, 3)) + o.sum(), rtol=1e-12)
