"""Theano's signatures and meanings that third-party libraries (Lasagne among them)
rely on: broadcastable patterns, graph classes under Theano's names."""
import numpy as np
import pytest

import bptt
import bptt.compat.theano as theano
from bptt.compat.theano import tensor as T


def test_tensor_type_takes_theano_broadcastable_pattern():
    ttype = T.TensorType("float64", [False, True])
    assert ttype.shape == (None, 1) and ttype.broadcastable == (False, True)
    x = ttype("x")
    f = theano.function([x], x * 2, mode="PY")
    np.testing.assert_array_equal(f(np.ones((3, 1))), 2 * np.ones((3, 1)))
    assert T.TensorType("int32", (np.False_,) * 3).shape == (None,) * 3
    assert isinstance(T.dmatrix().type, T.TensorType)
    assert issubclass(bptt.tensor.TensorType, T.TensorType)
    assert T.TensorType("float32", shape=(2, None)).shape == (2, None)


def test_tensor_type_refuses_lengths_for_the_pattern():
    with pytest.raises(TypeError, match="holds lengths.*True/False flag"):
        T.TensorType("float64", (3, 4))
    with pytest.raises(TypeError, match="broadcastable pattern"):
        T.TensorType("float64")


def test_shared_takes_theano_broadcastable_pattern():
    b = theano.shared(np.zeros((1, 4)), name="b", broadcastable=(True, False))
    assert b.type.shape == (1, None) and b.broadcastable == (True, False)
    b.set_value(np.ones((1, 7)))   # a False dimension may change length
    w = theano.shared(np.zeros((3, 4)), broadcastable=(False, False), strict=False,
                      allow_downcast=None, borrow=True)
    assert w.type.shape == (None, None)
    with pytest.raises(ValueError, match="'c': dimension 0 is marked broadcastable.*length 1"):
        theano.shared(np.zeros((2, 4)), name="c", broadcastable=(True, False))
    with pytest.raises(ValueError, match=r"broadcastable=\(True,\) has 1 entries.*\(2, 4\)"):
        theano.shared(np.zeros((2, 4)), broadcastable=(True,))
    assert theano.compile.shared is theano.shared


def test_graph_classes_have_theano_names():
    x, s = T.dvector("x"), theano.shared(np.zeros(2))
    for cls in (theano.Variable, T.Variable, theano.gof.Variable):
        assert isinstance(x, cls) and isinstance(x + 1, cls)
    assert isinstance(T.constant(1.0), T.Constant) and isinstance((x + 1).owner, theano.Apply)
    assert isinstance(s, theano.compile.SharedVariable)
    assert not isinstance(x, theano.compile.SharedVariable)

