"""Array constructors: alloc, zeros/ones(_like), full, arange, concatenate, stack,
MakeVector, tensor_copy."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.tensor.basic import Alloc, ARange, Join, MakeVector

from ..strategies import (arrays, assert_same, broadcastable_shapes, check_infer_shape,
                          check_rop, elements, run)


def _check_all(names, got, want):
    for name, g, w in zip(names, got, want):
        assert_same(g, w, what=name)


@pytest.mark.parametrize("dtype", ["float32", "int16", "bool"])
@given(data=st.data())
def test_alloc_and_friends_match_numpy(dtype, mode, data):
    (sv, sx) = data.draw(broadcastable_shapes((1, 2), min_side=0))
    shape = np.broadcast_shapes(sv, sx)
    v, x = T.tensor(dtype, (None,)), T.tensor(dtype, (None, None))
    m, n = T.lscalar(), T.iscalar()
    s = T.tensor(dtype, ())
    vv, vx, vs = data.draw(arrays(dtype, sv)), data.draw(arrays(dtype, sx)), data.draw(arrays(dtype, ()))
    outs = [T.alloc(v, m, n), T.alloc(s, m, n), T.alloc(s), T.zeros((m, n), dtype=dtype),
            T.ones((m, 2), dtype), T.zeros_like(x), T.ones_like(x, dtype="int8"),
            T.full((m,), s), T.second(x, s), T.tensor_copy(x), x.copy()]
    got = run([v, x, m, n, s], outs, [vv, vx, np.asarray(shape[0]), np.asarray(shape[1], "int32"),
                                      vs], mode)
    want = [np.broadcast_to(vv, shape), np.full(shape, vs), vs, np.zeros(shape, dtype),
            np.ones((shape[0], 2), dtype), np.zeros_like(vx), np.ones_like(vx, "int8"),
            np.full(shape[:1], vs), np.full(vx.shape, vs), vx, vx]
    _check_all(["alloc", "alloc 0-d", "alloc ()", "zeros", "ones", "zeros_like", "ones_like",
                "full", "second", "tensor_copy", "copy"], got, want)


def test_default_dtypes():
    assert T.zeros((2, 3)).dtype == bptt.config.floatX
    assert T.zeros((2, 3)).type.shape == (2, 3)
    assert T.ones(4, dtype="int32").type.shape == (4,)
    assert T.alloc(T.tensor("float64", (None, 3)), T.lscalar(), 2, 3).type.shape == (None, 2, 3)
    assert T.zeros_like(T.tensor("int8", (2, None))).type.shape == (2, None)


@pytest.mark.parametrize("build, error, message", [
    (lambda: T.alloc(T.dmatrix(), 3), ValueError, "has more dims than the shape"),
    (lambda: T.alloc(T.tensor("float64", (3,)), 2, 4), ValueError, "alloc: cannot broadcast"),
    (lambda: T.alloc(0.0, 2.5), TypeError, "alloc: a shape entry must be an integer scalar"),
    (lambda: T.alloc(0.0, -2), ValueError, "alloc: negative size -2"),
])
def test_alloc_errors(build, error, message):
    with pytest.raises(error, match=message):
        build()


def test_alloc_run_time_errors(mode):
    v, m = T.dvector(), T.lscalar()
    f = bptt.function([v, m], T.alloc(v, m, 3), mode=mode)
    with pytest.raises(ValueError):
        f(np.zeros(2), 2)
    with pytest.raises(ValueError):
        f(np.zeros(3), -1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@given(data=st.data())
def test_alloc_gradient_sums_over_the_broadcast(dtype, mode, data):
    """The value has unknown static shape; which dimensions broadcast is decided at
    run time (constant sizes keep one compiled graph for every example)."""
    sv = data.draw(st.tuples(st.sampled_from([1, 2]), st.sampled_from([1, 3])))
    pt = [data.draw(arrays(dtype, sv)), data.draw(arrays(dtype, ()))]
    bptt.verify_grad(lambda v, s: [T.alloc(v, 4, 2, 3), T.alloc(s, 2, 1), T.full((3,), s)],
                     pt, mode=mode)


ARANGES = [  # (start, stop, step, dtype of the inputs)
    ("int64", "int64", "int64"), ("float64", "float64", "float64"),
    ("float32", "float32", "float32"), ("int32", "float64", "int32"),
]


@pytest.mark.parametrize("dtypes", ARANGES)
@given(data=st.data())
def test_arange_matches_numpy(dtypes, mode, data):
    """Including float32 ranges, whose rounding follows NumPy's algorithm."""
    xs = [T.tensor(dt, ()) for dt in dtypes]
    start, stop = (np.asarray(data.draw(elements(dt, "real")) * 3, dt) for dt in dtypes[:2])
    step = np.asarray(data.draw(elements(dtypes[2], "nonzero")), dtypes[2])
    out = T.arange(*xs)
    (got,) = run(xs, [out], [start, stop, step], mode)
    assert_same(got, np.arange(start, stop, step, dtype=out.dtype))


