"""tile, repeat, tensordot, batched_dot, max_and_argmax, sort (bptt/tensor/extra.py): NumPy's
values, verify_grad's gradients, in both modes, and under Theano's names."""
import numpy as np
import pytest

import bptt
import bptt.compat.theano.tensor as TT
import bptt.tensor as T

RNG = np.random.default_rng(0)
A3 = RNG.standard_normal((2, 3, 4))
B3 = RNG.standard_normal((4, 3, 5))
M = RNG.standard_normal((2, 3))

CASES = [  # (name, graph of the inputs, NumPy function of the values, input values)
    ("tile", lambda x: T.tile(x, (2, 3)), lambda x: np.tile(x, (2, 3)), [M]),
    ("tile more reps than axes", lambda x: T.tile(x, (2, 1, 2)),
     lambda x: np.tile(x, (2, 1, 2)), [M]),
    ("repeat axis 1", lambda x: T.repeat(x, 3, axis=1), lambda x: np.repeat(x, 3, axis=1), [M]),
    ("repeat flattened", lambda x: T.repeat(x, 2), lambda x: np.repeat(x, 2), [M]),
    ("repeat counts", lambda x: T.repeat(x, [2, 0, 1], axis=-1),
     lambda x: np.repeat(x, [2, 0, 1], axis=-1), [M]),
    ("tensordot pairs", lambda a, b: T.tensordot(a, b, axes=[[1, 2], [1, 0]]),
     lambda a, b: np.tensordot(a, b, axes=[[1, 2], [1, 0]]), [A3, B3]),
    ("tensordot int", lambda a, b: T.tensordot(a, b, axes=1),
     lambda a, b: np.tensordot(a, b, axes=1), [A3, B3[:, 0]]),
    ("batched_dot 3x3", lambda a, b: T.batched_dot(a, b),
     lambda a, b: np.einsum("bij,bjk->bik", a, b), [A3, RNG.standard_normal((2, 4, 5))]),
    ("batched_dot 3x2", lambda a, b: T.batched_dot(a, b),
     lambda a, b: np.einsum("bij,bj->bi", a, b), [A3, RNG.standard_normal((2, 4))]),
    ("batched_dot 2x4", lambda a, b: T.batched_dot(a, b),
     lambda a, b: np.einsum("bj,bcjk->bck", a, b), [M, RNG.standard_normal((2, 2, 3, 2))]),
    ("max_and_argmax", lambda x: T.max_and_argmax(x, axis=1)[0],
     lambda x: x.max(axis=1), [A3]),
    ("sort axis 1", lambda x: T.sort(x, axis=1) * np.arange(3.0)[:, None],
     lambda x: np.sort(x, axis=1) * np.arange(3.0)[:, None], [A3]),
    ("sort flattened", lambda x: T.sort(x, axis=None) ** 2, lambda x: np.sort(x, None) ** 2, [M]),
]


@pytest.mark.parametrize("name, graph, want, values", CASES, ids=[c[0] for c in CASES])
def test_value_and_gradient(name, graph, want, values, mode):
    inputs = [T.tensor("float64", (None,) * v.ndim) for v in values]
    got = bptt.function(inputs, graph(*inputs), mode=mode)(*values)
    np.testing.assert_allclose(got, want(*values), rtol=1e-12, atol=1e-12)
    bptt.verify_grad(graph, values, rng=np.random.default_rng(1), mode=mode)


def test_symbolic_counts_and_argmax(mode):
    x, r = T.dmatrix("x"), T.iscalar("r")
    f = bptt.function([x, r], [T.repeat(x, r, axis=0), T.tile(x, (r, 1)),
                               T.max_and_argmax(x, axis=0, keepdims=True)[1]], mode=mode)
    rep, til, arg = f(M, 3)
    np.testing.assert_array_equal(rep, np.repeat(M, 3, axis=0))
    np.testing.assert_array_equal(til, np.tile(M, (3, 1)))
    np.testing.assert_array_equal(arg, M.argmax(axis=0)[None])


def test_theano_names_and_argument_forms(mode):
    x, y = T.dvector("x"), T.dvector("y")
    t3 = T.dtensor3("t3")
    f = bptt.function([x, y, t3], [TT.stack(x, y), TT.stack([x, y], 1), TT.flatten(t3, outdim=2),
                                   TT.tile(x, (2,)), TT.batched_dot(t3, t3[:, 0])], mode=mode)
    xv, yv = np.arange(3.0), np.ones(3)
    got = f(xv, yv, A3[:, :, :3])
    np.testing.assert_array_equal(got[0], np.stack([xv, yv]))
    np.testing.assert_array_equal(got[1], np.stack([xv, yv], 1))
    np.testing.assert_array_equal(got[2], A3[:, :, :3].reshape(2, -1))
    np.testing.assert_array_equal(got[3], np.tile(xv, 2))
    np.testing.assert_allclose(got[4], np.einsum("bij,bj->bi", A3[:, :, :3], A3[:, 0, :3]))


def test_errors_name_the_fix():
    x = T.dmatrix("x")
    with pytest.raises(TypeError, match="integer"):
        T.repeat(x, 1.5)
    with pytest.raises(ValueError, match="3 axes"):
        T.tensordot(x, x, axes=3)
    with pytest.raises(TypeError, match="a \\* b"):
        T.batched_dot(T.dvector(), T.dvector())
    with pytest.raises(TypeError, match="one list, then the axis"):
        T.stack([x, x], x)
    with pytest.raises(ValueError, match="not both"):
        TT.flatten(x, ndim=1, outdim=1)


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_argsort_is_numpy_s_stable_sort_with_nan_last(axis, mode):
    values = RNG.integers(0, 3, (4, 6)).astype(float)   # many ties
    values[1, 2] = values[3, 0] = np.nan
    x = T.dmatrix("x")
    order, ordered = bptt.function([x], [TT.argsort(x, axis), T.sort(x, axis)], mode=mode)(values)
    np.testing.assert_array_equal(order, np.argsort(values, axis=axis, kind="stable"))
    np.testing.assert_array_equal(ordered, np.sort(values, axis=axis))
    assert order.dtype == np.int64


def test_argsort_of_a_transposed_3d_input(mode):
    x = T.dtensor3("x")
    values = RNG.standard_normal((3, 4, 5))
    got = bptt.function([x], T.argsort(x.dimshuffle(2, 0, 1), axis=1), mode=mode)(values)
    np.testing.assert_array_equal(got, np.argsort(values.transpose(2, 0, 1), axis=1))


def test_sort_errors():
    with pytest.raises(ValueError, match="axis must be"):
        T.sort(T.dmatrix(), axis=2)
    with pytest.raises(ValueError, match="at least one dimension"):
        T.argsort(T.dscalar())
    with pytest.raises(ValueError, match="order"):
        T.sort(T.dvector(), order="f")
