"""The rewrite engine: node rewriters, drivers, checked replacement, history."""
import numpy as np
import pytest

import bptt.tensor as T
from bptt.graph.fg import FunctionGraph
from bptt.graph.rewriting import (Fixpoint, GraphPass, InToOut, RewriteLimitError,
                                  RewriteTypeError, fired, graph_pass, node_rewriter,
                                  replace_checked, rewrite_history)
from bptt.graph.verify import verify
from bptt.tensor import basic as tb
from bptt.tensor import math as tm
from bptt.tensor.elemwise import Elemwise
from bptt.tensor.shape import DimShuffle


def _ops(fgraph):
    return [str(n.op) for n in fgraph.toposort()]


@node_rewriter([tm.exp])
def exp_to_tanh(fgraph, node):
    return [T.tanh(node.inputs[0])]


@node_rewriter([tm.tanh])
def tanh_to_exp(fgraph, node):
    return [T.exp(node.inputs[0])]


@node_rewriter([tm.neg])
def drop_neg(fgraph, node):
    return [node.inputs[0]]


def test_decorator_records_name_and_tracks():
    assert exp_to_tanh.name == "exp_to_tanh"
    assert exp_to_tanh.applies_to(tm.exp)
    assert not exp_to_tanh.applies_to(tm.log)


def test_tracks_by_class_offers_every_instance():
    seen = []

    @node_rewriter([Elemwise])
    def spy(fgraph, node):
        seen.append(str(node.op))

    x = T.vector("x")
    fg = FunctionGraph([x], [T.exp(T.log(x)).dimshuffle("x", 0)])
    InToOut([spy]).apply(fg)
    assert seen == ["log", "exp"]          # inputs first; DimShuffle not offered


def test_in_to_out_rewrites_every_match_in_one_walk():
    x = T.vector("x")
    fg = FunctionGraph([x], [T.exp(T.exp(x)) + T.exp(x)])
    assert InToOut([exp_to_tanh]).apply(fg)
    assert "exp" not in _ops(fg) and _ops(fg).count("tanh") == 3
    assert fired(fg)["exp_to_tanh"] == 3
    verify(fg)


def test_in_to_out_visits_nodes_created_by_a_rewrite():
    @node_rewriter([tm.log])
    def log_to_neg_exp(fgraph, node):
        return [-T.exp(node.inputs[0])]

    x = T.vector("x")
    fg = FunctionGraph([x], [T.log(x) * 2])
    InToOut([log_to_neg_exp, exp_to_tanh, drop_neg]).apply(fg)
    # One walk: log -> neg(exp), then the new exp -> tanh and the new neg -> its input.
    assert _ops(fg) == ["tanh", "mul"]


def test_in_to_out_reports_no_change():
    x = T.vector("x")
    fg = FunctionGraph([x], [T.log(x)])
    assert not InToOut([exp_to_tanh]).apply(fg)
    assert rewrite_history(fg) == []


def test_dict_result_replaces_named_variables():
    @node_rewriter([tm.exp])
    def as_dict(fgraph, node):
        return {node.outputs[0]: T.sin(node.inputs[0])}

    x = T.vector("x")
    fg = FunctionGraph([x], [T.exp(x)])
    InToOut([as_dict]).apply(fg)
    assert _ops(fg) == ["sin"]


def test_fixpoint_repeats_until_nothing_changes():
    calls = []

    @graph_pass()
    def count(fgraph):
        calls.append(1)
        return len(calls) < 3

    x = T.vector("x")
    fg = FunctionGraph([x], [T.exp(x)])
    assert Fixpoint([count]).apply(fg)
    assert len(calls) == 3


def test_fixpoint_cap_names_the_rewrites_still_firing():
    x = T.vector("x")
    fg = FunctionGraph([x], [T.exp(x)])
    ping_pong = Fixpoint([InToOut([exp_to_tanh]), InToOut([tanh_to_exp])],
                         name="pingpong", max_iterations=4)
    with pytest.raises(RewriteLimitError, match="pingpong.*4 iterations.*exp_to_tanh"):
        ping_pong.apply(fg)


def test_in_to_out_cap_stops_a_rewrite_that_feeds_itself():
    @node_rewriter([tm.exp])
    def forever(fgraph, node):
        return [T.exp(node.inputs[0])]     # a new exp node, offered again, rewritten again

    x = T.vector("x")
    fg = FunctionGraph([x], [T.exp(x)])
    with pytest.raises(RewriteLimitError, match="forever"):
        InToOut([forever], max_replacements=20).apply(fg)


def test_type_check_rejects_another_dtype_naming_the_rewrite():
    @node_rewriter([tm.exp])
    def to_float32(fgraph, node):
        return [T.cast(node.inputs[0], "float32")]

    x = T.dvector("x")
    fg = FunctionGraph([x], [T.exp(x)])
    with pytest.raises(RewriteTypeError, match="to_float32.*dtype float32"):
        InToOut([to_float32]).apply(fg)


def test_type_check_rejects_another_ndim():
    @node_rewriter([tm.exp])
    def to_matrix(fgraph, node):
        return [node.inputs[0].dimshuffle("x", 0)]

    x = T.vector("x")
    fg = FunctionGraph([x], [T.exp(x)])
    with pytest.raises(RewriteTypeError, match="to_matrix.*dimension"):
        InToOut([to_matrix]).apply(fg)


def test_type_check_accepts_a_more_precise_static_shape():
    x = T.vector("x")
    c = T.constant(np.arange(3.0))
    fg = FunctionGraph([x], [T.exp(x) * 2])
    exp_out = fg.outputs[0].owner.inputs[0]
    assert replace_checked(fg, exp_out, c, "to_constant")
    assert fg.outputs[0].owner.inputs[0] is c
    verify(fg)


def test_type_check_rejects_a_contradicting_or_forgotten_static_shape():
    x3 = T.tensor("float64", (3,), "x3")
    fg = FunctionGraph([x3], [T.exp(x3)])
    with pytest.raises(RewriteTypeError, match="contradicts"):
        replace_checked(fg, fg.outputs[0], T.constant(np.zeros(4)), "wrong_size")
    with pytest.raises(RewriteTypeError, match="forgotten"):
        replace_checked(fg, fg.outputs[0], T.vector("v"), "less_precise")


def test_wrong_number_of_replacements_is_an_error():
    @node_rewriter([tm.exp])
    def too_many(fgraph, node):
        return [node.inputs[0], node.inputs[0]]

    x = T.vector("x")
    fg = FunctionGraph([x], [T.exp(x)])
    with pytest.raises(RewriteTypeError, match="too_many.*2 replacements"):
        InToOut([too_many]).apply(fg)


def test_history_records_rewrite_driver_and_node():
    x = T.vector("x")
    fg = FunctionGraph([x], [T.exp(x)])
    InToOut([exp_to_tanh], name="walk").apply(fg)
    (rec,) = rewrite_history(fg)
    assert rec.rewrite == "exp_to_tanh" and rec.driver == "walk" and "exp" in rec.node


def test_graph_pass_wraps_a_function():
    def double_outputs(fgraph):
        return False

    p = GraphPass(double_outputs)
    assert p.name == "double_outputs" and p.apply(None) is False


def test_instance_tracking_matches_equal_ops_only():
    @node_rewriter([DimShuffle(1, ("x", 0))])
    def only_pad_left(fgraph, node):
        return None

    assert only_pad_left.applies_to(DimShuffle(1, ("x", 0)))
    assert not only_pad_left.applies_to(DimShuffle(1, (0, "x")))
    assert not only_pad_left.applies_to(tb.alloc)
