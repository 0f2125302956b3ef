"""Elementwise ops: values against NumPy for every dtype, broadcasting, gradients, R_op."""
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.tensor import scalar_ops as so
from bptt.tensor.elemwise import Elemwise, broadcast_static_shape
from bptt.tensor.type import TensorType, upgrade_to_float

from ..strategies import (ALL_DTYPES, FLOAT_DTYPES, arrays, assert_same, broadcastable_shapes,
                          check_infer_shape, check_rop, elements, run, shapes)


def _as_float(x):
    return x.astype(upgrade_to_float(x.dtype))


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _identity_on_ints(f):
    return lambda x: f(x) if x.dtype.kind == "f" else x


# name -> (bptt function, NumPy reference, dtype kinds it accepts)
UNARY = {
    "neg": (T.neg, np.negative, "iuf"),
    "abs": (T.abs, np.abs, "biuf"),
    "exp": (T.exp, lambda x: np.exp(_as_float(x)), "biuf"),
    "log": (T.log, lambda x: np.log(_as_float(x)), "biuf"),
    "log1p": (T.log1p, lambda x: np.log1p(_as_float(x)), "biuf"),
    "expm1": (T.expm1, lambda x: np.expm1(_as_float(x)), "biuf"),
    "sqrt": (T.sqrt, lambda x: np.sqrt(_as_float(x)), "biuf"),
    "tanh": (T.tanh, lambda x: np.tanh(_as_float(x)), "biuf"),
    "sin": (T.sin, lambda x: np.sin(_as_float(x)), "biuf"),
    "cos": (T.cos, lambda x: np.cos(_as_float(x)), "biuf"),
    "sigmoid": (T.sigmoid, lambda x: _sigmoid(_as_float(x)), "biuf"),
    "softplus": (T.softplus, lambda x: np.logaddexp(0, _as_float(x)), "biuf"),
    "floor": (T.floor, _identity_on_ints(np.floor), "biuf"),
    "ceil": (T.ceil, _identity_on_ints(np.ceil), "biuf"),
    "round": (T.round, _identity_on_ints(np.round), "biuf"),
    "sgn": (T.sgn, np.sign, "iuf"),
    "invert": (T.invert, np.invert, "biu"),
    "isnan": (T.isnan, np.isnan, "biuf"),
    "isinf": (T.isinf, np.isinf, "biuf"),
    "copy": (T.tensor_copy, np.copy, "biuf"),
    "sqr": (T.sqr, lambda x: x * x, "biuf"),
    "logical_not": (T.logical_not, np.logical_not, "biuf"),
}

# name -> (bptt function, NumPy reference, dtype kinds of the promoted inputs)
BINARY = {
    "add": (T.add, np.add, "biuf"),
    "sub": (T.sub, np.subtract, "iuf"),
    "mul": (T.mul, np.multiply, "biuf"),
    "true_div": (T.true_div, np.true_divide, "biuf"),
    "int_div": (T.int_div, np.floor_divide, "biuf"),
    "mod": (T.mod, np.mod, "biuf"),
    "maximum": (T.maximum, np.maximum, "biuf"),
    "minimum": (T.minimum, np.minimum, "biuf"),
    "lt": (T.lt, np.less, "biuf"),
    "le": (T.le, np.less_equal, "biuf"),
    "gt": (T.gt, np.greater, "biuf"),
    "ge": (T.ge, np.greater_equal, "biuf"),
    "eq": (T.eq, np.equal, "biuf"),
    "neq": (T.neq, np.not_equal, "biuf"),
    "and": (T.and_, np.bitwise_and, "biu"),
    "or": (T.or_, np.bitwise_or, "biu"),
    "xor": (T.xor, np.bitwise_xor, "biu"),
    "logical_and": (T.logical_and, np.logical_and, "biuf"),
    "logical_or": (T.logical_or, np.logical_or, "biuf"),
    "logical_xor": (T.logical_xor, np.logical_xor, "biuf"),
}