def test_arange_float32_length_is_computed_in_float32(mode):
    """NumPy divides float32 bounds in float32: (0.81000006 - 0) / 0.27000001 is
    3.0 there, 3.0000001 in float64 (one more element). Found by hypothesis."""
    xs = [T.fscalar() for _ in range(3)]
    bounds = [np.asarray(v, "float32") for v in (0, np.float32(0.27) * 3, 0.27000001072883606)]
    (got,) = run(xs, [T.arange(*xs)], bounds, mode)
    assert_same(got, np.arange(*bounds, dtype="float32"))
    assert len(got) == 3


def test_arange_forms_and_dtypes(mode):
    n = T.lscalar()
    outs = [T.arange(n), T.arange(2, n), T.arange(n, -1, -2), T.arange(0.5, n),
            T.arange(n, dtype="float32"), T.arange(1, 2, 0.25)]
    got = run([n], outs, [np.asarray(5)], mode)
    want = [np.arange(5), np.arange(2, 5), np.arange(5, -1, -2), np.arange(0.5, 5),
            np.arange(5, dtype="float32"), np.arange(1, 2, 0.25)]
    _check_all(["n", "2..n", "down", "float start", "float32", "constant"], got, want)
    assert T.arange(1, 2, 0.25).type.shape == (4,)
    assert T.arange(n).dtype == "int64" and T.arange(0.5, n).dtype == bptt.config.floatX


def test_arange_zero_step_raises(mode):
    a = T.lscalar()
    f = bptt.function([a], T.arange(0, 5, a), mode=mode)
    with pytest.raises(ValueError, match="step must not be 0"):
        f(0)
    with pytest.raises(TypeError, match="bounds must be scalars"):
        ARange("int64")(T.lvector(), 1, 1)


@pytest.mark.parametrize("dtypes", [("float64", "float64"), ("int8", "float32"),
                                    ("bool", "int16")])
@given(data=st.data())
def test_concatenate_and_stack_match_numpy(dtypes, mode, data):
    a, b = T.tensor(dtypes[0], (None, None)), T.tensor(dtypes[1], (None, None))
    s, t = T.tensor(dtypes[0], ()), T.tensor(dtypes[1], ())
    m, n, k = data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3)), data.draw(st.integers(0, 3))
    va, vb = data.draw(arrays(dtypes[0], (m, n))), data.draw(arrays(dtypes[1], (k, n)))
    vb2 = data.draw(arrays(dtypes[1], (m, n)))
    vs, vt = data.draw(arrays(dtypes[0], ())), data.draw(arrays(dtypes[1], ()))
    b2 = T.tensor(dtypes[1], (None, None))
    outs = [T.concatenate([a, b]), T.concatenate([a, b2, a], axis=1),
            T.concatenate([a.T, b2.T], axis=-1), T.stack([a, b2]), T.stack([a, b2], axis=-1),
            T.stack([s, t, s]), T.stack([s, t], axis=-1), T.join(0, b, a),
            T.as_tensor_variable([s, t])]
    got = run([a, b, b2, s, t], outs, [va, vb, vb2, vs, vt], mode)
    want = [np.concatenate([va, vb]), np.concatenate([va, vb2, va], axis=1),
            np.concatenate([va.T, vb2.T], axis=-1), np.stack([va, vb2]),
            np.stack([va, vb2], axis=-1), np.stack([vs, vt, vs]), np.stack([vs, vt], axis=-1),
            np.concatenate([vb, va]), np.stack([vs, vt])]
    _check_all(["concatenate", "axis 1", "axis -1", "stack", "stack -1", "stack scalars",
                "stack scalars -1", "join", "list"], got, want)


