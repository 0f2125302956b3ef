"""FunctionGraph bookkeeping: what a replacement imports, prunes and lists as clients."""
import bptt.tensor as T
from bptt.graph.fg import FunctionGraph
from bptt.graph.verify import verify


def _graph():
    x, b = T.vector("x"), T.vector("b")
    e = T.exp(x)
    fg = FunctionGraph([x, b], [T.tanh(e + b)], clone=False)
    return fg, x, b, e


def test_a_replacement_imports_only_the_nodes_the_graph_lacks():
    fg, x, b, e = _graph()
    add = fg.outputs[0].owner.inputs[0]
    kept = set(fg.apply_nodes) - {add.owner}
    new = T.sin(e) * b                     # reads exp(x), already in the graph
    fg.replace(add, new)
    assert fg.apply_nodes == kept | {new.owner, new.owner.inputs[0].owner}
    assert (new.owner.inputs[0].owner, 0) in fg.clients[e]
    assert (new.owner, 1) in fg.clients[b]
    assert add not in fg.variables        # the old add is pruned
    verify(fg)


def test_a_replacement_reading_new_and_old_values_keeps_clients_exact():
    fg, x, b, e = _graph()
    add = fg.outputs[0].owner.inputs[0]
    c = T.cos(x)
    new = (c + e) * (c - b)                # cos(x) is new and read twice
    fg.replace(add, new)
    assert sorted(i for _, i in fg.clients[c]) == [0, 0]
    assert len([n for n in fg.apply_nodes if n.op == c.owner.op]) == 1
    assert len(fg.clients[e]) == 1
    verify(fg)


def test_an_input_with_an_owner_blocks_the_import():
    x = T.vector("x")
    mid = T.exp(x)                         # given as an input: its node is not the graph's
    fg = FunctionGraph([mid], [T.tanh(mid)], clone=False)
    assert [n.op for n in fg.apply_nodes] == [fg.outputs[0].owner.op]
    fg.replace(fg.outputs[0], T.sin(mid))
    assert mid.owner not in fg.apply_nodes
    verify(fg)
