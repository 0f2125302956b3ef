"""Textbook formulas of sigmoid, its log and the log of a softmax, built stable."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.graph.traversal import ancestors


def _scalar_ops(var):
    return {v.owner.op.scalar_op.name for v in ancestors([var])
            if v.owner is not None and hasattr(v.owner.op, "scalar_op")}


def _logistic_cost(z, y):
    p = 1 / (1 + T.exp(-z))
    return (-y * T.log(p) - (1 - y) * T.log(1 - p)).sum(), p


def _stable_cost(z, y):
    return (y * np.logaddexp(0, -z) + (1 - y) * np.logaddexp(0, z)).sum()


def test_the_textbook_logistic_cost_is_built_from_softplus():
    z, y = T.vector("z"), T.vector("y")
    cost, p = _logistic_cost(z, y)
    assert p.owner.op.scalar_op.name == "sigmoid"
    assert "softplus" in _scalar_ops(cost) and "log" not in _scalar_ops(cost)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_logistic_cost_and_gradient_stay_finite_where_p_rounds_to_0_or_1(dtype, mode):
    # Theano's tutorial regression: one step from z = 40 made every weight NaN.
    z, y = T.vector("z", dtype=dtype), T.vector("y", dtype=dtype)
    cost, p = _logistic_cost(z, y)
    f = bptt.function([z, y], [cost, bptt.grad(cost, z), p], mode=mode)
    zv = np.array([40, -800, 0.3, 800], dtype)
    yv = np.array([0, 1, 1, 1], dtype)
    c, g, pv = f(zv, yv)
    assert c.dtype == g.dtype == pv.dtype == dtype
    np.testing.assert_allclose(c, _stable_cost(zv.astype(float), yv), rtol=1e-6)
    with np.errstate(over="ignore"):
        want = 1 / (1 + np.exp(-zv.astype(float))) - yv
    np.testing.assert_allclose(g, want, atol=1e-6)


def test_the_log_of_sigmoid_ops_is_built_from_softplus(mode):
    z = T.vector("z")
    out = T.log(T.nnet.sigmoid(z)) + 2 * T.log(1 - T.nnet.sigmoid(z))
    assert "log" not in _scalar_ops(out)
    zv = np.array([-900.0, -3.0, 0.0, 2.5, 900.0])
    want = -np.logaddexp(0, -zv) - 2 * np.logaddexp(0, zv)
    np.testing.assert_allclose(bptt.function([z], out, mode=mode)(zv), want)


def test_the_log_of_a_softmax_is_a_log_softmax(mode):
    x = T.matrix("x")
    cost = -T.log(T.nnet.softmax(x))[0, 1]
    f = bptt.function([x], [cost, bptt.grad(cost, x)], mode=mode)
    c, g = f(np.array([[1000.0, -1000.0, 0.0]]))
    np.testing.assert_allclose(c, 2000.0)
    np.testing.assert_allclose(g, [[1.0, -1.0, 0.0]], atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-60, 60), min_size=1, max_size=6),
       st.lists(st.floats(0, 1), min_size=6, max_size=6))
def test_values_and_gradients_equal_the_textbook_formula_where_it_is_finite(zs, ys):
    z, y = T.vector("z"), T.vector("y")
    cost, _ = _logistic_cost(z, y)
    zv, yv = np.array(zs), np.array(ys[:len(zs)])
    got, grad = bptt.function([z, y], [cost, bptt.grad(cost, z)], mode="PY")(zv, yv)
    p = 1 / (1 + np.exp(-zv))
    with np.errstate(divide="ignore"):
        naive = (-yv * np.log(p) - (1 - yv) * np.log(1 - p)).sum()
    if np.all(np.abs(zv) <= 15):    # beyond, the textbook formula itself loses digits
        np.testing.assert_allclose(got, naive, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(got, _stable_cost(zv, yv), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(grad, p - yv, rtol=1e-9, atol=1e-15)


def test_the_gradients_of_the_stable_forms_match_finite_differences(mode):
    rng = np.random.default_rng(0)

    def costs(z, x):
        cost, _ = _logistic_cost(z, T.constant(np.array([0.0, 1.0, 1.0])))
        return cost + T.log(T.nnet.softmax(x)).sum() + T.log(1 / (1 + T.exp(z))).sum()

    bptt.verify_grad(costs, [rng.normal(size=3), rng.normal(size=(2, 4))], rng=rng, mode=mode)


@pytest.mark.parametrize("build, top", [
    (lambda u: 2 / (1 + T.exp(u)), "true_div"),                 # not a reciprocal
    (lambda u: 1 / (2 + T.exp(u)), "true_div"),                 # not 1 + exp
    (lambda u: T.ones((3, 1)) / (1 + T.exp(u)), "true_div"),    # the 1 adds a dimension
    (lambda u: T.log(1 - T.exp(u)), "log"),                     # not a sigmoid
    (lambda u: T.log(2 - T.nnet.sigmoid(u)), "log"),
], ids=["numerator-2", "two-plus-exp", "ones-matrix", "log1m-exp", "log-2-minus-sigmoid"])
def test_other_formulas_are_built_as_written(build, top):
    out = build(T.vector("u"))
    assert out.owner.op.scalar_op.name == top
    assert "softplus" not in _scalar_ops(out)


def test_a_float64_one_over_a_float32_exponential_keeps_the_float64_division():
    u = T.vector("u", dtype="float32")
    out = T.constant(np.ones((), "float64")) / (1 + T.exp(u))
    assert out.dtype == "float64" and out.owner.op.scalar_op.name == "true_div"
