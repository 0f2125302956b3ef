"""Forward mode: `bptt.Rop` against finite differences and against `Lop`."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.graph.basic import Apply
from bptt.graph.op import Op
from bptt.grad import Lop, Rop
from tests.conftest import MODES
from tests.strategies import arrays, broadcastable_shapes, check_rop

#: hypothesis tests take the mode as a parameter (a fixture would be shared by examples)
each_mode = pytest.mark.parametrize("mode", MODES)


def _model():
    """Two outputs of three inputs, through dot, elemwise, reductions and dimshuffle."""
    x, W, b = T.dvector("x"), T.dmatrix("W"), T.dvector("b")
    h = T.tanh(T.dot(W, x) + b) * (x ** 2).sum()
    y = T.exp(W.T * 0.5).sum(axis=1) * T.sigmoid(x)
    return [x, W, b], [h, y]


_compiled = {}


def _function(mode):
    """One compiled function of (inputs, tangents, cotangents) returning the model's
    outputs, their Rop and their Lop; graphs have unknown shapes, so it compiles once."""
    if mode not in _compiled:
        ins, outs = _model()
        vs = [i.type() for i in ins]
        us = [o.type() for o in outs]
        jvp = Rop(outs, ins, vs)
        vjp = Lop(outs, ins, us)
        _compiled[mode] = bptt.function(ins + vs + us, outs + jvp + vjp, mode=mode)
    return _compiled[mode]


point = st.tuples(st.integers(1, 4), st.integers(1, 4)).flatmap(lambda mn: st.tuples(
    arrays("float64", (mn[1],)), arrays("float64", mn), arrays("float64", (mn[0],)),
    arrays("float64", (mn[1],)), arrays("float64", mn), arrays("float64", (mn[0],)),
    st.integers(0, 2**32 - 1)))


@each_mode
@given(pt=point)
def test_rop_matches_finite_differences_and_lop(mode, pt):
    fn = _function(mode)
    x, W, b, vx, vW, vb, seed = pt
    ins, tangent = [x, W, b], [vx, vW, vb]
    rng = np.random.default_rng(seed)
    us = [rng.standard_normal(W.shape[0]), rng.standard_normal(x.shape)]
    _, _, jh, jy, gx, gW, gb = fn(*ins, *tangent, *us)
    eps = 1e-6
    hi = fn(*[a + eps * v for a, v in zip(ins, tangent)], *tangent, *us)[:2]
    lo = fn(*[a - eps * v for a, v in zip(ins, tangent)], *tangent, *us)[:2]
    for k, (j, h, l_) in enumerate(zip([jh, jy], hi, lo)):
        assert j.dtype == np.float64 and j.shape == h.shape, f"output {k}"
        np.testing.assert_allclose(j, (h - l_) / (2 * eps), rtol=1e-5, atol=1e-5,
                                   err_msg=f"Rop of output {k} vs finite differences")
    # <u, J v> == <J^T u, v>
    lhs = float((us[0] * jh).sum() + (us[1] * jy).sum())
    rhs = sum(float((g * v).sum()) for g, v in zip([gx, gW, gb], tangent))
    assert abs(lhs - rhs) <= 1e-9 * (1 + abs(lhs) + abs(rhs))


@each_mode
@given(shapes=broadcastable_shapes((2, 2)), data=st.data())
def test_rop_of_broadcast_elemwise_has_output_shape(mode, shapes, data):
    """Tangents of inputs that broadcast (possibly only at run time) fill the output."""
    sa, sb = shapes
    a, b = T.dmatrix("a"), T.dmatrix("b")
    va, vb = T.dmatrix("va"), T.dmatrix("vb")
    f = bptt.function([a, b, va, vb], [Rop(a * b + a, a, va), Rop(a * b - a, b, vb)],
                      mode=mode)
    av, bv = data.draw(arrays("float64", sa)), data.draw(arrays("float64", sb))
    ta, tb = data.draw(arrays("float64", sa)), data.draw(arrays("float64", sb))
    t1, t2 = f(av, bv, ta, tb)
    full = np.broadcast_shapes(sa, sb)
    np.testing.assert_allclose(t1, np.broadcast_to(ta * bv + ta, full))
    np.testing.assert_allclose(t2, np.broadcast_to(av * tb, full))


def test_rop_runtime_broadcast_of_length_one_vector(mode):
    a, b, v = T.dvector("a"), T.dvector("b"), T.dvector("v")
    f = bptt.function([a, b, v], Rop(a + b, a, v), mode=mode)
    out = f(np.ones(1), np.arange(5.0), np.array([2.0]))
    np.testing.assert_array_equal(out, np.full(5, 2.0))


def test_rop_through_reshape_join_and_max(mode):
    check_rop(lambda x: [T.concatenate([T.reshape(x, (-1,)), x[0]]), x.max(axis=0)],
              [np.arange(6.0).reshape(2, 3) ** 1.5], mode)


def test_single_variables_give_a_single_result_and_lists_a_list():
    x, v = T.dvector(), T.dvector()
    assert isinstance(Rop(T.exp(x), x, v), T.TensorVariable)
    out = Rop([T.exp(x)], [x], [v])
    assert isinstance(out, list) and len(out) == 1


def test_float32_stays_float32(mode):
    x, v = T.fvector("x"), T.fvector("v")
    j = Rop(T.tanh(x) * 2.0, x, v)
    assert j.dtype == "float32"
    out = bptt.function([x, v], j, mode=mode)(np.ones(3, "float32"), np.ones(3, "float32"))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, 2 * (1 - np.tanh(1.0) ** 2), rtol=1e-6)


def test_eval_point_is_cast_to_wrt_dtype_and_none_is_zero(mode):
    x, y = T.dvector("x"), T.dvector("y")
    v = T.fvector("v")
    j = Rop(x * y, [x, y], [v, None])
    assert j.dtype == "float64"
    out = bptt.function([x, y, v], j, mode=mode)(np.ones(2), np.array([3.0, 4.0]),
                                                 np.array([1.0, 2.0], "float32"))
    np.testing.assert_array_equal(out, [3.0, 8.0])


def test_eval_point_with_wrong_ndim_is_a_type_error():
    x = T.dvector("x")
    with pytest.raises(TypeError, match=r"eval_points\[0\].*2 dimension.*'x'"):
        Rop(T.exp(x), x, T.dmatrix())


def test_length_mismatch_is_a_value_error():
    x = T.dvector("x")
    with pytest.raises(ValueError, match="1 wrt variables but 2 eval points"):
        Rop(x, [x], [x, x])


def test_disconnected_output(mode):
    x, y, v = T.dvector("x"), T.dvector("y"), T.dvector("v")
    with pytest.raises(bptt.DisconnectedInputError, match=r"f\[0\], output 0 of exp.*does not depend"):
        Rop(T.exp(y), x, v)
    with pytest.warns(UserWarning, match="does not depend") as record:
        zero = Rop(T.exp(y), x, v, disconnected_outputs="warn")
    assert record[0].filename == __file__   # the warning names the caller's line
    out = bptt.function([y], zero, mode=mode)(np.arange(3.0))
    np.testing.assert_array_equal(out, np.zeros(3))
    assert Rop(T.exp(y), x, v, disconnected_outputs="ignore", return_disconnected="None") is None
    d = Rop(T.exp(y), x, v, disconnected_outputs="ignore", return_disconnected="Disconnected")
    assert repr(d.type) == "Disconnected"


def test_output_reached_only_through_integers_has_zero_tangent(mode):
    x, v = T.dvector("x"), T.dvector("v")
    j = Rop(T.cast(T.argmax(x), "float64") * 2.0, x, v)
    out = bptt.function([x, v], j, mode=mode, on_unused_input="ignore")(np.array([1.0, 3.0]), np.ones(2))
    assert out == 0.0


class _NoRop(Op):
    """A copy op with a gradient but no forward-mode rule."""

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0].copy()

    def L_op(self, inputs, outputs, output_grads):
        return [output_grads[0]]


def test_op_without_r_op_is_named_in_the_error():
    x, v = T.dvector("x"), T.dvector("v")
    y = T.exp(_NoRop()(x))
    with pytest.raises(NotImplementedError, match="_NoRop.*has no R_op"):
        Rop(y, x, v)


def test_rop_is_exported_everywhere():
    import bptt.gradient
    from bptt.grad import Rop as grad_rop

    assert bptt.Rop is grad_rop is bptt.gradient.Rop is Rop
