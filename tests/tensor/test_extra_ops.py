"""cumsum, cumprod, diff, roll, bincount, fill_diagonal(_offset), squeeze: NumPy's values
for any shape and axis, finite-difference gradients (cumprod's with zeros), both modes."""
import functools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.compat.theano.tensor as TT
import bptt.tensor as T
from tests.strategies import arrays, assert_same, check_infer_shape, check_rop, shapes


@functools.lru_cache(maxsize=None)
def _cum_all_axes(mode, ndim):
    """cumsum and cumprod flattened, along the first and last axis and (3-d) the middle one."""
    x = T.tensor("float64", (None,) * ndim, name="x")
    axes = [None] + [a for a in (0, -2, -1) if ndim == 3 or a != -2][:ndim]
    outs = [fn(x, a) for a in axes for fn in (T.cumsum, T.cumprod)]
    return axes, bptt.function([x], outs, mode=mode)


@given(st.data())
def test_cumsum_and_cumprod_are_numpy_s_for_every_shape_and_axis(mode, data):
    ndim = data.draw(st.integers(0, 3))
    x = data.draw(arrays("float64", shapes(ndim=ndim, max_side=4), "grid"))
    axes, f = _cum_all_axes(mode, ndim)
    got = iter(f(x))
    for a in axes:
        assert_same(next(got), np.cumsum(x, axis=a), scale=np.abs(x).sum(), what=f"cumsum {a}")
        assert_same(next(got), np.cumprod(x, axis=a), what=f"cumprod {a}")


def test_small_integers_accumulate_in_64_bits_as_numpy(mode):
    ins = [T.bvector("b"), T.tensor("uint8", (None, None)), T.tensor("bool", (None,)),
           T.fmatrix("f")]
    vals = [np.array([100, 100, -90], "int8"), np.array([[200, 100], [3, 255]], "uint8"),
            np.array([True, False, True]), np.array([[0.1, 0.2], [0.3, 0.4]], "float32")]
    outs = [T.cumsum(ins[0]), T.cumprod(ins[1], 0), T.cumsum(ins[2]), T.cumprod(ins[3], 1),
            ins[0].cumsum(), ins[3].cumprod(0)]
    want = [np.cumsum(vals[0]), np.cumprod(vals[1], 0), np.cumsum(vals[2]),
            np.cumprod(vals[3], 1), np.cumsum(vals[0]), np.cumprod(vals[3], 0)]
    for got, w in zip(bptt.function(ins, outs, mode=mode)(*vals), want):
        assert_same(got, w)


def _cumprod_jacobian_t(x, g, axis):
    """NumPy: gx[i] = sum_{j >= i} g[j] prod_{k <= j, k != i} x[k], line by line."""
    xm, gm = np.moveaxis(x, axis, -1), np.moveaxis(g, axis, -1)
    out = np.zeros_like(xm)
    n = xm.shape[-1]
    for i in range(n):
        for j in range(i, n):
            others = np.delete(xm[..., :j + 1], i, axis=-1)
            out[..., i] += gm[..., j] * np.prod(others, axis=-1)
    return np.moveaxis(out, -1, axis)


def test_cumprod_gradient_is_exact_at_zeros():
    """The rule against NumPy (verify_grad below checks it in both modes: cumprod is
    linear in each entry, so finite differences are exact at zeros too)."""
    x, g = T.dmatrix("x"), T.dmatrix("g")
    outs = [bptt.grad(T.sum(T.cumprod(x, a) * g), x) for a in (0, 1)]
    f = bptt.function([x, g], outs, mode="PY")
    rng = np.random.default_rng(2)
    xv = rng.uniform(-2, 2, (4, 5))
    xv[0, 1] = xv[2, 0] = xv[2, 3] = 0.0        # one zero, two zeros in a line
    xv[3, :] = 0.0                              # a line of zeros
    gv = rng.normal(size=(4, 5))
    for a, got in zip((0, 1), f(xv, gv)):
        np.testing.assert_allclose(got, _cumprod_jacobian_t(xv, gv, a), rtol=1e-12, atol=1e-12)


def _cum_graph(a):
    return [T.cumsum(a, 0), T.cumprod(a, 1), T.cumprod(a)]


def test_cum_gradients_match_finite_differences(mode):
    rng = np.random.default_rng(3)
    x = rng.uniform(-1.5, 1.5, (3, 4))
    x[1, 2] = x[0, 0] = 0.0
    bptt.verify_grad(_cum_graph, [x], rng=rng, mode=mode)


def test_cumsum_rop_is_the_transpose_of_its_lop():
    check_rop(lambda a: T.cumsum(a, 1), [np.random.default_rng(5).normal(size=(3, 4))], "PY")


def test_cum_infer_shape():
    x = T.tensor("float64", (None, None, None))
    vals = [np.zeros((2, 0, 3))]
    check_infer_shape([T.cumsum(x), T.cumprod(x, 1)], [x], vals, "PY")
    assert T.cumsum(T.tensor("float64", (2, 3))).type.shape == (6,)


@functools.lru_cache(maxsize=None)
def _arrays_graph(mode):
    x, v, s, i, w = T.dmatrix("x"), T.dvector("v"), T.lscalar("s"), T.lvector("i"), T.dvector("w")
    outs = [T.diff(x), T.diff(x, 2, 0), T.diff(v, 0), T.diff(x, 3, -1),
            T.roll(x, s, 1), T.roll(x, s, -2), T.roll(x, s), T.roll(v, -2),
            T.bincount(i), T.bincount(i, w), T.bincount(i, minlength=s + 7),
            T.fill_diagonal(x, 5.0), T.fill_diagonal_offset(x, 2.0, s),
            T.squeeze(x.dimshuffle(0, "x", 1))]
    return bptt.function([x, v, s, i, w], outs, mode=mode, on_unused_input="ignore")


