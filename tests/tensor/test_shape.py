"""Shape ops: Shape, Shape_i, Reshape, DimShuffle, BroadcastTo, SumTo and the
functions built on them (transpose, flatten, squeeze, shape_pad*)."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.tensor.shape import (BroadcastTo, DimShuffle, Reshape, Shape_i, SumTo, broadcast_to,
                               shape_i, shape_tuple, sum_to, sum_to_shape)

from ..strategies import (arrays, assert_same, broadcastable_shapes, check_infer_shape,
                          check_rop, run, shapes)


def _check_all(names, got, want):
    for name, g, w in zip(names, got, want):
        assert_same(g, w, what=name)


@given(data=st.data())
def test_shape_and_shape_i(mode, data):
    x0, x1, x3 = T.scalar(dtype="int8"), T.bvector(), T.btensor3()
    s3 = data.draw(shapes(ndim=3, min_side=0))
    vals = [np.asarray(1, "int8"), np.zeros(data.draw(st.integers(0, 4)), "int8"),
            np.zeros(s3, "int8")]
    outs = [x0.shape, x1.shape, x3.shape, Shape_i(1)(x3), shape_i(x3, -1)]
    got = run([x0, x1, x3], outs, vals, mode)
    want = [np.array(v.shape, "int64") for v in vals] + [np.asarray(s3[1]), np.asarray(s3[2])]
    _check_all(["shape 0-d", "shape 1-d", "shape 3-d", "Shape_i", "shape_i(-1)"], got, want)
    assert shape_i(T.tensor("int8", (None, 5)), 1).data == 5  # static sizes are constants


@st.composite
def reshape_case(draw):
    """A 2-d shape and a factorisation of its size into three dimensions."""
    a, b, c = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    rows = draw(st.sampled_from([a, a * b]))
    return (rows, a * b * c // rows), (a, b, c)


@pytest.mark.parametrize("dtype", ["float64", "bool"])
@given(data=st.data())
def test_reshape_matches_numpy(dtype, mode, data):
    (m, n), (a, b, c) = data.draw(reshape_case())
    x = T.tensor(dtype, (None, None))
    i, j, k = T.lscalar(), T.lscalar(), T.iscalar()
    v = data.draw(arrays(dtype, (m, n)))
    outs = [x.reshape((-1,)), x.reshape((i, j, k)), x.reshape((i, -1)), T.flatten(x),
            x.T.reshape((-1,)), T.reshape(x, T.stack([i, j * k]), ndim=2),
            T.flatten(x.reshape((i, j, k)), 2)]
    got = run([x, i, j, k], outs, [v, np.asarray(a), np.asarray(b), np.asarray(c, "int32")], mode)
    want = [v.reshape(-1), v.reshape(a, b, c), v.reshape(a, -1),
            v.reshape(-1), v.T.reshape(-1), v.reshape(a, b * c), v.reshape(a, b * c)]
    _check_all(["-1", "(i,j,k)", "(i,-1)", "flatten", "transposed", "vector", "flatten 2"],
               got, want)


def test_reshape_to_and_from_0d(mode):
    x, s = T.dmatrix(), T.dscalar()
    got = run([x, s], [x.reshape(()), s.reshape((1, 1, 1)), s.reshape((-1,)), T.flatten(s)],
              [np.full((1, 1), 2.5), np.asarray(1.5)], mode)
    _check_all(["to 0-d", "from 0-d", "-1", "flatten"], got,
               [np.asarray(2.5), np.full((1, 1, 1), 1.5), np.array([1.5]), np.array([1.5])])


def test_reshape_static_shapes():
    x = T.tensor("float64", (2, 6))
    assert x.reshape((3, -1)).type.shape == (3, 4)
    assert x.reshape((-1,)).type.shape == (12,)
    assert T.flatten(T.tensor("float64", (2, 3, 4)), 2).type.shape == (2, 12)
    assert T.dmatrix().reshape((T.lscalar(), 5)).type.shape == (None, 5)


@pytest.mark.parametrize("build, error, message", [
    (lambda: T.dmatrix().reshape((-1, -1)), ValueError, "at most one -1"),
    (lambda: T.tensor("float64", (2, 3)).reshape((4, 2)), ValueError, "cannot reshape"),
    (lambda: Reshape(2)(T.dmatrix(), T.dvector()), TypeError, "integer shape vector of length 2"),
    (lambda: T.dmatrix().reshape(T.lvector()), ValueError, "pass ndim="),
    (lambda: T.flatten(T.dmatrix(), 3), ValueError, "flatten: ndim must be between 1 and 2"),
])
def test_reshape_errors(build, error, message):
    with pytest.raises(error, match=message):
        build()


def test_reshape_run_time_size_mismatch_raises(mode):
    x, n = T.dvector(), T.lscalar()
    f = bptt.function([x, n], x.reshape((n, 2)), mode=mode)
    assert f(np.arange(4.0), 2).shape == (2, 2)
    with pytest.raises(ValueError):
        f(np.arange(5.0), 2)


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@given(data=st.data())
def test_dimshuffle_matches_numpy(dtype, mode, data):
    x = T.tensor(dtype, (None, 1, None))
    s = T.tensor(dtype, ())
    one = T.tensor(dtype, (1, 1))
    v = data.draw(arrays(dtype, st.tuples(st.integers(0, 3), st.just(1), st.integers(0, 3))))
    vs, v1 = data.draw(arrays(dtype, ())), data.draw(arrays(dtype, (1, 1)))
    outs = [x.dimshuffle(2, "x", 0), x.dimshuffle(0, 2), x.dimshuffle("x", 2, 1, 0, "x"),
            s.dimshuffle("x", "x"), one.dimshuffle(), x.T, x.dimshuffle(2, 1, 0).dimshuffle(0, 2),
            T.shape_padleft(x, 2), T.shape_padright(s), T.shape_padaxis(x, 1), T.squeeze(x),
            T.squeeze(one, axis=0), T.transpose(x, (1, 2, 0)), (x.T + 1).dimshuffle(2, 0)]
    got = run([x, s, one], outs, [v, vs, v1], mode)
    one_ = np.asarray(1, dtype)
    want = [np.transpose(v[:, 0, :])[:, None, :], v[:, 0, :], np.transpose(v)[None, ..., None],
            vs.reshape(1, 1), v1.reshape(()), v.T, v.T[:, 0, :], v[None, None], vs.reshape(1),
            v[:, None], v[:, 0, :], v1[0], np.transpose(v, (1, 2, 0)), (v.T + one_)[:, 0, :].T]
    _check_all([f"dimshuffle {k}" for k in range(len(want))], got, want)


@pytest.mark.parametrize("build, error, message", [
    (lambda: DimShuffle(2, (0, 0)), ValueError, r"dimshuffle: invalid pattern \(0, 0\)"),
    (lambda: DimShuffle(2, (0, 2)), ValueError, "invalid pattern"),
    (lambda: DimShuffle(2, (1, 0))(T.dvector()), TypeError, "expects 2 dims"),
    (lambda: T.dmatrix().dimshuffle(0), ValueError, "cannot drop dimension 1"),
    (lambda: T.squeeze(T.dmatrix(), axis=1), ValueError, "only dimensions of static size 1"),
])
def test_dimshuffle_errors(build, error, message):
    with pytest.raises(error, match=message):
        build()


@pytest.mark.parametrize("dtype", ["float64", "int32"])
@given(data=st.data())
def test_broadcast_to_matches_numpy(dtype, mode, data):
    (sx, sy) = data.draw(broadcastable_shapes((2, 3), min_side=0))
    x, shp = T.tensor(dtype, (None, None)), T.tensor("int64", (3,))
    s = T.tensor(dtype, ())
    vx, vs = data.draw(arrays(dtype, sx)), data.draw(arrays(dtype, ()))
    target = np.broadcast_shapes(sx, sy)
    outs = [broadcast_to(x, shp), broadcast_to(s, shp), broadcast_to(x, T.shape(x))]
    got = run([x, shp, s], outs, [vx, np.array(target), vs], mode)
    _check_all(["array", "0-d", "same"], got, [np.broadcast_to(vx, target),
                                                np.broadcast_to(vs, target), vx])
    assert got[0].flags.writeable  # a fresh array, not a read-only view


def test_broadcast_to_errors(mode):
    with pytest.raises(ValueError, match="cannot broadcast"):
        broadcast_to(T.tensor("float64", (3,)), (2, 4))
    with pytest.raises(TypeError, match="integer shape vector"):
        BroadcastTo(2)(T.dvector(), T.dvector())
    x, n = T.dvector(), T.lscalar()
    f = bptt.function([x, n], broadcast_to(x, (n, 3)), mode=mode)
    with pytest.raises(ValueError):
        f(np.zeros(2), 2)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@given(data=st.data())
def test_sum_to_matches_numpy(dtype, mode, data):
    """SumTo undoes broadcasting at run time: leading dimensions and dimensions where
    the target size is 1 are summed. The target is sizes (scalars or a vector)."""
    sr, sg = data.draw(broadcastable_shapes((2, 3), min_side=0))
    sg = np.broadcast_shapes(sr, sg)
    g = T.tensor(dtype, (None,) * 3)
    n0, n1, vec = T.lscalar(), T.iscalar(), T.tensor("int64", (2,))
    vg = data.draw(arrays(dtype, sg))
    got = run([g, n0, n1, vec], [sum_to(g, (n0, n1)), sum_to(g, vec), SumTo()(g)],
              [vg, np.int64(sr[0]), np.int32(sr[1]), np.asarray(sr, "int64")], mode)
    want = [sum_to_shape(vg, sr), sum_to_shape(vg, sr), np.asarray(vg.sum(), dtype)]
    if dtype[0] == "f":
        got, want = [np.asarray(np.round(a, 3)) for a in got], [np.asarray(np.round(a, 3)) for a in want]
    _check_all(["sum_to sizes", "sum_to vector", "sum_to 0-d"], got, want)
    assert want[0].shape == sr


def test_sum_to_rejects_shapes_that_do_not_broadcast(mode):
    """The numba kernel writes by index: a wrong shape must be an error, not a write
    out of bounds."""
    g, n0, n1 = T.dmatrix(), T.lscalar(), T.lscalar()
    f = bptt.function([g, n0, n1], SumTo()(g, n0, n1), mode=mode)
    with pytest.raises(ValueError, match="broadcast"):
        f(np.ones((2, 5)), 2, 3)
    with pytest.raises(ValueError, match="broadcast"):
        f(np.ones((2, 3)), 4, 3)
    with pytest.raises(ValueError, match="fewer dims"):
        SumTo()(T.dvector(), n0, n1)
    with pytest.raises(ValueError, match="broadcast"):
        SumTo()(T.tensor("float64", (2, 3)), 2, 4)     # static sizes that cannot broadcast
    with pytest.raises(TypeError, match="integer scalar"):
        SumTo()(g, T.dscalar())
    assert sum_to(T.tensor("float64", (2, 3)), (2, 3)).owner is None
    assert SumTo()(T.tensor("float64", (4, 3)), 1, n0).type.shape == (1, None)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@given(data=st.data())
def test_shape_op_gradients(dtype, mode, data):
    v = data.draw(arrays(dtype, shapes(ndim=2, min_side=1, max_side=3)))
    bptt.verify_grad(lambda x: [x.reshape((-1,)), x.dimshuffle(1, "x", 0), T.flatten(x.T),
                                broadcast_to(x.dimshuffle("x", 0, 1),
                                             T.stack([2, x.shape[0], x.shape[1]]))],
                     [v], mode=mode)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@given(data=st.data())
def test_sum_to_gradient(dtype, mode, data):
    sr, sg = data.draw(broadcastable_shapes((2, 2), max_side=3))
    sg = np.broadcast_shapes(sr, sg)
    pt = [data.draw(arrays(dtype, sg)), data.draw(arrays(dtype, sr))]
    bptt.verify_grad(lambda g, q: SumTo()(g, *shape_tuple(q)) * q, pt, mode=mode)


def test_shape_ops_r_op(mode):
    v = np.arange(6.0).reshape(2, 3) + 0.5
    check_rop(lambda x: [x.reshape((-1,)), x.dimshuffle(1, "x", 0), T.flatten(x.T),
                         broadcast_to(x, T.stack([2, 2, 3])), SumTo()(x, *shape_tuple(x))],
              [v], mode)


def test_shape_ops_infer_shape(mode):
    x, n = T.dmatrix(), T.lscalar()
    v = np.zeros((2, 6))
    check_infer_shape([x.reshape((3, -1)), x.reshape((n, 4)), x.dimshuffle(1, "x", 0),
                       broadcast_to(x, T.stack([5, x.shape[0], x.shape[1]])),
                       SumTo()(x, x.shape[0], x.shape[1]), SumTo()(x, 1), SumTo()(x, x.shape[1])],
                      [x, n], [v, np.asarray(3)], mode)


def test_ops_have_props():
    assert DimShuffle(2, (1, 0)) == DimShuffle(2, [1, 0])
    assert DimShuffle(2, (1, 0)) != DimShuffle(2, (0, 1))
    assert str(DimShuffle(1, ("x", 0))) == "DimShuffle{x,0}"
    assert Reshape(2) == Reshape(2) and Reshape(2) != Reshape(3)
    assert T.dimshuffle(T.dvector(), (0,)).owner is None  # the identity pattern is no op
