"""verify(): each IR invariant, broken on purpose, is caught and the node named."""
import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.graph.fg import FunctionGraph
from bptt.graph.verify import IRError, checked_toposort, verify, verify_variables
from bptt.tensor.type import TensorType


def _graph():
    x, b = T.vector("x"), T.vector("b")
    y = T.exp(x) + b
    fg = FunctionGraph([x, b], [T.tanh(y)])
    out_node = fg.outputs[0].owner
    add_node = out_node.inputs[0].owner
    return fg, add_node, out_node


def test_a_sound_graph_passes():
    fg, _, _ = _graph()
    verify(fg)


def test_a_gradient_graph_passes():
    W, x = T.matrix("W"), T.vector("x")
    g = bptt.grad(T.tanh(T.dot(W, x)).sum(), W)
    verify_variables([g])


def test_output_not_pointing_back():
    fg, add_node, _ = _graph()
    add_node.outputs[0].index = 3
    with pytest.raises(IRError, match="output 0 of node add.*does not point back"):
        verify(fg)


def test_client_missing():
    fg, add_node, _ = _graph()
    fg.clients[add_node.inputs[1]].remove((add_node, 1))
    with pytest.raises(IRError, match="input 1 .*'b'.* of node add.*clients"):
        verify(fg)


def test_client_that_reads_something_else():
    fg, add_node, out_node = _graph()
    x = fg.inputs[0]
    fg.clients[x].append((out_node, 0))
    with pytest.raises(IRError, match="'x'.*lists input 0 of node tanh"):
        verify(fg)


def test_output_client_missing():
    fg, _, _ = _graph()
    fg.clients[fg.outputs[0]].clear()
    with pytest.raises(IRError, match="graph output 0"):
        verify(fg)


def test_cycle():
    fg, add_node, out_node = _graph()
    exp_node = add_node.inputs[0].owner
    # exp now reads tanh's output (by hand: FunctionGraph cannot import a cycle).
    fg.clients[exp_node.inputs[0]].remove((exp_node, 0))
    exp_node.inputs[0] = out_node.outputs[0]
    fg.clients[out_node.outputs[0]].append((exp_node, 0))
    with pytest.raises(IRError, match="cycle"):
        verify(fg)
    with pytest.raises(IRError, match="cycle"):
        checked_toposort(fg.outputs)


def test_ownerless_variable_that_is_not_an_input():
    fg, add_node, _ = _graph()
    stray = T.vector("stray")
    fg.change_input(add_node, 1, stray)
    with pytest.raises(IRError, match="node add.*reads 'stray'.*neither a graph input nor"):
        verify(fg)


def test_make_node_disagrees_with_output_type():
    fg, add_node, _ = _graph()
    add_node.outputs[0].type = TensorType("float32", (None,))
    with pytest.raises(IRError, match="node add.*dtype float32 differs from float64"):
        verify(fg)


def test_make_node_contradicting_static_shape():
    fg, add_node, _ = _graph()
    add_node.outputs[0].type = TensorType("float64", (4,))
    fg.change_input(add_node, 1, T.constant(np.zeros(3)))
    with pytest.raises(IRError, match="node add.*contradicts"):
        verify(fg)


def test_make_node_rejecting_its_inputs():
    fg, add_node, _ = _graph()
    fg.change_input(add_node, 1, T.constant(np.zeros((2, 2))))
    with pytest.raises(IRError, match="node add"):
        verify(fg)


def test_constant_whose_type_rejects_its_data():
    fg, add_node, _ = _graph()
    c = T.constant(np.zeros(3))
    fg.change_input(add_node, 1, c)
    c.data = np.zeros(3, dtype="float32")
    with pytest.raises(IRError, match="constant.*rejects its data"):
        verify(fg)


def test_where_is_added_to_the_message():
    fg, add_node, _ = _graph()
    add_node.outputs[0].index = 3
    with pytest.raises(IRError, match=r"\[after pass 'x'\]"):
        verify(fg, where="after pass 'x'")


def test_grad_hook_verifies_its_result(monkeypatch):
    from bptt.graph import verify as verify_module

    seen = []
    monkeypatch.setattr(verify_module, "verify_variables",
                        lambda outs, where=None: seen.append(where))
    assert bptt.config.check_ir      # tests/conftest.py turns it on
    x = T.vector("x")
    bptt.grad(T.exp(x).sum(), x)
    assert seen == ["in the graph built by grad"]


def test_a_node_verified_before_is_checked_again_once_it_changes():
    # verify remembers the nodes it rebuilt; whatever changes in one afterwards (an
    # output type, an input, the op) must be caught again.
    x = T.vector("x")
    fg, add_node, _ = _graph()
    verify(fg)
    add_node.outputs[0].type = TensorType("float32", (None,))
    with pytest.raises(IRError, match="node add.*dtype float32 differs from float64"):
        verify(fg)

    fg, add_node, _ = _graph()
    verify(fg)
    fg.change_input(add_node, 1, T.constant(np.zeros((2, 2))))
    with pytest.raises(IRError, match=r"node add.*1 dimension\(s\) instead of 2"):
        verify(fg)

    fg, add_node, _ = _graph()
    verify(fg)
    add_node.op = T.lt(x, x).owner.op   # same inputs, a boolean output
    with pytest.raises(IRError, match="node lt.*make_node gives Tensor.bool"):
        verify(fg)
