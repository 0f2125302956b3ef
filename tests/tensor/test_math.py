"""Matrix products and reductions: values against NumPy, gradients, R_op, errors.

Compile time: each reduction kernel (op, ndim, axes, dtype) is compiled once per
process; graphs below put many outputs in one function and vary only values and
run-time shapes between hypothesis examples.
"""
import functools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.tensor.math import Argmax, Dot, Sum

from ..strategies import arrays, assert_same, check_infer_shape, check_rop, run


def _check_all(names, got, want, scales=None):
    scales = scales or [1.0] * len(names)
    for name, g, w, s in zip(names, got, want, scales):
        assert_same(g, w, scale=s, what=name)


@st.composite
def dot_operands(draw, dtype, domain="real"):
    """a (k,), B (k, k), C (n, k, k): every product below is defined."""
    k, n = draw(st.integers(0, 4)), draw(st.integers(1, 3))
    return [draw(arrays(dtype, s, domain=domain)) for s in [(k,), (k, k), (n, k, k)]]


DOTS = {
    "vec.vec": (lambda a, B, C: T.dot(a, a), lambda a, B, C: np.dot(a, a)),
    "mat.vec": (lambda a, B, C: T.dot(B, a), lambda a, B, C: np.dot(B, a)),
    "vec.mat": (lambda a, B, C: T.dot(a, B), lambda a, B, C: np.dot(a, B)),
    "mat.mat": (lambda a, B, C: T.dot(B, B), lambda a, B, C: np.dot(B, B)),
    "3d.mat": (lambda a, B, C: T.dot(C, B), lambda a, B, C: np.dot(C, B)),
    "3d.vec": (lambda a, B, C: T.dot(C, a), lambda a, B, C: np.dot(C, a)),
    "mat.3d": (lambda a, B, C: T.dot(B, C), lambda a, B, C: np.dot(B, C)),
    "3d@mat": (lambda a, B, C: C @ B, lambda a, B, C: C @ B),
    "3d@3d": (lambda a, B, C: C @ C, lambda a, B, C: C @ C),
    "vec@3d": (lambda a, B, C: a @ C, lambda a, B, C: a @ C),
}


@pytest.mark.parametrize("dtypes", [("float64",) * 3, ("float32",) * 3, ("int8",) * 3,
                                    ("int32", "float32", "int64")])
@given(data=st.data())
def test_dot_and_matmul_match_numpy(dtypes, mode, data):
    """Including integer products (which wrap as NumPy's) and 3-d operands."""
    xs = [T.tensor(dt, (None,) * nd) for dt, nd in zip(dtypes, (1, 2, 3))]
    vals = [data.draw(arrays(dt, v.shape, domain="wide" if dt == "int8" else "real"))
            for dt, v in zip(dtypes, data.draw(dot_operands("float64")))]
    names = list(DOTS) if dtypes[0] == dtypes[1] == dtypes[2] else ["vec.mat", "3d.mat", "mat.3d"]
    got = run(xs, [DOTS[n][0](*xs) for n in names], vals, mode)
    scale = 1 + sum(float(np.abs(v.astype(float)).sum()) ** 2 for v in vals)
    with np.errstate(all="ignore"):
        _check_all(names, got, [DOTS[n][1](*vals) for n in names], [scale] * len(names))