def _numpy_arrays(x, v, s, i, w):
    fd = x.copy()
    np.fill_diagonal(fd, 5.0)
    fo = x.copy()
    rows = np.arange(x.shape[0])
    keep = (rows + s >= 0) & (rows + s < x.shape[1])
    fo[rows[keep], rows[keep] + s] = 2.0
    return [np.diff(x), np.diff(x, 2, 0), np.diff(v, 0), np.diff(x, 3, -1),
            np.roll(x, s, 1), np.roll(x, s, -2), np.roll(x, s), np.roll(v, -2),
            np.bincount(i), np.bincount(i, w), np.bincount(i, minlength=max(s + 7, 0)), fd, fo,
            x]


@given(st.data())
def test_diff_roll_bincount_diagonals_are_numpy_s(mode, data):
    x = data.draw(arrays("float64", shapes(ndim=2, max_side=5)))
    v = data.draw(arrays("float64", shapes(ndim=1, max_side=5)))
    s = data.draw(st.integers(-7, 7))
    i = data.draw(arrays("int64", shapes(ndim=1, max_side=6), "nonneg"))
    w = data.draw(arrays("float64", (len(i),)))
    got = _arrays_graph(mode)(x, v, s, i, w)
    for k, (a, b) in enumerate(zip(got, _numpy_arrays(x, v, s, i, w))):
        assert_same(a, b.astype(a.dtype) if k == 9 and len(i) == 0 else b, what=f"output {k}")


def _arrays_grad_graph(x, v, w):
    i = T.as_tensor_variable(np.array([0, 3, 3, 1]))
    return [T.diff(x, 2, 0) * T.roll(x, 3)[2:], T.bincount(i, w),
            T.fill_diagonal(x, T.sum(v)), T.fill_diagonal_offset(x, v[0], -1)]


def test_gradients_of_the_compositions(mode):
    rng = np.random.default_rng(4)
    pt = [rng.normal(size=(4, 3)), rng.normal(size=3), rng.normal(size=4)]
    bptt.verify_grad(_arrays_grad_graph, pt, rng=rng, mode=mode)


def test_bincount_refuses_negative_values_when_it_runs(mode):
    i = T.lvector("i")
    f = bptt.function([i], T.bincount(i), mode=mode)
    assert f(np.array([1, 1], "int64")).tolist() == [0, 2]
    with pytest.raises(ValueError, match="bincount: x has negative values"):
        f(np.array([1, -1], "int64"))


@pytest.mark.parametrize("build, error, match", [
    (lambda: T.cumsum(T.dmatrix(), 2), ValueError, r"cumsum: axis must be an int in \[-2, 2\)"),
    (lambda: T.cumprod(T.dmatrix(), -3), ValueError, r"cumprod: axis .* got -3"),
    (lambda: T.cumsum(T.dscalar(), 0), ValueError, r"\[-0, 0\)"),
    (lambda: T.diff(T.dvector(), 1, 1), ValueError, "diff: axis"),
    (lambda: T.diff(T.dvector(), -1), ValueError, "diff: n must be a non-negative int"),
    (lambda: T.diff(T.dscalar()), ValueError, "at least one dimension"),
    (lambda: T.roll(T.dvector(), 1, 1), ValueError, "roll: axis"),
    (lambda: T.roll(T.dvector(), 1.5), TypeError,
     r"roll: shift must be an int or an integer scalar.*T.cast\(shift"),
    (lambda: T.roll(T.dscalar(), 1, 0), ValueError, "pass axis=None"),
    (lambda: T.bincount(T.dvector()), TypeError, r"vector of integers.*astype\('int64'\)"),
    (lambda: T.bincount(T.lmatrix()), TypeError, "bincount: x must be a vector"),
    (lambda: T.bincount(T.lvector(), T.dmatrix()), TypeError, "weights must be a vector"),
    (lambda: T.fill_diagonal(T.dvector(), 1.0), TypeError, "at least two dimensions"),
    (lambda: T.fill_diagonal(T.dmatrix(), T.dvector()), TypeError, "val must be a scalar"),
    (lambda: T.fill_diagonal_offset(T.tensor3(), 1.0, 0), TypeError, "a must be a matrix"),
])
def test_bad_arguments_are_refused_with_the_fix(build, error, match):
    with pytest.raises(error, match=match):
        build()


def test_theano_names():
    for name in ("cumsum", "cumprod", "diff", "bincount", "fill_diagonal",
                 "fill_diagonal_offset", "squeeze", "repeat"):
        assert getattr(TT.extra_ops, name) is getattr(T, name)
    for name in ("cumsum", "cumprod", "bincount", "fill_diagonal", "fill_diagonal_offset"):
        assert getattr(TT, name) is getattr(T, name)
    assert TT.basic.roll is TT.roll is T.roll
    import bptt.compat.theano as theano

    theano.install()
    from theano.tensor.extra_ops import CumOp

    x = T.dmatrix("x")
    out = CumOp(-1, "mul")(x)                   # Theano's op takes a negative axis too
    assert out.owner.op == CumOp(1, "mul")
    v = np.arange(1.0, 7.0).reshape(2, 3)
    assert_same(bptt.function([x], out, mode="PY")(v), np.cumprod(v, -1))
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        CumOp(2)(x)
