"""debugprint and pprint: content of the output (not exact whitespace)."""
import io
import re

import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.graph.basic import Apply
from bptt.graph.fg import FunctionGraph
from bptt.graph.op import Op
from bptt.printing import debugprint, pprint


def _layer():
    W, x, b = T.matrix("W"), T.vector("x"), T.vector("b")
    h = T.tanh(T.dot(W, x) + b)
    h.name = "h"
    return W, x, b, h


def _lines(text):
    return [line for line in text.splitlines() if line.strip()]


def _ids(line):
    return re.findall(r"\[id ([A-Z]+)\]", line)


def test_tree_shows_ops_ids_types_and_names():
    W, x, b, h = _layer()
    text = debugprint(h, file="str")
    lines = _lines(text)
    assert lines[0].startswith("tanh [id A] <Tensor(float64, (?,))> 'h'")
    assert any("Dot [id" in line for line in lines)
    assert any(line.strip(" |").startswith("W [id") and "Tensor(float64, (?,?))" in line
               for line in lines)
    depth = {line.strip(" |").split(" ")[0]: line.index(line.strip(" |")) for line in lines}
    assert depth["tanh"] < depth["add"] < depth["Dot"] < depth["W"]
    assert depth["b"] == depth["Dot"]          # b and Dot are both inputs of add


def test_op_props_are_printed():
    x = T.matrix("x")
    text = debugprint(x.sum(axis=1).dimshuffle(0, "x"), file="str")
    assert "sum{axis=(1,)}" in text and "DimShuffle{0,x}" in text


def test_repeated_subtree_is_referenced_by_id():
    x = T.vector("x")
    e = T.exp(x)
    text = debugprint((e * e) + e, file="str")
    exp_lines = [line for line in _lines(text) if "exp [id" in line]
    assert len(exp_lines) == 3
    assert len({_ids(line)[0] for line in exp_lines}) == 1
    x_lines = [line for line in _lines(text) if line.strip(" |").startswith("x [id")]
    assert len(x_lines) == 1                    # exp's input is printed once only


def test_list_of_variables_shares_ids():
    W, x, b, h = _layer()
    text = debugprint([h, h * 2], file="str")
    lines = _lines(text)
    second_root = next(i for i, line in enumerate(lines) if line.startswith("mul"))
    assert _ids(lines[0])[0] in "".join(lines[second_root:])


def test_constants_and_unnamed_inputs():
    v = T.vector()
    text = debugprint(v + T.constant(np.float64(2.5)), file="str")
    assert "2.5 [id" in text and "<Tensor(float64, (?,))> [id" in text


def test_function_graph_and_compiled_function():
    W, x, b, h = _layer()
    fg = FunctionGraph([W, x, b], [h])
    assert "tanh [id A]" in debugprint(fg, file="str")
    f = bptt.function([x], -(-x) * 1, mode="PY")
    text = debugprint(f, file="str")
    assert "neg" not in text and "mul" not in text     # the rewritten graph is printed
    assert text.strip().startswith("x [id A]")


def test_writes_to_a_file_and_stdout(capsys):
    x = T.vector("x")
    buf = io.StringIO()
    text = debugprint(T.exp(x), file=buf)
    assert buf.getvalue() == text and "exp" in text
    debugprint(T.exp(x))
    assert "exp [id A]" in capsys.readouterr().out


def test_print_type_can_be_turned_off():
    x = T.vector("x")
    assert "Tensor(" not in debugprint(T.exp(x), file="str", print_type=False)


def test_rejects_other_objects():
    with pytest.raises(TypeError, match="debugprint"):
        debugprint(3)


class _Loop(Op):
    """A stand-in for an op with an inner graph (as Scan exposes it)."""

    __props__ = ()

    def __init__(self):
        self.inner_inputs = [T.vector("x_t"), T.vector("h_tm1")]
        self.inner_outputs = [T.tanh(self.inner_inputs[0] + self.inner_inputs[1])]

    def make_node(self, seq, h0):
        return Apply(self, [seq, h0], [T.matrix()])


def test_inner_graph_is_printed_under_its_node():
    seq, h0 = T.matrix("seq"), T.vector("h0")
    out = T.exp(_Loop()(seq, h0))
    lines = _lines(debugprint(out, file="str"))
    loop_i = next(i for i, line in enumerate(lines) if "_Loop [id" in line)
    header_i = next(i for i, line in enumerate(lines) if "Inner graph of _Loop" in line)
    assert header_i > loop_i and _ids(lines[header_i]) == _ids(lines[loop_i])
    inner = lines[header_i + 1:]
    assert "x_t [id" in inner[0] and "h_tm1 [id" in inner[0]
    assert inner[1].strip(" |").startswith(">tanh [id")
    assert any(">" in line and "add [id" in line for line in inner)
    indent = lambda line: len(line) - len(line.lstrip(" |"))  # noqa: E731
    assert indent(lines[header_i]) > indent(lines[loop_i])


def test_inner_graph_of_a_shared_op_is_printed_once():
    loop = _Loop()
    seq, h0 = T.matrix("seq"), T.vector("h0")
    text = debugprint([loop(seq, h0), loop(seq * 2, h0)], file="str")
    assert text.count("inner inputs:") == 1 and "printed above" in text


def test_deep_graph_does_not_hit_the_recursion_limit():
    x = T.vector("x")
    y = x
    for _ in range(1500):
        y = T.exp(y)
    assert debugprint(y, file="str").count("exp [id") == 1500


def test_pprint_is_infix():
    W, x, b, h = _layer()
    assert pprint(T.tanh(T.dot(W, x) + b)) == "tanh(((W dot x) + b))"
    assert pprint(h * 2 - x) == "((h * 2.0) + -x)"