# Dot.L_op has one rule per case of 1-d/2-d operands; >2-d products and batched matmul
# are reshapes, dimshuffles, products and sums whose rules are tested with those ops
# (a gradient graph costs seconds of numba compilation, so "3d.mat", the RNN case,
# represents them).
GRAD_DOTS = ["vec.vec", "mat.vec", "vec.mat", "mat.mat", "3d.mat"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@given(data=st.data())
def test_dot_gradients(dtype, mode, data):
    pt = data.draw(dot_operands(dtype))
    bptt.verify_grad(lambda a, B, C: [DOTS[n][0](a, B, C) for n in GRAD_DOTS], pt, mode=mode)


def test_dot_r_op(mode):
    rng = np.random.default_rng(0)
    pt = [rng.standard_normal(s) for s in [(3,), (3, 3)]]
    check_rop(lambda a, B: [T.dot(a, a), T.dot(B, a), T.dot(a, B), T.dot(B, B)], pt, mode)


def test_dot_static_shapes_and_infer_shape(mode):
    a, b = T.tensor("float64", (2, None)), T.tensor("float64", (None, 5))
    assert T.dot(a, b).type.shape == (2, 5)
    c = T.tensor("float32", (None, 3, 4))
    assert T.dot(c, b.astype("float32")).ndim == 3
    va, vb = np.ones((2, 3)), np.ones((3, 5))
    check_infer_shape([T.dot(a, b)], [a, b], [va, vb], mode)


@pytest.mark.parametrize("build, error, message", [
    (lambda: Dot()(T.tensor3(), T.matrix()), TypeError, r"Dot: expected 1-d or 2-d inputs"),
    (lambda: T.dot(T.tensor("float64", (2, 3)), T.tensor("float64", (4, 2))), ValueError,
     r"Dot: inner dimensions differ: .* has 3 columns, .* has 4 rows"),
    (lambda: T.dot(T.tensor("bool", (None,)), T.tensor("bool", (None,))), TypeError,
     "boolean inputs are not supported"),
    (lambda: T.matmul(T.scalar(), T.vector()), ValueError, "at least one dimension"),
])
def test_dot_errors(build, error, message):
    with pytest.raises(error, match=message):
        build()


@pytest.mark.parametrize("dtype", ["float64", "int16"])
def test_dot_run_time_shape_mismatch_raises(dtype, mode):
    a, b = T.tensor(dtype, (None, None)), T.tensor(dtype, (None,))
    f = bptt.function([a, b], T.dot(a, b), mode=mode)
    with pytest.raises(ValueError):
        f(np.ones((2, 3), dtype), np.ones(4, dtype))


# -- reductions ---------------------------------------------------------------

# Every (op, axes, dtype) is a kernel to compile: all axis forms for float64, two for
# the other dtypes (the kernel generator does not depend on the dtype otherwise).
AXES = {"float64": [None, 1, (0, 2), -1]}


def _reductions(dtype):
    """(name, bptt function, NumPy function) for the reductions meaningful on `dtype`."""
    kind = np.dtype(dtype).kind
    out = []
    for axis in AXES.get(dtype, [(0, 2), -1]):
        kd = axis == -1
        for name, f, ref in [("sum", T.sum, np.sum), ("prod", T.prod, np.prod),
                             ("max", T.max, np.max), ("min", T.min, np.min),
                             ("all", T.all, np.all), ("any", T.any, np.any),
                             ("mean", T.mean, np.mean), ("var", T.var, np.var),
                             ("std", T.std, np.std)]:
            if kind == "b" and name in ("prod", "mean", "var", "std"):
                continue
            if kind != "f" and name in ("var", "std"):
                continue
            out.append((f"{name}(axis={axis}, keepdims={kd})",
                        lambda x, f=f, a=axis, k=kd: f(x, axis=a, keepdims=k),
                        lambda v, ref=ref, a=axis, k=kd: ref(v, axis=a, keepdims=k)))
    for axis, kd, which in [(None, False, "max"), (1, False, "min"), (-1, True, "max"),
                            (None, True, "min")]:
        f, ref = (T.argmax, np.argmax) if which == "max" else (T.argmin, np.argmin)
        out.append((f"arg{which}(axis={axis}, keepdims={kd})",
                    lambda x, f=f, a=axis, k=kd: f(x, axis=a, keepdims=k),
                    lambda v, ref=ref, a=axis, k=kd: ref(v, axis=a, keepdims=k)))
    return out


@functools.lru_cache(maxsize=None)
def _reduction_function(dtype, mode):
    """Every reduction of `dtype` on one 3-d input, compiled once: the examples draw values."""
    x = T.tensor(dtype, (None, None, None))
    return bptt.function([x], [f(x) for _, f, _ in _reductions(dtype)], mode=mode)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "bool", "uint64"])
@given(data=st.data())
def test_reductions_match_numpy(dtype, mode, data):
    domain = "real" if dtype[0] == "f" else "wide"
    val = data.draw(arrays(dtype, st.tuples(*[st.integers(1, 3)] * 3), domain=domain))
    table = _reductions(dtype)
    got = _reduction_function(dtype, mode)(val)
    scale = 1 + float(np.abs(val.astype("float64")).sum())
    with np.errstate(all="ignore"):
        want = [ref(val) for _, _, ref in table]
    # prod of floats: rounding relative to the product of magnitudes
    scales = [scale ** 3 if n.startswith(("prod", "var", "std")) else scale
              for n, _, _ in table]
    _check_all([n for n, _, _ in table], got, want, scales)


@given(data=st.data())
def test_reductions_of_empty_arrays(mode, data):
    """Sums and products of nothing are 0 and 1; max over an empty axis raises as
    NumPy does, even when the result itself would be empty."""
    x = T.tensor("float64", (None, None))
    n = data.draw(st.integers(1, 3))
    val = np.zeros((0, n))
    got = run([x], [T.sum(x), T.prod(x, axis=0), T.max(x, axis=1), T.all(x), T.any(x, axis=0)],
              [val], mode)
    _check_all(["sum", "prod", "max", "all", "any"], got,
               [np.sum(val), np.prod(val, axis=0), np.max(val, axis=1), np.all(val),
                np.any(val, axis=0)])
    for f in [lambda v: T.max(v), lambda v: T.min(v, axis=0), lambda v: T.argmax(v, axis=0)]:
        g = bptt.function([x], f(x), mode=mode)
        with pytest.raises(ValueError):
            g(val)