def test_concatenate_errors(mode):
    with pytest.raises(TypeError, match="share a number of dims"):
        T.concatenate([T.dmatrix(), T.dvector()])
    with pytest.raises(TypeError, match="dimension 1 differs"):
        T.concatenate([T.tensor("float64", (2, 3)), T.tensor("float64", (2, 4))])
    with pytest.raises(ValueError, match="at least one"):
        T.stack([])
    a, b = T.dmatrix(), T.dmatrix()
    f = bptt.function([a, b], T.concatenate([a, b]), mode=mode)
    with pytest.raises(ValueError):
        f(np.zeros((2, 3)), np.zeros((2, 4)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@given(data=st.data())
def test_join_and_make_vector_gradients(dtype, mode, data):
    m, n, k = (data.draw(st.integers(1, 3)) for _ in range(3))
    pt = [data.draw(arrays(dtype, (m, n))), data.draw(arrays(dtype, (k, n))),
          data.draw(arrays(dtype, ())), data.draw(arrays(dtype, ()))]
    bptt.verify_grad(lambda a, b, s, t: [T.concatenate([a, b, a]), T.stack([a, a], axis=1),
                                         T.stack([s, t, s]) * 1.5],
                     pt, mode=mode)


def test_constructors_r_op(mode):
    rng = np.random.default_rng(0)
    pt = [rng.standard_normal((2, 3)), rng.standard_normal(()), rng.standard_normal(())]
    check_rop(lambda a, s, t: [T.concatenate([a, a], axis=1), T.stack([s, t]),
                               T.alloc(s, 2, 2), T.alloc(a, 2, 2, 3)], pt, mode)


def test_constructors_infer_shape(mode):
    a, b, n = T.dmatrix(), T.dmatrix(), T.lscalar()
    s = T.dscalar()
    check_infer_shape([T.concatenate([a, b]), T.concatenate([a, a], axis=1), T.alloc(s, n, 2),
                       T.arange(1, n, 2), T.stack([s, s, s])],
                      [a, b, n, s], [np.zeros((2, 3)), np.zeros((1, 3)), np.asarray(6),
                                     np.asarray(1.0)], mode)


def test_make_vector_converts_its_scalars(mode):
    i, d = T.iscalar(), T.dscalar()
    v = MakeVector("float32")(i, d, 2)
    assert v.type.shape == (3,) and v.dtype == "float32"
    (got,) = run([i, d], [v], [np.asarray(3, "int32"), np.asarray(0.5)], mode)
    assert_same(got, np.array([3, 0.5, 2], "float32"))
    with pytest.raises(TypeError, match="MakeVector takes scalars"):
        MakeVector("float64")(T.dvector())


def test_ops_have_props():
    assert Join(0) == Join(0) and Join(0) != Join(1)
    assert ARange("int64") != ARange("int32")
    assert Alloc() == Alloc()
    assert MakeVector("int8") != MakeVector("int16")


def test_grad_clip_is_the_identity_with_a_clipped_gradient(mode):
    """Forward: x. Backward: the incoming gradient clipped elementwise, also inside a
    scan step (Lasagne's recurrent layers clip there)."""
    x, c = T.dvector("x"), T.dvector("c")
    xv, cv = np.array([0.5, -2.0, 3.0, 1.0]), np.array([4.0, -0.25, -3.0, 0.5])
    y = T.grad_clip(x, -1, 1.5)
    f = bptt.function([x, c], [y * 2, bptt.grad((y * c).sum(), x)], mode=mode)
    value, grad = f(xv, cv)
    np.testing.assert_array_equal(value, xv * 2)
    np.testing.assert_array_equal(grad, np.clip(cv, -1, 1.5))
    hs, _ = bptt.scan(lambda h: T.grad_clip(h, -1, 1) * 3, outputs_info=[x], n_steps=3)
    g = bptt.function([x], bptt.grad(hs[-1].sum(), x), mode=mode)(xv)
    np.testing.assert_array_equal(g, np.ones(4))   # each step's 3 is clipped to 1


def test_grad_clip_bounds_are_numbers_in_order():
    with pytest.raises(TypeError, match="lower bound must be a number, got TensorVariable"):
        T.grad_clip(T.dvector(), T.dscalar(), 1.0)
    with pytest.raises(ValueError, match="lower bound 2 is above the upper bound 1"):
        T.grad_clip(T.dvector(), 2, 1)
