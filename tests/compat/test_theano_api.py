"""Theano's signatures and meanings that third-party libraries (Lasagne among them)
rely on: broadcastable patterns, graph classes under Theano's names, scan's
`strict`, gradient clipping, graph traversal order and comparison."""
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


def test_strict_scan_requires_only_shared_variables_as_in_theano(mode):
    """Theano's strict=True asks for the shared variables the step reads; another free
    variable becomes a non-sequence as without strict."""
    w, v, x0 = theano.shared(np.eye(2) * 2, name="w"), T.dvector("v"), T.dvector("x0")
    hs, _ = theano.scan(lambda h, w: T.dot(h, w) + v, outputs_info=[x0], non_sequences=[w],
                        n_steps=3, strict=True)
    got = theano.function([x0, v], hs, mode=mode)(np.ones(2), np.array([1.0, -1.0]))
    np.testing.assert_allclose(got, [[3, 1], [7, 1], [15, 1]])
    with pytest.raises(theano.gof.fg.MissingInputError,
                       match=r"\(strict=True\).*uses 'w'.*non_sequences"):
        theano.scan(lambda h: T.dot(h, w) + v, outputs_info=[x0], n_steps=3, strict=True)


def test_bptt_strict_requires_every_variable_unless_shared_only():
    v, w = T.dvector("v"), bptt.shared(np.ones(2), name="w")
    with pytest.raises(bptt.MissingInputError, match="strict=True.*uses 'v'"):
        bptt.scan(lambda h: h + v, outputs_info=[T.dvector()], n_steps=3, strict=True)
    bptt.scan(lambda h: h + v, outputs_info=[T.dvector()], n_steps=3, strict="shared")
    with pytest.raises(bptt.MissingInputError, match="strict='shared'.*uses 'w'"):
        bptt.scan(lambda h: h + w, outputs_info=[T.dvector()], n_steps=3, strict="shared")
    with pytest.raises(ValueError, match="strict must be True, False or 'shared', got 'yes'"):
        bptt.scan(lambda h: h, outputs_info=[T.dvector()], n_steps=3, strict="yes")


def test_theano_scan_is_named_after_its_caller():
    hs, _ = theano.scan(lambda h: h * 2, outputs_info=[T.dvector()], n_steps=3)
    from bptt.graph.traversal import toposort
    from bptt.scan.op import Scan

    scan_node = next(n for n in toposort([hs]) if isinstance(n.op, Scan))
    assert scan_node.op.info.name.startswith("scan@test_theano_api.py:")


def test_grad_clip_is_in_theano_gradient():
    x = T.dvector("x")
    g = theano.grad((theano.gradient.grad_clip(x, -0.5, 0.5) * 4).sum(), x)
    np.testing.assert_array_equal(theano.function([x], g, mode="PY")(np.zeros(2)), [0.5, 0.5])


def test_graph_inputs_come_in_theano_order():
    """Theano searches from the last variable given, each node's inputs in order."""
    W, b, c = (theano.shared(np.zeros(2), name=n) for n in "Wbc")
    x = T.dvector("x")
    assert theano.gof.graph.inputs([W, b]) == [b, W]
    assert theano.gof.graph.inputs(reversed([W, b])) == [W, b]
    assert theano.gof.graph.inputs([x * W + b, c]) == [c, x, W, b]
    y = x * W
    assert theano.gof.graph.inputs([y + b], blockers=[y]) == [b]
    assert theano.gof.graph.ancestors([y + b], blockers=[y])[1:] == [y, b]


class _TwoOutputs(bptt.graph.op.Op):
    def make_node(self, x):
        return bptt.graph.basic.Apply(self, [x], [x.type(), x.type()])


def test_equal_computations_compares_structure():
    from bptt.compat.theano.scan_module.scan_utils import equal_computations

    x, y = T.dmatrix("x"), T.dmatrix("y")
    assert equal_computations([x.mean() + 2 * y], [x.mean() + 2 * y])
    assert not equal_computations([x.mean()], [y.mean()])
    assert not equal_computations([x.sum(0)], [x.sum(1)])
    assert not equal_computations([x + 2], [x + 3])
    assert equal_computations([x + 1], [y + 1], in_xs=[x], in_ys=[y])
    assert not equal_computations([x + 1], [x + 1], in_xs=[x], in_ys=[y])
    first, second = _TwoOutputs()(x)
    assert not equal_computations([first], [second])
    assert equal_computations([second], [_TwoOutputs()(x)[1]])
    assert equal_computations([x, T.constant(2.0)], [x, T.constant(2.0)])
    with pytest.raises(ValueError, match="2 graphs to compare with 1"):
        equal_computations([x, y], [x])


def test_is_same_graph_with_givens():
    is_same_graph = theano.gof.graph.is_same_graph
    x, y, z = T.dvector("x"), T.dvector("y"), T.dvector("z")
    assert is_same_graph(x.mean(), x.mean()) and not is_same_graph(x.mean(), x.sum())
    assert is_same_graph(x + y, z + y, givens={x: z})
    assert not is_same_graph(x + y, z + y)


def test_param_is_theano_older_name_for_in():
    x, decay = T.dscalar("x"), T.dscalar("decay")
    f = theano.function([x, theano.Param(decay, default=0.9)], x * decay, mode="PY")
    assert f(2.0) == pytest.approx(1.8) and f(2.0, 0.5) == 1.0 and f(2.0, decay=0.25) == 0.5
    assert theano.compile.io.Param is theano.Param


def test_abstract_conv_holds_conv2d_and_no_op_classes():
    """Lasagne reads T.nnet.abstract_conv, without importing it, when lasagne.layers is
    imported, and probes it for op classes with hasattr: a fresh process shows what an
    attribute access finds."""
    import subprocess
    import sys

    probe = ("import bptt.compat.theano.tensor as T; a = T.nnet.abstract_conv; "
             "print(a.conv2d is T.nnet.conv2d, hasattr(a, 'AbstractConv3d_gradInputs'))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert out.stdout.split() == ["True", "False"], out.stderr[-500:]


def test_to_one_hot_matches_numpy(mode):
    y, k = T.ivector("y"), T.lscalar("k")
    f = theano.function([y, k], [T.extra_ops.to_one_hot(y, k),
                                 T.extra_ops.to_one_hot(y, 4, dtype="int8")], mode=mode)
    yv = np.array([2, 0, 3, 3], dtype="int32")
    rows, small = f(yv, 5)
    np.testing.assert_array_equal(rows, np.eye(5)[yv])
    assert rows.dtype == bptt.config.floatX and small.dtype == np.int8
    np.testing.assert_array_equal(small, np.eye(4, dtype="int8")[yv])
    with pytest.raises(IndexError):
        f(np.array([4], dtype="int32"), 3)
    with pytest.raises(TypeError, match="vector of integer class indices.*astype"):
        T.extra_ops.to_one_hot(T.dvector(), 3)
