"""Reverse mode: the semantics of `bptt.grad` and `bptt.Lop`."""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.grad import Lop
from bptt.graph.gradient_types import DisconnectedType
from tests.conftest import MODES
from tests.strategies import arrays

each_mode = pytest.mark.parametrize("mode", MODES)


def _run(inputs, outputs, values, mode):
    return bptt.function(inputs, outputs, mode=mode, on_unused_input="ignore")(*values)


# -- values -------------------------------------------------------------------------

_compiled = {}


def _multi_path(mode):
    """d/dx of sum(x*x + sin(x) + x) + sum(W @ x): x reaches the cost along five paths."""
    if mode not in _compiled:
        x, W = T.dvector("x"), T.dmatrix("W")
        cost = (x * x + T.sin(x) + x).sum() + T.dot(W, x).sum()
        _compiled[mode] = bptt.function([x, W], bptt.grad(cost, [x, W]), mode=mode)
    return _compiled[mode]


@each_mode
@given(data=st.data(), m=st.integers(1, 4), n=st.integers(1, 4))
def test_gradients_of_several_paths_are_summed(mode, data, m, n):
    x = data.draw(arrays("float64", (n,)))
    W = data.draw(arrays("float64", (m, n)))
    gx, gW = _multi_path(mode)(x, W)
    np.testing.assert_allclose(gx, 2 * x + np.cos(x) + 1 + W.sum(axis=0), rtol=1e-12)
    np.testing.assert_allclose(gW, np.broadcast_to(x, (m, n)), rtol=1e-12)


def test_runtime_broadcast_is_unbroadcast(mode):
    """A (None,) input that is length 1 at run time gets a length-1 gradient."""
    a, b = T.dvector("a"), T.dvector("b")
    M = T.dmatrix("M")
    cost = ((a + b) ** 2).sum() + (M * b).sum()
    ga, gM = _run([a, b, M], bptt.grad(cost, [a, M]),
                  [np.array([2.0]), np.arange(5.0), np.ones((3, 1))], mode)
    assert ga.shape == (1,) and gM.shape == (3, 1)
    np.testing.assert_allclose(ga, [(2 * (2.0 + np.arange(5.0))).sum()])
    np.testing.assert_allclose(gM, np.full((3, 1), np.arange(5.0).sum()))


def test_gradient_dtype_is_input_dtype(mode):
    x = T.fvector("x")
    y = T.dvector("y")
    cost = (T.cast(x, "float64") * y).sum() + (x * x).sum()
    gx, gy = bptt.grad(cost, [x, y])
    assert gx.dtype == "float32" and gy.dtype == "float64"
    vx = np.array([1.0, 2.0], "float32")
    ox, oy = _run([x, y], [gx, gy], [vx, np.array([3.0, 4.0])], mode)
    assert ox.dtype == np.float32 and oy.dtype == np.float64
    np.testing.assert_allclose(ox, [3.0 + 2.0, 4.0 + 4.0])


def test_integer_wrt_gets_float_zeros(mode):
    x, i = T.dvector("x"), T.lvector("i")
    cost = (x * i).sum()
    gi = bptt.grad(cost, i)
    assert gi.dtype == bptt.config.floatX
    out = _run([x, i], gi, [np.ones(3), np.arange(3)], mode)
    assert out.dtype == np.dtype(bptt.config.floatX) and out.shape == (3,)
    np.testing.assert_array_equal(out, np.zeros(3))


def test_consider_constant_blocks_a_path(mode):
    x = T.dvector("x")
    c = x * 2.0
    cost = (c * x).sum()
    g_free = bptt.grad(cost, x)
    g_const = bptt.grad(cost, x, consider_constant=[c])
    v = np.array([1.0, -2.0])
    free, const = _run([x], [g_free, g_const], [v], mode)
    np.testing.assert_allclose(free, 4 * v)
    np.testing.assert_allclose(const, 2 * v)


def test_known_grads_seed_the_sweep(mode):
    x, g = T.dvector("x"), T.dvector("g")
    y = T.exp(x)
    only_known = bptt.grad(None, x, known_grads={y: g})
    with_cost = bptt.grad(y.sum(), x, known_grads={y: g})
    v, gv = np.array([0.0, 1.0]), np.array([2.0, 3.0])
    a, b = _run([x, g], [only_known, with_cost], [v, gv], mode)
    np.testing.assert_allclose(a, gv * np.exp(v))
    np.testing.assert_allclose(b, (gv + 1) * np.exp(v))


def test_lop_is_the_vector_jacobian_product(mode):
    x, W, u = T.dvector("x"), T.dmatrix("W"), T.dvector("u")
    y = T.tanh(T.dot(W, x))
    gx, gW = Lop(y, [x, W], u)
    xv, Wv, uv = np.array([0.5, -1.0, 2.0]), np.arange(6.0).reshape(2, 3) / 6, np.array([1.0, -2.0])
    ox, oW = _run([x, W, u], [gx, gW], [xv, Wv, uv], mode)
    d = uv * (1 - np.tanh(Wv @ xv) ** 2)
    np.testing.assert_allclose(ox, Wv.T @ d)
    np.testing.assert_allclose(oW, np.outer(d, xv))