def test_extrema_propagate_nan(mode):
    x = T.dmatrix()
    val = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -np.inf]])
    outs = [T.max(x), T.min(x, axis=1), T.argmax(x, axis=1), T.argmin(x), T.max(x, axis=0)]
    got = run([x], outs, [val], mode)
    _check_all(["max", "min", "argmax", "argmin", "max0"], got,
               [np.max(val), np.min(val, axis=1), np.argmax(val, axis=1), np.argmin(val),
                np.max(val, axis=0)])


def test_sum_dtype_and_small_integer_accumulation(mode):
    x = T.tensor("int8", (None,))
    val = np.full(10, 100, "int8")
    got = run([x], [T.sum(x), x.sum(dtype="float32"), T.prod(x, axis=0)], [val], mode)
    _check_all(["sum", "sum float32", "prod"], got,
               [np.sum(val), np.sum(val).astype("float32"), np.prod(val)])


def _reduction_grads(x):
    # var and std are compositions of these (and of elementwise ops): no rule of their own.
    return [T.sum(x), T.sum(x, axis=0), T.mean(x, axis=-1, keepdims=True),
            T.prod(x, axis=1), T.max(x, axis=0), T.min(x)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@given(data=st.data())
def test_reduction_gradients(dtype, mode, data):
    """Distinct values a quarter apart: max/min have a unique argument, so every
    function is smooth within a finite-difference step."""
    shape = data.draw(st.tuples(st.integers(2, 3), st.integers(2, 3)))
    val = data.draw(arrays(dtype, shape, domain="grid", unique=True))
    bptt.verify_grad(_reduction_grads, [val], mode=mode)


@pytest.mark.parametrize("zeros", [1, 2])
def test_prod_gradient_with_zeros(zeros, mode):
    val = np.array([[2.0, -1.5, 0.5], [1.25, 3.0, -2.0]])
    val.flat[[1, 4, 2][:zeros]] = 0.0
    bptt.verify_grad(lambda x: [T.prod(x), T.prod(x, axis=0), T.prod(x, axis=1)], [val], mode=mode)


def test_reduction_r_op(mode):
    val = np.array([[2.0, -1.5, 0.5], [1.25, 3.0, -2.0]])
    check_rop(_reduction_grads, [val], mode)


def test_reduction_static_shapes_and_infer_shape(mode):
    x = T.tensor("float64", (2, None, 4))
    assert T.sum(x, axis=1).type.shape == (2, 4)
    assert T.max(x, axis=(0, 2), keepdims=True).type.shape == (1, None, 1)
    assert T.argmax(x, axis=-1).type.shape == (2, None)
    assert T.argmax(x).type.shape == () and T.argmax(x, keepdims=True).type.shape == (1, 1, 1)
    assert T.sum(T.tensor("int8", (None,))).dtype == "int64"
    assert T.sum(T.tensor("uint16", (None,))).dtype == "uint64"
    assert T.mean(T.tensor("int32", (None,))).dtype == "float64"
    assert T.mean(T.fvector()).dtype == "float32"
    assert T.all(x).dtype == "bool"
    val = np.ones((2, 3, 4))
    check_infer_shape([T.sum(x, axis=1), T.max(x), Argmax(1)(x), Argmax(None)(x)], [x], [val],
                      mode)


@pytest.mark.parametrize("build, error, message", [
    (lambda: T.sum(T.matrix(), axis=2), ValueError, "sum: axis 2 is out of range for a 2-d"),
    (lambda: T.max(T.matrix(), axis=(0, -2)), ValueError, r"max: repeated axis in \(0, -2\)"),
    (lambda: T.sum(T.matrix(), axis=1.0), TypeError, "sum: axis must be an int"),
    (lambda: T.argmax(T.matrix(), axis=(0, 1)), TypeError, "argmax: axis must be an int or None"),
    (lambda: Sum((3,))(T.matrix()), ValueError, r"sum: axis 3 is out of range for Tensor"),
    (lambda: Sum((1, 1)), ValueError, "distinct non-negative"),
    (lambda: Argmax(2)(T.matrix()), ValueError, "argmax: axis 2 is out of range"),
])
def test_reduction_errors(build, error, message):
    with pytest.raises(error, match=message):
        build()


def test_reduction_ops_have_props():
    assert Sum((0, 1)) == Sum([1, 0]) and hash(Sum((0, 1))) == hash(Sum((1, 0)))
    assert Sum((0,)) != Sum((1,))
    assert str(Sum((0,))) == "sum{axis=(0,)}"
    assert Argmax(0) != Argmax(0, "min")