# Compile time dominates these tests: numba spends ~0.1 s of CPU per 1-d array statement
# (~0.15 s for 2-d, almost nothing for 0-d). Graphs are therefore 1-d unless the test is
# about more dimensions (run-time broadcasting needs only a size-1 dimension), and the value
# grids use the dtypes whose numba code differs: bool, a small integer (numba widens
# small integers), a large unsigned one (read as negative by some numba functions) and
# both floats (typed literals). Mixed dtypes are converted to the computation dtype
# first, so one mixed test covers that path; derived functions are tested apart.
VALUE_DTYPES = ("bool", "int8", "uint64", "float32", "float64")
# Float-valued ops on integers all go through the same conversion: exp and sigmoid test it.
FLOAT_VALUED = ("log", "log1p", "expm1", "sqrt", "tanh", "sin", "cos", "softplus")
DERIVED = ("sqr", "logical_not", "sub", "logical_and", "logical_or", "logical_xor")
# Comparisons are all one numba operator each: the full set for one float and one int.
FULL_COMPARISONS = ("int8", "float64")


def _unary_names(dtype):
    kind = np.dtype(dtype).kind
    return [n for n, (_, _, kinds) in UNARY.items()
            if kind in kinds and n not in DERIVED and (kind == "f" or n not in FLOAT_VALUED)]


def _binary_names(a, b, derived=False):
    dtype = np.result_type(a, b)
    names = [n for n, (_, _, kinds) in BINARY.items() if dtype.kind in kinds]
    if dtype.name not in FULL_COMPARISONS:
        names = [n for n in names if n not in ("le", "gt", "ge", "neq")]
    return [n for n in names if derived or n not in DERIVED]


def _check_all(names, got, want, scale=1.0):
    for name, g, w in zip(names, got, want):
        assert_same(g, w, scale=scale, what=name)


@pytest.mark.parametrize("dtype", VALUE_DTYPES)
@given(data=st.data())
def test_unary_ops_match_numpy(dtype, mode, data):
    x = T.tensor(dtype, (None,))
    names = _unary_names(dtype)
    val = data.draw(arrays(dtype, shapes(ndim=1), domain="wide" if dtype[0] in "iu" else "real"))
    got = run([x], [UNARY[n][0](x) for n in names], [val], mode)
    with np.errstate(all="ignore"):
        _check_all(names, got, [UNARY[n][1](val) for n in names])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_unary_ops_on_special_floats(dtype, mode):
    x = T.tensor(dtype, (None,))
    val = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -1e30, 1e-30, 88.8, -745.5], dtype)
    names = _unary_names(dtype)
    got = run([x], [UNARY[n][0](x) for n in names], [val], mode)
    with np.errstate(all="ignore"):
        _check_all(names, got, [UNARY[n][1](val) for n in names])


@pytest.mark.parametrize("dtype", VALUE_DTYPES)
@given(data=st.data())
def test_binary_ops_match_numpy(dtype, mode, data):
    a, b = T.tensor(dtype, (None,)), T.tensor(dtype, (None,))
    sa, sb = data.draw(broadcastable_shapes((1, 1), min_side=0))
    va = data.draw(arrays(dtype, sa, domain="wide" if dtype[0] in "iu" else "real"))
    vb = data.draw(arrays(dtype, sb))  # small values: zeros and -1 among them
    names = _binary_names(dtype, dtype)
    got = run([a, b], [BINARY[n][0](a, b) for n in names], [va, vb], mode)
    with np.errstate(all="ignore"):
        _check_all(names, got, [BINARY[n][1](va, vb) for n in names])


@given(data=st.data())
def test_broadcasting_of_more_dimensions(mode, data):
    """Static shapes unknown: size-1 dimensions broadcast at run time, and so do
    missing leading dimensions and 0-d operands."""
    a, b, c = T.tensor("float32", (None, None)), T.fvector(), T.fscalar()
    sa, sb = data.draw(broadcastable_shapes((2, 1), min_side=0))
    va, vb = data.draw(arrays("float32", sa)), data.draw(arrays("float32", sb))
    vc = np.asarray(data.draw(elements("float32")), "float32")
    got = run([a, b, c], [a * b + c, T.lt(b, a), T.maximum(c, a)], [va, vb, vc], mode)
    _check_all(["a * b + c", "b < a", "maximum"], got, [va * vb + vc, vb < va, np.maximum(vc, va)])