def test_lop_with_several_outputs_sums_their_pullbacks(mode):
    x, u1, u2 = T.dvector("x"), T.dvector("u1"), T.dscalar("u2")
    (gx,) = Lop([x * 3.0, x.sum()], [x], [u1, u2])
    out = _run([x, u1, u2], gx, [np.zeros(2), np.array([1.0, 2.0]), np.array(5.0)], mode)
    np.testing.assert_allclose(out, [8.0, 11.0])


# -- disconnected inputs ------------------------------------------------------------

def test_disconnected_input_raises_naming_it():
    x, y = T.dvector("x"), T.dvector("lonely")
    with pytest.raises(bptt.DisconnectedInputError, match=r"wrt\[1\], 'lonely'"):
        bptt.grad(x.sum(), [x, y])


def test_disconnected_input_warns_naming_it():
    x, y = T.dvector("x"), T.dvector("lonely")
    with pytest.warns(UserWarning, match="'lonely'") as record:
        bptt.grad(x.sum(), [x, y], disconnected_inputs="warn")
    assert record[0].filename == __file__   # the warning names the caller's line


def test_disconnected_input_ignored_silently():
    x, y = T.dvector("x"), T.dvector("lonely")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bptt.grad(x.sum(), [x, y], disconnected_inputs="ignore")


def test_bad_disconnected_inputs_value():
    x = T.dvector("x")
    with pytest.raises(ValueError, match="disconnected_inputs"):
        bptt.grad(x.sum(), x, disconnected_inputs="sometimes")


def test_return_disconnected_zero(mode):
    x, y = T.dvector("x"), T.dmatrix("y")
    gy = bptt.grad(x.sum(), y, disconnected_inputs="ignore", return_disconnected="zero")
    out = _run([x, y], gy, [np.ones(2), np.ones((2, 3))], mode)
    assert out.shape == (2, 3) and out.dtype == np.float64
    np.testing.assert_array_equal(out, 0)


def test_return_disconnected_none_and_disconnected():
    x, y = T.dvector("x"), T.dvector("y")
    gx, gy = bptt.grad(x.sum(), [x, y], disconnected_inputs="ignore", return_disconnected="None")
    assert gx is not None and gy is None
    gy = bptt.grad(x.sum(), y, disconnected_inputs="ignore", return_disconnected="Disconnected")
    assert isinstance(gy.type, DisconnectedType)


def test_input_blocked_by_consider_constant_is_disconnected():
    x = T.dvector("x")
    c = T.exp(x)
    with pytest.raises(bptt.DisconnectedInputError, match="'x'"):
        bptt.grad(c.sum(), x, consider_constant=[c])


# -- bad costs ------------------------------------------------------------------------

def test_non_scalar_cost_is_a_type_error():
    x = T.dvector("x")
    with pytest.raises(TypeError, match="scalar"):
        bptt.grad(x * 2, x)


def test_integer_cost_is_a_type_error():
    x = T.dvector("x")
    with pytest.raises(TypeError, match="float"):
        bptt.grad(T.argmax(x), x)


def test_no_cost_and_no_known_grads_is_an_error():
    x = T.dvector("x")
    with pytest.raises(ValueError, match="known_grads"):
        bptt.grad(None, x)


def test_wrt_must_be_variables():
    x = T.dvector("x")
    with pytest.raises(TypeError, match="wrt"):
        bptt.grad(x.sum(), [np.ones(2)])


def test_single_wrt_gives_a_single_gradient_and_a_list_a_list():
    x = T.dvector("x")
    assert isinstance(bptt.grad(x.sum(), x), T.TensorVariable)
    assert isinstance(bptt.grad(x.sum(), [x]), list)


def test_undefined_gradient_propagates_to_wrt():
    """A gradient that does not exist upstream is an error at wrt, not a silent zero."""
    from bptt import NullTypeGradError

    W = T.vector("W")
    srng = bptt.RandomStreams(0)
    sample = srng.binomial(size=W.shape, n=1, p=T.nnet.sigmoid(W), dtype="float64")
    with pytest.raises(NullTypeGradError, match="gradient with respect to 'W'.*undefined"):
        bptt.grad(sample.sum(), W)
    # A path around the sampler still has a gradient: only connected inputs are undefined.
    b = T.vector("b")
    g = bptt.grad((sample * 0 + b).sum(), b)
    f = bptt.function([W, b], g, mode="PY")
    np.testing.assert_array_equal(f(np.zeros(3), np.ones(3)), np.ones(3))
