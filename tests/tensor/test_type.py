"""TensorType, constants, and NumPy 2 type promotion with weak Python scalars."""
import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.tensor.type import TensorConstant, TensorType, result_dtype

from ..strategies import ALL_DTYPES, assert_same, run

PYTHON_SCALARS = [True, 3, -2, 2.5]


def _numpy_result(*operands):
    """NumPy 2's own answer: the dtype of adding arrays / Python scalars."""
    with np.errstate(all="ignore"):
        return np.result_type(*[np.zeros(1, o) if isinstance(o, str) else o for o in operands]).name


@pytest.mark.parametrize("a, b", list(itertools.combinations_with_replacement(ALL_DTYPES, 2)))
def test_result_dtype_of_arrays_is_numpys(a, b):
    assert result_dtype(T.tensor(a, (None,)), T.tensor(b, (None,))) == _numpy_result(a, b)


@pytest.mark.parametrize("dtype, scalar", list(itertools.product(ALL_DTYPES, PYTHON_SCALARS)))
def test_python_scalars_are_weak(dtype, scalar):
    """int8 + 1 stays int8, float32 * 2.0 stays float32, bool + 3 is int64 (NEP 50)."""
    got = result_dtype(T.tensor(dtype, (None,)), T.as_tensor_variable(scalar))
    want = _numpy_result(dtype, scalar)
    if want == "float64" and np.dtype(dtype).kind != "f":
        want = bptt.config.floatX  # Python floats are floatX (float64 unless configured)
    assert got == want


@pytest.mark.parametrize("dtype, scalar", [("float32", 2.0), ("int8", 1), ("uint8", 3),
                                           ("int16", True), ("float32", 7)])
def test_weak_scalars_in_graphs(dtype, scalar, mode):
    x = T.tensor(dtype, (None,))
    val = np.arange(4).astype(dtype)
    outs = [x * scalar, scalar * x, x + scalar, x - scalar, scalar - x, x * (scalar * 2)]
    with np.errstate(all="ignore"):
        want = [val * scalar, scalar * val, val + scalar, val - scalar, scalar - val,
                val * (scalar * 2)]
    for k, (got, ref) in enumerate(zip(run([x], outs, [val], mode), want)):
        assert_same(got, ref, what=f"output {k}")


