"""T.nnet: values against NumPy formulas, stability, gradients."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T

from ..strategies import arrays, assert_same, run, shapes


def _softmax(v, axis=-1):
    e = np.exp(v - v.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _log_softmax(v, axis=-1):
    z = v - v.max(axis=axis, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


def test_namespace():
    for name in ("sigmoid", "softmax", "softplus", "relu", "log_softmax", "binary_crossentropy",
                 "categorical_crossentropy", "hard_sigmoid", "ultra_fast_sigmoid"):
        assert callable(getattr(T.nnet, name))
    assert T.nnet.sigmoid is T.sigmoid


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@given(data=st.data())
def test_nnet_functions_match_numpy(dtype, mode, data):
    x = T.tensor(dtype, (None, None))
    v = data.draw(arrays(dtype, shapes(ndim=2, min_side=1), domain="real")) * np.asarray(10, dtype)
    p = T.nnet.sigmoid(x)
    outs = [T.nnet.softmax(x), T.nnet.softmax(x, axis=0), T.nnet.log_softmax(x), T.nnet.relu(x),
            T.nnet.relu(x, 0.1), T.nnet.softplus(x), p, T.nnet.hard_sigmoid(x),
            T.nnet.binary_crossentropy(p, 0.25)]
    got = run([x], outs, [v], mode)
    with np.errstate(all="ignore"):
        sig = 1 / (1 + np.exp(-v))
        want = [_softmax(v), _softmax(v, 0), _log_softmax(v), np.maximum(v, 0),
                np.maximum(v, np.asarray(0.1, dtype) * v), np.logaddexp(0, v), sig,
                np.clip(np.asarray(0.2, dtype) * v + np.asarray(0.5, dtype), 0, 1),
                # log(sigmoid) is built as -softplus(-x): the stable form of the same value
                np.asarray(0.25, dtype) * np.logaddexp(0, -v)
                + np.asarray(0.75, dtype) * np.logaddexp(0, v)]
    for k, (g, w) in enumerate(zip(got, want)):
        assert_same(g, w.astype(dtype), scale=10, what=f"output {k}")


def test_softmax_is_stable_for_large_inputs(mode):
    x = T.dvector()
    got = run([x], [T.nnet.softmax(x), T.nnet.log_softmax(x), T.nnet.softplus(x)],
              [np.array([1000.0, 0.0, -1000.0])], mode)
    assert_same(got[0], np.array([1.0, 0.0, 0.0]))
    assert_same(got[1], np.array([0.0, -1000.0, -2000.0]))
    assert_same(got[2], np.array([1000.0, np.log(2), 0.0]))


def test_categorical_crossentropy(mode):
    p, t, i = T.dmatrix(), T.dmatrix(), T.ivector()
    vp = np.array([[0.2, 0.7, 0.1], [0.5, 0.25, 0.25]])
    vt = np.array([[0.0, 1.0, 0.0], [0.5, 0.5, 0.0]])
    got = run([p, t, i], [T.nnet.categorical_crossentropy(p, t),
                          T.nnet.categorical_crossentropy(p, i)],
              [vp, vt, np.array([1, 0], "int32")], mode)
    assert_same(got[0], -(vt * np.log(vp)).sum(axis=-1))
    assert_same(got[1], -np.log(vp[[0, 1], [1, 0]]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@given(data=st.data())
def test_nnet_gradients(dtype, mode, data):
    v = data.draw(arrays(dtype, shapes(ndim=2, min_side=1, max_side=3), domain="nonzero"))
    # All derived: this checks the compositions (max-shift, keepdims) end to end.
    bptt.verify_grad(lambda x: [T.nnet.softmax(x), T.nnet.log_softmax(x, axis=0)], [v], mode=mode)