@pytest.mark.parametrize("da, db", [("int8", "uint8"), ("uint64", "int64"), ("int32", "float32"),
                                    ("bool", "int8")])
@given(data=st.data())
def test_mixed_dtypes_and_derived_ops_match_numpy(da, db, mode, data):
    """Inputs are converted to NumPy's promoted dtype; ``a - b`` negates in that dtype."""
    a, b = T.tensor(da, (None,)), T.tensor(db, (None,))
    sa, sb = data.draw(broadcastable_shapes((1, 1), min_side=0))
    va = data.draw(arrays(da, sa, domain="wide" if da[0] in "iu" else "real"))
    vb = data.draw(arrays(db, sb, domain="wide" if db[0] in "iu" else "real"))
    names = [n for n in ("add", "sub", "true_div", "lt", "logical_and", "logical_xor")
             if n in _binary_names(da, db, derived=True)]
    outs = [BINARY[n][0](a, b) for n in names] + [T.sqr(a), T.logical_not(b)]
    got = run([a, b], outs, [va, vb], mode)
    with np.errstate(all="ignore"):
        want = [BINARY[n][1](va, vb) for n in names] + [va * va, np.logical_not(vb)]
    _check_all(names + ["sqr", "logical_not"], got, want)


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint16", "float32", "float64"])
@given(data=st.data())
def test_pow_matches_numpy(dtype, mode, data):
    a, b = T.tensor(dtype, (None,)), T.tensor(dtype, (None,))
    shape = data.draw(shapes(ndim=1))
    va = data.draw(arrays(dtype, shape, domain="real"))
    vb = data.draw(arrays(dtype, shape, domain="nonneg"))
    got = run([a, b], [a ** b, a ** 2, 2 ** b], [va, vb], mode)
    with np.errstate(all="ignore"):
        _check_all(["a**b", "a**2", "2**b"], got, [va ** vb, va ** 2, 2 ** vb])


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_integer_division_corner_cases(dtype, mode):
    """Division and modulo by 0 give 0 and MIN // -1 wraps, as NumPy; MIN % -1 is 0
    (numba would trap on the machine instruction)."""
    a, b = T.tensor(dtype, (None,)), T.tensor(dtype, (None,))
    lo = np.iinfo(dtype).min
    va, vb = np.array([7, -7, lo, lo, lo, 0], dtype), np.array([0, 0, -1, 1, 3, -1], dtype)
    got = run([a, b], [a // b, a % b], [va, vb], mode)
    with np.errstate(all="ignore"):
        _check_all(["//", "%"], got, [va // vb, va % vb])
    sa, sb = T.tensor(dtype, ()), T.tensor(dtype, ())
    # 0-d operands are numba scalars, whose arithmetic numba widens: mix them with arrays.
    mixed = bptt.function([a, sb], [a // sb, a % sb, sb // a, sb % a, sb - a, -sb * a,
                                    T.switch(a > 0, sb, a)], mode=mode)
    for y in [-1, 0, 3, lo]:
        y = np.asarray(y, dtype)
        with np.errstate(all="ignore"):
            want = [va // y, va % y, y // va, y % va, y - va, -y * va, np.where(va > 0, y, va)]
        _check_all(["a // s", "a % s", "s // a", "s % a", "s - a", "-s * a", "switch"],
                   mixed(va, y), want)
    for x, y in [(lo, -1), (5, 0), (-5, 0), (-7, 2)]:
        got = run([sa, sb], [sa // sb, sa % sb], [np.asarray(x, dtype), np.asarray(y, dtype)], mode)
        with np.errstate(all="ignore"):
            want = [np.floor_divide(np.asarray(x, dtype), np.asarray(y, dtype)),
                    np.mod(np.asarray(x, dtype), np.asarray(y, dtype))]
        _check_all(["scalar //", "scalar %"], got, want)


@pytest.mark.parametrize("ndim", [0, 1])
def test_negative_integer_power_raises(ndim, mode):
    a, b = T.tensor("int32", (None,) * ndim), T.tensor("int32", (None,) * ndim)
    f = bptt.function([a, b], a ** b, mode=mode)
    assert_same(f(np.full((2,) * ndim, 3, "int32"), np.full((2,) * ndim, 2, "int32")),
                np.full((2,) * ndim, 9, "int32"))
    with pytest.raises(ValueError, match="negative integer powers"):
        f(np.full((2,) * ndim, 3, "int32"), np.full((2,) * ndim, -1, "int32"))


@given(data=st.data())
def test_switch_matches_numpy(mode, data):
    c = T.tensor("bool", (None,))
    a, b = T.fvector(), T.fvector()
    s_c, s_a, s_b = data.draw(broadcastable_shapes((1, 1, 1)))
    vc, va, vb = (data.draw(arrays(dt, s)) for dt, s in
                  [("bool", s_c), ("float32", s_a), ("float32", s_b)])
    ic = T.tensor("int8", (None,))
    vi = data.draw(arrays("int8", s_a))
    sc = T.scalar(dtype="bool")
    vs = np.asarray(data.draw(st.booleans()))
    outs = [T.switch(c, a, b), T.switch(ic, a, 0), T.switch(sc, 2, a)]
    got = run([c, a, b, ic, sc], outs, [vc, va, vb, vi, vs], mode)
    want = [np.where(vc, va, vb), np.where(vi, va, np.float32(0)), np.where(vs, np.float32(2), va)]
    _check_all(["switch", "int condition", "scalar condition"], got, want)


@pytest.mark.parametrize("src", ["bool", "int8", "uint64", "float32", "float64"])
@given(data=st.data())
def test_cast_to_every_dtype_matches_astype(src, mode, data):
    x = T.tensor(src, (None,))
    s = T.tensor(src, ())
    domain = "wide" if src[0] in "iu" else "real"
    val = data.draw(arrays(src, shapes(ndim=1), domain=domain))
    sval = np.asarray(data.draw(elements(src, domain)), dtype=src)
    scalar_dsts = ["bool", "int8", "uint16", "int64", "float32"]
    outs = [T.cast(x, d) for d in ALL_DTYPES] + [T.cast(s, d) for d in scalar_dsts]
    got = run([x, s], outs, [val, sval], mode)
    with np.errstate(all="ignore"):
        want = [val.astype(d) for d in ALL_DTYPES] + [sval.astype(d) for d in scalar_dsts]
    _check_all([f"cast to {d}" for d in list(ALL_DTYPES) + scalar_dsts], got, want)


def test_cast_of_nan_to_bool_is_true(mode):
    x = T.dvector()
    (got,) = run([x], [x.astype("bool")], [np.array([0.0, np.nan, -0.0, 2.5])], mode)
    assert_same(got, np.array([False, True, False, True]))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "float32", "bool"])
@given(data=st.data())
def test_scalar_results_keep_their_dtype(dtype, mode, data):
    """0-d results are numba scalars; numba widens their arithmetic, bptt must not."""
    a, b = T.tensor(dtype, ()), T.tensor(dtype, ())
    va, vb = (np.asarray(data.draw(elements(dtype, "wide" if dtype[0] in "iu" else "real")),
                         dtype=dtype) for _ in range(2))
    names = [n for n in _binary_names(dtype, dtype) if n not in ("lt", "le", "gt", "ge")]
    outs = [BINARY[n][0](a, b) for n in names]
    # Chains make widened intermediates visible in the final result.
    outs += [BINARY[n][0](BINARY[n][0](a, b), b) for n in ("add", "mul") if n in names]
    got = run([a, b], outs, [va, vb], mode)
    with np.errstate(all="ignore"):
        want = [BINARY[n][1](va, vb) for n in names]
        want += [BINARY[n][1](BINARY[n][1](va, vb), vb) for n in ("add", "mul") if n in names]
    _check_all(names + ["chain"] * 2, got, want)


# -- gradients ---------------------------------------------------------------

# domain -> unary functions differentiable everywhere in it
UNARY_GRAD_GROUPS = {
    "nonzero": ["neg", "abs", "exp", "tanh", "sin", "cos", "sigmoid", "softplus", "expm1",
                "copy", "sqr"],
    "positive": ["log", "sqrt", "log1p"],
    "offgrid": ["floor", "ceil", "round", "sgn"],     # never on a step: derivative 0
}


def _verify_each(funs, names, pt, mode):
    """verify_grad of all `funs` at once (one compilation); on failure, find which."""
    try:
        bptt.verify_grad(lambda *xs: [f(*xs) for f in funs], pt, mode=mode)
    except bptt.GradientError:
        for f, name in zip(funs, names):
            try:
                bptt.verify_grad(f, pt, mode=mode)
            except bptt.GradientError as exc:
                raise AssertionError(f"gradient of {name} is wrong: {exc}") from exc
        raise


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("domain", list(UNARY_GRAD_GROUPS))
@given(data=st.data())
def test_unary_gradients(domain, dtype, mode, data):
    names = UNARY_GRAD_GROUPS[domain]
    val = data.draw(arrays(dtype, shapes(ndim=1, min_side=1, max_side=5), domain=domain))
    _verify_each([UNARY[n][0] for n in names], names, [val], mode)


# (names, domain of a, domain of b): each function smooth on that domain
BINARY_GRAD_GROUPS = [
    (["add", "sub", "mul"], "real", "real"),
    (["true_div"], "real", "nonzero"),
    (["maximum", "minimum"], "grid", "offgrid"),
]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("group", range(len(BINARY_GRAD_GROUPS)))
@given(data=st.data())
def test_binary_gradients_with_runtime_broadcasting(group, dtype, mode, data):
    """Inputs have unknown static shapes; size-1 dimensions broadcast at run time and
    their gradients are summed back (SumTo)."""
    names, dom_a, dom_b = BINARY_GRAD_GROUPS[group]
    sa, sb = data.draw(broadcastable_shapes((1, 1), max_side=5))
    pt = [data.draw(arrays(dtype, sa, domain=dom_a)), data.draw(arrays(dtype, sb, domain=dom_b))]
    _verify_each([BINARY[n][0] for n in names], names, pt, mode)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@given(data=st.data())
def test_pow_and_mod_gradients(dtype, mode, data):
    sa, sb = data.draw(broadcastable_shapes((1, 1), max_side=5))
    a = data.draw(arrays(dtype, sa, domain="positive"))
    b = data.draw(arrays(dtype, sb, domain="nonzero"))
    q = a / b
    assume(np.all(np.abs(q - np.round(q)) > 0.05))    # mod jumps where a / b is an integer
    _verify_each([T.pow, T.mod, lambda x, y: x ** 2 + 3 ** y], ["pow", "mod", "pow consts"],
                 [a, b], mode)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@given(data=st.data())
def test_switch_and_clip_gradients(dtype, mode, data):
    """Conditions come from grid values compared with an off-grid threshold, so no
    finite-difference step flips them (and no array constant changes the code)."""
    sa, sb = data.draw(broadcastable_shapes((1, 1), max_side=5))
    pt = [data.draw(arrays(dtype, sa, domain="grid")), data.draw(arrays(dtype, sb, domain="grid"))]
    _verify_each([lambda a, b: T.switch(T.gt(b, 0.125), a, b),
                  lambda a, b: T.clip(a, -1.125, 0.875) * b,
                  lambda a, b: T.switch(T.gt(a, 0.125), a * a, b)],
                 ["switch", "clip", "switch on a"], pt, mode)


@pytest.mark.parametrize("mask_dtype", ["float64", "float32", "int8"])
def test_switch_gradient_with_a_non_boolean_condition(mask_dtype, mode):
    """A float or integer condition (a dropout mask) selects by its non-zero-ness: the
    gradient goes to a where it is non-zero (0.5 and -2 included) and to b elsewhere."""
    rng = np.random.default_rng(0)
    mask = np.array([0, 2, 0, -2, 1, 0], mask_dtype)
    if mask_dtype != "int8":
        mask[4] = 0.5
    a, b = rng.normal(size=(2, 6))
    bptt.verify_grad(lambda x, y: T.switch(mask, x, y) * x, [a, b], mode=mode)
    c, x, y = T.tensor(mask_dtype, (None,), "c"), T.dvector("x"), T.dvector("y")
    cost = T.sum(T.switch(c, x, y) ** 2)
    got = run([c, x, y], bptt.grad(cost, [x, y]), [mask, a, b], mode)
    assert_same(got[0], np.where(mask != 0, 2 * a, 0.0))
    assert_same(got[1], np.where(mask != 0, 0.0, 2 * b))
    if mask_dtype != "int8":   # (an integer input's gradient is zeros, as in Theano)
        with pytest.raises(bptt.DisconnectedInputError):
            bptt.grad(cost, c)


def test_integer_and_boolean_results_have_no_gradient(mode):
    """Comparisons and casts to integers are disconnected: no gradient flows through them."""
    x = T.dvector()
    assert T.lt.scalar_op.partials([x, x], T.lt(x, x)) == [None, None]
    assert so.Cast("int32").partials([x], T.cast(x, "int32")) == [None]
    g = bptt.grad(T.sum(T.cast(T.lt(x, 0), "float64") * x), x)
    (got,) = run([x], [g], [np.array([-1.0, 2.0])], mode)
    assert_same(got, np.array([1.0, 0.0]))
    with pytest.raises(bptt.DisconnectedInputError):
        bptt.grad(T.sum(T.cast(x, "int32") * 1.0), x)


def test_r_op_is_the_transpose_of_l_op(mode):
    """Elemwise.R_op is one generic rule (sum of partial * tangent): representative
    partials suffice."""
    rng = np.random.default_rng(1)
    a = rng.uniform(0.5, 2.0, (3,)).astype("float32")
    b = rng.uniform(0.5, 2.0, (1,)).astype("float32")
    names = ["add", "sub", "mul", "true_div", "maximum"]
    check_rop(lambda x, y: [BINARY[n][0](x, y) for n in names] + [x ** y, T.switch(x > 1, x, y)],
              [a, b], mode)
    check_rop(lambda x: [T.exp(x), T.abs(-x), T.log(x), T.sigmoid(x), T.floor(x),
                         T.cast(x, "float64")], [a.astype("float64")], mode)


# -- static checks and errors ---------------------------------------------------

def test_static_broadcast_shape():
    f = TensorType
    assert broadcast_static_shape([f("int8", (None, 1)), f("int8", (3,))], "add") == (None, 3)
    assert broadcast_static_shape([f("int8", (1, 1)), f("int8", (1,))], "add") == (1, 1)
    assert broadcast_static_shape([f("int8", (0,)), f("int8", (1,))], "add") == (0,)
    with pytest.raises(ValueError, match=r"add: cannot broadcast static shapes.*\[2, 3\]"):
        T.add(T.tensor("int8", (2,)), T.tensor("int8", (3,)))


@pytest.mark.parametrize("build, message", [
    (lambda: T.and_(T.fvector(), T.fvector()),
     r"and: expected boolean or signed integer or unsigned integer inputs, got Tensor\(float32"),
    (lambda: ~T.dvector(), "invert: expected boolean or signed integer"),
    (lambda: -T.tensor("bool", (None,)), "neg: expected signed integer or unsigned integer or float"),
    (lambda: T.tensor("bool", (None,)) - T.tensor("bool", (None,)), "sub: NumPy's boolean subtract"),
    (lambda: T.sgn(T.tensor("bool", ())), "sgn: expected"),
    (lambda: T.add(T.vector(), "abc"), "add: input 1 must be a tensor or a number"),
    (lambda: Elemwise(so.Exp())(T.vector(), T.vector()), "exp takes 1 inputs, got 2"),
])
def test_make_node_errors_name_the_op(build, message):
    with pytest.raises(TypeError, match=message):
        build()


def test_runtime_broadcast_mismatch_raises(mode):
    a, b = T.vector(), T.vector()
    f = bptt.function([a, b], a + b, mode=mode)
    with pytest.raises(ValueError):
        f(np.zeros(2), np.zeros(3))


def test_elemwise_props_and_names():
    assert T.add == Elemwise(so.Add()) and hash(T.add) == hash(Elemwise(so.Add()))
    assert T.cast(T.vector(), "int8").owner.op == Elemwise(so.Cast("int8"))
    assert T.cast(T.vector(), "int8").owner.op != Elemwise(so.Cast("int16"))
    assert str(T.exp) == "exp"


@given(data=st.data())
def test_elemwise_infer_shape(mode, data):
    a, b = T.matrix(), T.vector()
    sa, sb = data.draw(broadcastable_shapes((2, 1), min_side=0))
    check_infer_shape([a * b, T.exp(a), T.switch(T.lt(a, 0), a, b)], [a, b],
                      [np.zeros(sa), np.zeros(sb)], mode)


# -- integer maximum / minimum and 0-d int64 arithmetic (shape programs) ------------------

_INT_BOUNDS = {"int8": 2 ** 7, "int32": 2 ** 31, "int64": 2 ** 63, "uint8": 2 ** 8}


@pytest.fixture(scope="module")
def int_select():
    """maximum / minimum of int arrays and of 0-d int64 (imax / imin for signed integers,
    the ufunc for unsigned), and 0-d int64 sums, products, negations and switches, which
    are written without a cast (numba's own int64 arithmetic): NUMBA against NumPy."""
    fns = {}
    for dtype in _INT_BOUNDS:
        a, b = T.vector("a", dtype=dtype), T.vector("b", dtype=dtype)
        fns[dtype] = bptt.function([a, b], [T.maximum(a, b), T.minimum(a, b)], mode="NUMBA")
    s, t = T.lscalar("s"), T.lscalar("t")
    shape_like = [T.maximum(s, t), T.minimum(s, 0), T.switch(T.lt(s, 0), s + t, s) * 3 - t,
                  -(s * t) + T.maximum(t - s, 0)]
    fns["scalar"] = bptt.function([s, t], shape_like, mode="NUMBA")
    return fns


@given(st.sampled_from(sorted(_INT_BOUNDS)), st.data())
def test_integer_maximum_and_minimum_match_numpy(int_select, dtype, data):
    lo, hi = (0, _INT_BOUNDS[dtype] - 1) if dtype.startswith("u") else \
        (-_INT_BOUNDS[dtype], _INT_BOUNDS[dtype] - 1)
    n = data.draw(st.integers(0, 5))
    a, b = (np.array(data.draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n)),
                     dtype=dtype) for _ in range(2))
    got_max, got_min = int_select[dtype](a, b)
    assert got_max.dtype == dtype and got_min.dtype == dtype
    np.testing.assert_array_equal(got_max, np.maximum(a, b))
    np.testing.assert_array_equal(got_min, np.minimum(a, b))


@given(st.integers(-2 ** 62, 2 ** 62), st.integers(-2 ** 62, 2 ** 62))
def test_int64_scalar_arithmetic_matches_numpy(int_select, s, t):
    s64, t64 = np.int64(s), np.int64(t)
    with np.errstate(over="ignore"):
        want = [np.maximum(s64, t64), np.minimum(s64, np.int64(0)),
                (s64 + t64 if s64 < 0 else s64) * np.int64(3) - t64,
                -(s64 * t64) + np.maximum(t64 - s64, np.int64(0))]
    got = int_select["scalar"](s64, t64)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.int64 and g == w
    source = int_select["scalar"]._fn.source
    assert "imax(" in source and "np.maximum" not in source