def test_int_true_division_is_float64():
    assert (T.ivector() / T.ivector()).dtype == "float64"
    assert (T.ivector() // T.ivector()).dtype == "int32"
    assert (T.bvector() / 2).dtype == "float64"


def test_python_int_out_of_range_raises():
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        T.bvector() + 1000
    with pytest.raises(ValueError, match="out of bounds for uint8"):
        T.tensor("uint8", (None,)) + (-1)


def test_uint_minus_python_int_wraps_as_numpy(mode):
    x = T.tensor("uint8", (None,))
    (got,) = run([x], [x - 1], [np.array([0, 5], "uint8")], mode)
    assert_same(got, np.array([0, 5], "uint8") - 1)


def test_operators_on_python_numbers_only_stay_weak():
    two = T.as_tensor_variable(2) * 3
    assert isinstance(two, TensorConstant) and two.weak and two.data == 6
    assert (T.fvector() * (T.as_tensor_variable(1.0) / 3)).dtype == "float32"
    # A NumPy function result is a NumPy scalar: strong, as in NumPy.
    assert not isinstance(T.exp(1.0), TensorConstant)


def test_tensor_type_basics():
    t = TensorType("float32", (None, 1))
    assert t == TensorType(np.float32, [None, 1]) and hash(t) == hash(TensorType("float32", (None, 1)))
    assert t != TensorType("float32", (None, None))
    assert t.ndim == 2 and t.broadcastable == (False, True)
    assert repr(t) == "Tensor(float32, (?,1))"
    with pytest.raises(TypeError, match="unsupported dtype"):
        TensorType("complex128", ())
    with pytest.raises(ValueError, match=">= 0"):
        TensorType("float64", (-1,))


def test_variable_attributes():
    x = T.tensor("int16", (2, None, 3), name="x")
    assert x.ndim == 3 and x.dtype == "int16" and x.type.shape == (2, None, 3)
    assert x.T.type.shape == (3, None, 2)
    assert x.shape.type == TensorType("int64", (3,))
    with pytest.raises(TypeError, match="cannot be iterated"):
        iter(x)
    with pytest.raises(TypeError, match="x.shape"):
        len(x)


def test_shortcuts_and_constructors():
    assert T.iscalar().type == TensorType("int32", ())
    assert T.dmatrix().type == TensorType("float64", (None, None))
    assert T.fvector().type == TensorType("float32", (None,))
    assert T.ltensor3().type == TensorType("int64", (None,) * 3)
    assert T.matrix(dtype="int8").dtype == "int8"
    assert T.matrix().dtype == bptt.config.floatX
    assert T.tensor4(shape=(1, 2, 3, 4)).type.shape == (1, 2, 3, 4)
    with pytest.raises(ValueError, match="entries"):
        T.matrix(shape=(1,))


def test_constants():
    c = T.constant([[1, 2], [3, 4]])
    assert c.type == TensorType("int64", (2, 2)) and not c.weak
    assert T.constant(1.5).dtype == bptt.config.floatX
    assert T.constant(np.float32(1.5)).dtype == "float32"
    assert T.constant(3, dtype="int8").dtype == "int8"
    assert T.constant([1, 2], ndim=3).type.shape == (1, 1, 2)
    w = T.as_tensor_variable(3)
    assert w.weak and w.dtype == "int64"
    assert T.as_tensor_variable(np.int64(3)).weak is False
    with pytest.raises(TypeError, match="cannot turn"):
        T.as_tensor_variable(object())
    with pytest.raises(TypeError, match="2-d"):
        T.as_tensor_variable(T.vector(), ndim=2)


def test_as_tensor_variable_of_a_list_of_variables_stacks(mode):
    a, b = T.scalar(), T.scalar()
    v = T.as_tensor_variable([a, b, 1.0])
    assert v.type.shape == (3,)
    (got,) = run([a, b], [v], [np.asarray(2.0), np.asarray(3.0)], mode)
    assert_same(got, np.array([2.0, 3.0, 1.0]))


@given(st.sampled_from(ALL_DTYPES), st.sampled_from(ALL_DTYPES))
def test_filter_accepts_lossless_conversions_only(src, dst):
    """Values that convert exactly are accepted, except floats into integers or
    booleans: those always need allow_downcast (a float is never truncated silently)."""
    t = TensorType(dst, (None,))
    value = np.array([0, 1], dtype=src)
    lossless = np.can_cast(src, dst, "safe") or (
        np.array_equal(value.astype(dst).astype(src), value)
        and not (np.dtype(src).kind == "f" and np.dtype(dst).kind != "f"))
    if lossless:
        assert t.filter(value).dtype == dst
    else:
        with pytest.raises(TypeError, match="lose information"):
            t.filter(value)
    assert t.filter(value, allow_downcast=True).dtype == dst


@pytest.mark.parametrize("dst", ["float64", "float32", "int64"])
def test_filter_refuses_a_complex_array_unless_downcast_is_allowed(dst):
    t = TensorType(dst, (None,))
    with pytest.raises(TypeError, match="no complex dtypes.*np.real"):
        t.filter(np.array([1 + 0j, 2 + 0j]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # NumPy's ComplexWarning would be an error here
        got = t.filter(np.array([1 + 0j, 2 + 3j]), allow_downcast=True)
    assert got.dtype == dst and got.tolist() == [1, 2]


def test_filter_checks_ndim_and_static_shape():
    t = TensorType("float64", (2, None))
    with pytest.raises(TypeError, match="2 dimension"):
        t.filter(np.zeros(3))
    with pytest.raises(ValueError, match="dimension 0 must have size 2"):
        t.filter(np.zeros((3, 1)))
    with pytest.raises(TypeError, match="expected a numpy array of dtype float64"):
        t.filter([[1.0]], strict=True)


def test_a_variable_is_true_and_a_comparison_has_no_truth_value(mode):
    # Theano's rule: `if not input: input = T.matrix()` (DeepLearningTutorials' rbm.py) keeps
    # the given variable; only the result of <, <=, >, >= refuses (a < b < c would drop a < b)
    x = T.matrix("x")
    given = x * 2
    chosen = given if given else T.matrix("unused")
    assert chosen is given and bool(T.constant(0.0)) and not (not x)
    np.testing.assert_allclose(bptt.function([x], chosen, mode=mode)(np.ones((1, 2))), [[2, 2]])
    for comparison in (x < 1, x <= 1, x > 1, x >= 1, 1 < x):
        with pytest.raises(TypeError, match="T.and_"):
            bool(comparison)
    with pytest.raises(TypeError, match="truth value of a symbolic comparison"):
        0 < x < 1  # noqa: B015  (the chained comparison under test)
    assert T.eq(x, 1) and T.lt(x, 1)   # the functions build values, not operator chains


def test_plural_constructors_follow_theano():
    x, y = T.dscalars("x", "y")
    assert (x.name, y.name, x.type) == ("x", "y", TensorType("float64", ()))
    assert [v.name for v in T.matrices("abc")] == ["a", "b", "c"]   # one name per character
    pair = T.fmatrices(2)
    assert len(pair) == 2 and pair[0].type == TensorType("float32", (None, None))
    assert T.ltensor3s("t").name == "t" and T.ltensor3s("t").type.dtype == "int64"
    assert T.ivectors("u", "w")[1].type == TensorType("int32", (None,))


def test_a_numpy_array_on_the_left_of_an_operator_gives_a_tensor(mode):
    x = T.dvector("x")
    a, xv = np.array([1.0, 2.0, 4.0]), np.array([0.5, -1.0, 3.0])
    outs = [a + x, a - x, a * x, a / x, a ** x, a < x, a @ x, np.float64(2.0) - x]
    assert all(isinstance(o, T.TensorVariable) for o in outs)
    got = bptt.function([x], outs, mode=mode)(xv)
    for g, want in zip(got, [a + xv, a - xv, a * xv, a / xv, a ** xv, a < xv, a @ xv, 2 - xv]):
        assert_same(g, want)


def test_eval_applies_default_updates_as_theano():
    """Theano's eval compiles a function, so a shared variable's default_update (a
    running average, a random stream) is applied; the value is from before it."""
    x = T.dvector("x")
    avg = bptt.shared(np.zeros(2), name="avg")
    count = bptt.shared(np.int64(0), name="count")
    avg.default_update = 0.5 * avg + 0.5 * x
    count.default_update = count + 1
    y = x * 2 + 0 * avg
    np.testing.assert_array_equal(y.eval({x: [2.0, 4.0]}), [4.0, 8.0])
    np.testing.assert_array_equal(avg.get_value(), [1.0, 2.0])
    # an update that reads another shared variable with a default update applies both
    avg.default_update = avg + count
    (x + avg).eval({x: [0.0, 0.0]})
    np.testing.assert_array_equal(avg.get_value(), [1.0, 2.0])   # count was 0
    assert count.get_value() == 1
    draws = bptt.RandomStreams(3).uniform((3,))
    assert not np.array_equal(draws.eval(), draws.eval())   # the stream advances


def test_eval_gives_the_value_with_shared_values_and_given_inputs():
    x, v = T.dscalars("x", "v")
    W = bptt.shared(np.array([[1.0, 2.0], [3.0, 4.0]]), name="W")
    assert (x + v).eval({x: 16.3, v: 12.1}) == pytest.approx(28.4)
    np.testing.assert_allclose((W * 2).eval(), [[2, 4], [6, 8]])
    u = T.dvector("u")
    np.testing.assert_allclose(T.dot(W, u).eval({u: [1, 1]}), [3, 7])   # a list converts
    hs, _ = bptt.scan(lambda a, h: a + h, sequences=u, outputs_info=T.constant(0.0))
    np.testing.assert_allclose(hs.eval({u: np.arange(4.0)}), [0, 1, 3, 6])
    with pytest.raises(bptt.MissingInputError, match="'u'.*u: value"):
        T.dot(W, u).eval()
    f = T.fscalar("f")
    with pytest.raises(TypeError, match="lose information.*np.asarray"):
        (f * 2).eval({f: 0.1})
