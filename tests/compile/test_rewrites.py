"""Each rewrite: the graph's structure after it, and equal values with and without it.

Values are compared by linking the same graph twice in the given mode, once
as built and once rewritten (only by the rewrite under test, or by the whole
pipeline), and calling both on data whose run-time shapes include size-1
dimensions, where a wrong shape proof would show.
"""
import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.compile.mode import linker_for
from bptt.compile.passes import pm, run_passes
from bptt.graph.basic import Apply
from bptt.graph.fg import FunctionGraph
from bptt.graph.op import Op
from bptt.graph.replace import clone_replace
from bptt.graph.rewriting import InToOut, fired
from bptt.graph.verify import verify
from bptt.tensor import scalar_ops as so
from bptt.tensor.basic import Alloc, alloc
from bptt.tensor.elemwise import Elemwise
from bptt.tensor.rewriting import constant_folding, merge, remove_dead_code
from bptt.tensor.rewriting import canonicalize as canon
from bptt.tensor.rewriting import shape as shp
from bptt.tensor.rewriting import sizes
from bptt.tensor.shape import (BroadcastTo, DimShuffle, Shape, Shape_i, SumTo, broadcast_to,
                               sum_to)
from bptt.tensor.type import TensorType

RNG = np.random.default_rng(0)


def _rewritten(inputs, outputs, rewriter):
    fg = FunctionGraph(inputs, outputs)
    if rewriter == "all":
        run_passes(fg)
    elif rewriter is not None:
        rewriter.apply(fg)
        verify(fg)
    return fg


def _walk(*rewriters):
    return InToOut(list(rewriters))


def _ops(fg):
    return [str(n.op) for n in fg.toposort()]


def _check_values(inputs, outputs, fg, mode, *arg_sets):
    """The rewritten graph `fg` computes what `outputs` compute, on every argument set.

    Both are linked as one graph (the outputs as built, read from fg's
    inputs, after fg's outputs) to pay for one numba compilation, not two.
    """
    raw = clone_replace(list(outputs), dict(zip(inputs, fg.inputs)))
    both = linker_for(mode)(FunctionGraph(fg.inputs, list(fg.outputs) + raw, clone=False))
    n = len(fg.outputs)
    for args in arg_sets:
        results = both(*[np.asarray(a) for a in args])
        for got, want in zip(results[:n], results[n:]):
            got, want = np.asarray(got), np.asarray(want)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-12)


def _data(*shape):
    return RNG.standard_normal(shape)


# -- merge -------------------------------------------------------------------------

def test_merge_common_subexpressions_and_constants(mode):
    x = T.vector("x")
    a = T.exp(x) * T.constant(2.0)
    b = T.exp(x) * T.constant(2.0)
    outs = [a + b, T.tanh(x + 1.5) - T.tanh(x + 1.5)]
    fg = _rewritten([x], outs, merge)
    ops = _ops(fg)
    assert ops.count("exp") == 1 and ops.count("tanh") == 1
    assert ops.count("mul") == 1
    assert fired(fg)["merge"] >= 4 and fired(fg)["merge_constants"] >= 1
    _check_values([x], outs, fg, mode, [_data(4)], [_data(1)])


def test_merge_keeps_ops_with_different_props_apart():
    x = T.matrix("x")
    fg = _rewritten([x], [x.sum(axis=0), x.sum(axis=1)], merge)
    assert len(fg.apply_nodes) == 2


def test_merge_never_merges_stateful_nodes():
    x = T.vector("x")
    d1, d2 = _Draw()(x), _Draw()(x)
    fg = _rewritten([x], [d1 + d2], merge)
    assert _ops(fg).count("_Draw") == 2


# -- constant folding ------------------------------------------------------------------

class _Draw(Op):
    """A stand-in for a random draw: stateful, so never folded or merged."""

    stateful = True

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] + np.random.default_rng().random()


class _Fails(Op):
    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        raise ValueError("fails at run time")


def test_constant_folding_computes_constant_subgraphs(mode):
    x = T.vector("x")
    c = T.exp(T.constant(np.arange(3.0))) * 2 + T.constant(1.0)
    outs = [x + c]
    fg = _rewritten([x], outs, _walk(constant_folding))
    assert _ops(fg) == ["add"]
    folded = fg.outputs[0].owner.inputs[1]
    np.testing.assert_allclose(folded.data, np.exp(np.arange(3.0)) * 2 + 1)
    _check_values([x], outs, fg, mode, [_data(3)], [_data(1)])


@pytest.mark.parametrize("make", [
    lambda: T.zeros((200, 100)),                     # 20,000 elements: too large
    lambda: _Draw()(T.constant(np.zeros(2))),        # stateful
    lambda: bptt.shared(np.float64(3.0)) * 2,        # reads a shared variable
    lambda: _Fails()(T.constant(np.zeros(2))),     # perform fails: left for run time
])
def test_constant_folding_leaves_alone(make):
    out = make()
    fg = FunctionGraph([], [out]) if not _reads_shared(out) else \
        FunctionGraph(list(_shared_of(out)), [out])
    n = len(fg.apply_nodes)
    _walk(constant_folding).apply(fg)
    assert len(fg.apply_nodes) == n and not fired(fg)


def _shared_of(out):
    from bptt.tensor.sharedvar import SharedVariable
    from bptt.graph.traversal import graph_inputs

    return [v for v in graph_inputs([out]) if isinstance(v, SharedVariable)]


def _reads_shared(out):
    return bool(_shared_of(out))


def test_folded_output_does_not_hand_out_the_constant(mode):
    f = bptt.function([], T.constant(np.arange(3.0)) * 2, mode=mode)
    assert "constant_folding" in fired(f.fgraph)
    first = f()
    first[:] = -1
    np.testing.assert_array_equal(f(), [0.0, 2.0, 4.0])


# -- dead code ---------------------------------------------------------------------------

def test_dead_code_removal_drops_unneeded_nodes():
    x = T.vector("x")
    fg = FunctionGraph([x], [T.exp(x)])
    dead = T.tanh(fg.inputs[0]) + T.constant(3.0)   # imported, but no output needs it
    for node in (dead.owner.inputs[0].owner, dead.owner):
        fg._import_node(node)
    assert len(fg.apply_nodes) == 3
    assert remove_dead_code.apply(fg)
    assert _ops(fg) == ["exp"] and len(fg.apply_nodes) == 1
    assert all(n == "output" or n in fg.apply_nodes
               for cl in fg.clients.values() for n, _ in cl)
    verify(fg)
    assert not remove_dead_code.apply(fg)


# -- shape rewrites ---------------------------------------------------------------------------

def test_subtensor_of_shape_becomes_shape_i(mode):
    x = T.matrix("x")
    outs = [x.shape[1] * 2, x.shape[-2] + 0 * x.shape[0]]
    fg = _rewritten([x], outs, _walk(*shp.shape_rewriters()))
    assert "Shape" not in _ops(fg)
    assert {"Shape_i{i=0}", "Shape_i{i=1}"} <= set(_ops(fg))
    assert fired(fg)["subtensor_of_shape"] >= 2
    _check_values([x], outs, fg, mode, [_data(2, 3)], [_data(1, 1)])


def test_shape_i_of_static_dim_is_a_constant(mode):
    x = T.tensor("float64", (3, None), "x")
    outs = [Shape_i(0)(x) * Shape_i(1)(x)]
    fg = _rewritten([x], outs, _walk(shp.shape_i_of_static_dim))
    assert _ops(fg) == ["Shape_i{i=1}", "mul"]
    assert int(fg.outputs[0].owner.inputs[0].data) == 3
    _check_values([x], outs, fg, mode, [_data(3, 4)])


def test_shape_i_comes_from_alloc_and_broadcast_to_shape_inputs(mode):
    v, n, m = T.vector("v"), T.lscalar("n"), T.lscalar("m")
    a = alloc(v, n, m)
    b = broadcast_to(v, T.stack([n, m]))
    outs = [Shape_i(0)(a) + Shape_i(1)(a), Shape_i(0)(b) * Shape_i(1)(b)]
    fg = _rewritten([v, n, m], outs, _walk(shp.shape_i_from_source))
    assert not any(op.startswith("Shape_i") for op in _ops(fg))
    assert fg.outputs[0].owner.inputs[0] is fg.inputs[1]
    _check_values([v, n, m], outs, fg, mode, [_data(3), 2, 3], [_data(1), 4, 5])


def test_shape_i_is_lifted_through_elementwise_and_dot(mode):
    W, x = T.matrix("W"), T.vector("x")
    h = T.tanh(T.dot(W, x))
    outs = [Shape_i(0)(h) * 1, T.exp(h)]
    fg = _rewritten([W, x], outs, _walk(shp.shape_i_from_source))
    shape_node = fg.outputs[0].owner.inputs[0].owner
    assert isinstance(shape_node.op, Shape_i) and shape_node.inputs[0] is fg.inputs[0]
    _check_values([W, x], outs, fg, mode, [_data(3, 2), _data(2)])


def test_shape_i_not_lifted_where_broadcasting_leaves_the_size_unknown():
    x, b = T.vector("x"), T.vector("b")
    fg = _rewritten([x, b], [Shape_i(0)(x + b)], _walk(shp.shape_i_from_source))
    assert not fired(fg)


def test_shape_i_never_becomes_a_value_computed_from_itself():
    """A size class whose best-known name is ``switch(n == 1, n, n)`` with n = Shape_i(x):
    replacing n by it would make a cycle (found by the scan oracle in a Hessian's step)."""
    x = T.matrix("x")
    n = Shape_i(0)(x)
    wide = T.switch(T.eq(n, 1), n, n)
    fg = FunctionGraph([x], [wide * 2])
    facts = sizes.size_facts(fg)
    facts.union(sizes.dim_key(fg, fg.inputs[0], 0), ("value", fg.outputs[0].owner.inputs[0]))
    _walk(shp.shape_i_from_source).apply(fg)
    verify(fg)
    assert not fired(fg)


def test_shape_of_static_shape_is_a_constant(mode):
    x = T.tensor("float64", (2, 3), "x")
    outs = [Shape()(x) + 1]
    fg = _rewritten([x], outs, _walk(shp.shape_of_static))
    assert _ops(fg) == ["add"]
    _check_values([x], outs, fg, mode, [_data(2, 3)])


def test_useless_sum_to_removed_when_shapes_provably_equal(mode):
    x = T.matrix("x")
    g = T.exp(x) * T.tanh(x)
    outs = [sum_to(g, x.shape)]
    fg = _rewritten([x], outs, _walk(*shp.shape_rewriters()))
    assert "SumTo" not in _ops(fg)
    _check_values([x], outs, fg, mode, [_data(2, 3)], [_data(1, 3)])


def test_sum_to_kept_when_the_target_may_broadcast():
    # b may have size 1 at run time (the layer-gradient test below runs that case).
    x, b = T.vector("x"), T.vector("b")
    fg = _rewritten([x, b], [sum_to(x + b, b.shape)], "all")
    assert "SumTo" in _ops(fg)


def test_useless_broadcast_to_removed(mode):
    x = T.matrix("x")
    outs = [broadcast_to(T.exp(x), x.shape) * 2]
    fg = _rewritten([x], outs, _walk(*shp.shape_rewriters()))
    assert "BroadcastTo{ndim=2}" not in _ops(fg)
    _check_values([x], outs, fg, mode, [_data(2, 3)], [_data(1, 1)])


def test_broadcast_to_kept_when_it_broadcasts():
    x, y = T.matrix("x"), T.matrix("y")
    fg = _rewritten([x, y], [broadcast_to(x, y.shape) * 2], "all")
    assert "BroadcastTo{ndim=2}" in _ops(fg)


def test_useless_alloc_removed(mode):
    x = T.matrix("x")
    outs = [alloc(T.exp(x), x.shape[0], x.shape[1]) + 1]
    fg = _rewritten([x], outs, _walk(*shp.shape_rewriters()))
    assert not any(isinstance(n.op, Alloc) for n in fg.apply_nodes)
    _check_values([x], outs, fg, mode, [_data(2, 3)], [_data(1, 1)])


def test_alloc_kept_when_it_broadcasts():
    x, n = T.vector("x"), T.lscalar("n")
    fg = _rewritten([x, n], [alloc(x, n, x.shape[0]) + 1], "all")
    assert any(isinstance(nd.op, Alloc) for nd in fg.apply_nodes)


# -- algebraic canonicalizations -----------------------------------------------------------------

def test_mul_by_one_and_add_zero(mode):
    x = T.matrix("x")
    outs = [(x * 1) * T.ones_like(x) + T.zeros_like(x),
            T.exp(x) * broadcast_to(T.constant(1.0), x.shape)]
    fg = _rewritten([x], outs, _walk(*shp.shape_rewriters(), canon.mul_by_one,
                                     canon.add_zero, constant_folding))
    assert fg.outputs[0] is fg.inputs[0]
    assert _ops(fg) == ["exp"]
    assert fired(fg)["mul_by_one"] >= 3 and fired(fg)["add_zero"] == 1
    _check_values([x], outs, fg, mode, [_data(2, 3)], [_data(1, 1)])


@pytest.mark.parametrize("make", [
    lambda x, i: x * T.constant(np.ones(3)),          # the ones give the static size 3
    lambda x, i: i * 1.0,                            # the 1.0 makes the result a float
    lambda x, i: T.constant(np.float64(2.0)) * T.ones_like(x),   # the ones give the shape
    lambda x, i: x + T.zeros((2, 3)),                 # the zeros broadcast x
])
def test_neutral_operands_kept_when_they_matter(make):
    x, i = T.vector("x"), T.ivector("i")
    outs = [make(x, i)]
    fg = _rewritten([x, i], outs, _walk(canon.mul_by_one, canon.add_zero))
    assert not fired(fg)


def test_neg_neg(mode):
    x = T.vector("x")
    outs = [-(-x) * 2, -(-(-x))]
    fg = _rewritten([x], outs, _walk(canon.neg_neg))
    assert _ops(fg) == ["mul", "neg"]
    _check_values([x], outs, fg, mode, [_data(3)])


def test_dimshuffle_of_dimshuffle(mode):
    x = T.matrix("x")
    outs = [x.T.T + 1, x.dimshuffle("x", 0, 1).dimshuffle(2, 1, 0)]
    fg = _rewritten([x], outs, _walk(canon.dimshuffle_of_dimshuffle))
    ds = [n.op for n in fg.apply_nodes if isinstance(n.op, DimShuffle)]
    assert [op.new_order for op in ds] == [(1, 0, "x")]
    assert fg.outputs[0].owner.inputs[0] is fg.inputs[0]
    _check_values([x], outs, fg, mode, [_data(2, 3)])


def test_identity_dimshuffle_removed(mode):
    x = T.matrix("x")
    outs = [DimShuffle(2, (0, 1))(x) * 2]
    fg = _rewritten([x], outs, _walk(canon.useless_dimshuffle))
    assert _ops(fg) == ["mul"]
    _check_values([x], outs, fg, mode, [_data(2, 3)])


def test_cast_to_own_dtype_removed(mode):
    x = T.fvector("x")
    outs = [Elemwise(so.Cast("float32"))(x) * 2, Elemwise(so.Cast("float64"))(x)]
    fg = _rewritten([x], outs, _walk(canon.useless_cast))
    assert _ops(fg) == ["mul", "cast_float64"]
    _check_values([x], outs, fg, mode, [_data(3).astype("float32")])


def test_sum_to_of_sum_to_collapses(mode):
    # g (4, 3) summed to x + y's shape, then to x's; and a 3-d g summed twice.
    x, y, g, g3 = T.matrix("x"), T.matrix("y"), T.matrix("g"), T.tensor3("g3")
    inner = sum_to(g, (x + y).shape)
    outs = [sum_to(inner, x.shape) * 2, sum_to(sum_to(g3, y.shape), (y.shape[1],))]
    fg = _rewritten([x, y, g, g3], outs, _walk(shp.sum_to_of_sum_to))
    sums = [n for n in fg.apply_nodes if isinstance(n.op, SumTo)]
    assert len(sums) == 2 and all(n.inputs[0] in fg.inputs for n in sums)
    _check_values([x, y, g, g3], outs, fg, mode,
                  [_data(1, 3), _data(4, 3), _data(4, 3), _data(2, 4, 3)],
                  [_data(4, 1), _data(1, 3), _data(4, 3), _data(2, 1, 3)],
                  [_data(4, 3), _data(4, 3), _data(4, 3), _data(2, 4, 3)])


def test_sum_to_of_sum_to_kept_when_the_inner_sum_is_read_elsewhere():
    x, y, g = T.matrix("x"), T.matrix("y"), T.matrix("g")
    inner = sum_to(g, (x + y).shape)
    fg = _rewritten([x, y, g], [sum_to(inner, x.shape), inner], _walk(shp.sum_to_of_sum_to))
    assert not fired(fg)


def test_gradient_sum_to_gone_when_the_gradient_is_elementwise_of_the_input(mode):
    # d/dx of sum(tanh(x) * exp(x)): every partial has x's shape, so no SumTo is left.
    x = T.matrix("x")
    outs = bptt.grad((T.tanh(x) * T.exp(x)).sum(), [x])
    fg = _rewritten([x], outs, "all")
    assert not any(isinstance(n.op, (SumTo, Alloc, Shape, Shape_i)) for n in fg.apply_nodes)
    _check_values([x], outs, fg, mode, [_data(2, 3)], [_data(1, 1)])


_SPECIAL = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 1e200, -1e-200])


def test_pow_by_one_and_two(mode):
    x, i = T.vector("x"), T.lvector("i")
    outs = [x ** 1 * 3, x ** 2 + 1, x ** T.constant(np.full((2, 1), 2.0)) + 1,
            x ** 3, i ** 2, x ** 2.5]
    fg = _rewritten([x, i], outs, _walk(canon.pow_small_int))
    pows = [n for n in fg.apply_nodes if _is_elemwise(n, so.Pow)]
    # kept: the matrix exponent (it broadcasts x), x ** 3, the integer i ** 2, x ** 2.5
    assert len(pows) == 4 and fired(fg)["pow_small_int"] == 2
    n = len(_SPECIAL)
    _check_values([x, i], outs, fg, mode, [_SPECIAL, np.arange(n) - 4])


def _is_elemwise(node, scalar_cls):
    return isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, scalar_cls)


def test_switch_with_a_constant_condition(mode):
    x, m = T.vector("x"), T.matrix("m")
    outs = [T.switch(T.constant(False), 0.0, 2.0 * x),
            T.switch(T.constant(True), x, m),                 # x must be broadcast to m
            T.switch(T.constant(np.array([True, True])), m, 0.0),
            T.switch(T.constant(np.array([True, False])), x, 1.0)]
    fg = _rewritten([x, m], outs, _walk(canon.switch_constant_condition))
    assert fired(fg)["switch_constant_condition"] == 3
    assert [_is_elemwise(o.owner, so.Switch) for o in fg.outputs] == [False] * 3 + [True]
    assert isinstance(fg.outputs[1].owner.op, Alloc)
    _check_values([x, m], outs, fg, mode, [_data(2), _data(3, 2)], [_data(1), _data(3, 2)],
                  [_data(2), _data(3, 1)])


def test_elemwise_of_broadcast_keeps_the_value(mode):
    x, y = T.matrix("x"), T.matrix("y")
    half = broadcast_to(T.constant(np.full((1, 1), 0.5)), x.shape)
    outs = [half * T.exp(x), alloc(2.0, x.shape[0], x.shape[1]) + x,
            broadcast_to(T.constant(3.0), x.shape) + y]      # y may not have x's shape
    fg = _rewritten([x, y], outs, _walk(canon.elemwise_of_broadcast))
    assert fired(fg)["elemwise_of_broadcast"] == 2
    kept = [n for n in fg.apply_nodes if isinstance(n.op, (Alloc, BroadcastTo))]
    assert len(kept) == 1 and kept[0].outputs[0] in fg.outputs[2].owner.inputs
    _check_values([x, y], outs, fg, mode, [_data(2, 3), _data(2, 3)], [_data(2, 3), _data(1, 3)])


def test_gradient_of_a_square_has_no_pow_switch_or_broadcast(mode):
    # 0.5 * sum(x ** 2): the sweep builds BroadcastTo(0.5, shape) * switch(False, 0, 2 * x ** 1).
    x = T.tensor3("x")
    outs = bptt.grad(0.5 * (x ** 2).sum(), [x])
    fg = _rewritten([x], outs, "all")
    names = " ".join(_ops(fg))
    assert not any(k in names for k in ("pow", "switch", "BroadcastTo", "Alloc", "Shape"))
    _check_values([x], outs, fg, mode, [_data(2, 1, 3)])


def test_add_of_incs_into_zeros_shares_one_buffer(mode):
    x, a, c = T.matrix("x"), T.matrix("a"), T.matrix("c")
    z = T.zeros_like(x)
    outs = [T.inc_subtensor(z[:, :2], a) + T.set_subtensor(z[:, 2:], T.exp(x[:, 2:]))
            + T.inc_subtensor(z[:, 1:3], c) + x]                 # overlapping regions add up
    fg = _rewritten([x, a, c], outs, _walk(canon.add_of_incs_into_zeros))
    assert fired(fg)["add_of_incs_into_zeros"] >= 1
    incs = [n for n in fg.apply_nodes if type(n.op).__name__ == "IncSubtensor"]
    assert len(incs) == 3 and not any(n.op.set_instead_of_inc for n in incs)
    assert len({n.inputs[0] for n in incs} & set(z.owner.outputs)) <= 1
    _check_values([x, a, c], outs, fg, mode, [_data(3, 4), _data(3, 2), _data(3, 2)],
                  [_data(1, 4), _data(1, 2), _data(1, 2)])


def test_add_of_incs_kept_for_advanced_set_or_nonzero_base():
    x, y = T.vector("x"), T.vector("y")
    i = T.constant(np.array([0, 0]))
    z = T.zeros_like(x)
    outs = [T.set_subtensor(z[i], y) + T.set_subtensor(z[i], y),   # last write wins
            T.inc_subtensor(x[:1], y[:1]) + T.inc_subtensor(z[1:], y[1:])]
    fg = _rewritten([x, y], outs, _walk(canon.add_of_incs_into_zeros))
    assert not fired(fg)


def test_gradient_of_slices_has_one_zeros_buffer(mode):
    z = T.matrix("z")
    outs = bptt.grad((T.tanh(z[:, :2]) + T.exp(z[:, 2:4]) * T.sigmoid(z[:, 4:])).sum(), [z])
    fg = _rewritten([z], outs, "all")
    # one zeros buffer, which the slices cover: the increments become one Join, no buffer
    assert sum(isinstance(n.op, Alloc) for n in fg.apply_nodes) == 0
    assert sum(type(n.op).__name__ == "Join" for n in fg.apply_nodes) == 1
    _check_values([z], outs, fg, mode, [_data(3, 6)], [_data(1, 6)])


# -- the pipeline ---------------------------------------------------------------------------------

def test_pass_list_has_a_reason_per_entry():
    names = pm.names()
    assert names[:2] == ["merge", "constant_folding"]
    assert {"canonicalize", "remove_dead_code"} <= set(names)
    assert all(why for _, why in pm.passes)
    assert "merge" in pm.describe()


def _grad_graph_sizes(cost, wrt):
    grads = bptt.grad(cost, wrt)
    raw = FunctionGraph(wrt, grads)
    new = _rewritten(wrt, grads, "all")
    return grads, len(raw.apply_nodes), len(new.apply_nodes), new


def test_gradient_of_a_layer_gets_smaller(mode):
    W, x, b = T.matrix("W"), T.vector("x"), T.vector("b")
    cost = T.tanh(T.dot(W, x) + b).sum()
    grads, before, after, fg = _grad_graph_sizes(cost, [W, x, b])
    assert after <= 12 and after < before - 5
    assert not any(isinstance(n.op, (Alloc, Shape)) for n in fg.apply_nodes)
    _check_values([W, x, b], grads, fg, mode,
                  [_data(3, 2), _data(2), _data(3)], [_data(3, 2), _data(2), _data(1)])


def test_gradient_of_static_shapes_loses_its_shape_plumbing(mode):
    W = T.tensor("float64", (3, 2), "W")
    x = T.tensor("float64", (2,), "x")
    cost = (T.exp(T.dot(W, x)) * 2).mean()
    grads, before, after, fg = _grad_graph_sizes(cost, [W, x])
    assert after < before - 3
    assert not any(isinstance(n.op, (Shape, Shape_i, SumTo)) for n in fg.apply_nodes)
    _check_values([W, x], grads, fg, mode, [_data(3, 2), _data(2)])


def test_compiled_function_runs_the_pipeline(mode):
    x = T.vector("x")
    f = bptt.function([x], -(-x) * 1 + T.zeros_like(x), mode=mode)
    assert f.fgraph.outputs[0] is f.fgraph.inputs[0]
    v = _data(3)
    out = f(v)
    np.testing.assert_array_equal(out, v)
    out[:] = 0                      # the caller owns its result: the input is untouched
    assert not np.all(v == 0)


def test_run_passes_can_exclude_a_pass():
    x = T.vector("x")
    fg = FunctionGraph([x], [-(-x)])
    run_passes(fg, exclude=("canonicalize", "fuse_elemwise", "inplace_elemwise"))
    assert _ops(fg) == ["neg", "neg"]


def test_ir_is_verified_after_each_pass_that_changed_the_graph(monkeypatch):
    from bptt.compile import passes

    seen = []
    monkeypatch.setattr(passes, "verify", lambda fg, where=None: seen.append(where))
    x = T.vector("x")
    run_passes(FunctionGraph([x], [T.exp(x * 1) + 0]))   # canonicalize removes * 1 and + 0
    assert "after rewrite pass 'canonicalize'" in seen
    # passes that found nothing to do (no scans, no products here) are not verified again
    assert not [w for w in seen if "scan" in w or "gemm" in w]
    assert set(seen) <= {f"after rewrite pass {name!r}" for name in pm.names()}
    seen.clear()
    run_passes(FunctionGraph([x], [T.exp(x)]))           # nothing to rewrite: nothing to verify
    assert seen == []


def test_float_type_of_static_alloc_shapes():
    # A static-shaped Alloc output keeps the precise static type through the rewrites.
    v = T.vector("v")
    a = alloc(v, 2, 3)
    assert a.type == TensorType("float64", (2, 3))
    fg = _rewritten([v], [a * 1], "all")
    assert fg.outputs[0].type == TensorType("float64", (2, 3))


def test_useless_subtensor_removed(mode):
    x = T.matrix("x")
    outs = [x[0:x.shape[0]] * 2, x[:, 0:x.shape[1]][::1] + 1, x[1:] * 3]
    fg = _rewritten([x], outs, _walk(*shp.shape_rewriters()))
    subs = [n for n in fg.apply_nodes if type(n.op).__name__ == "Subtensor"]
    assert [str(n.op) for n in subs] == ["Subtensor{1:}"]
    assert fired(fg)["useless_subtensor"] == 3
    _check_values([x], outs, fg, mode, [_data(3, 2)], [_data(1, 1)])


def test_shapes_follow_indexing_and_inc_subtensor(mode):
    # inc_subtensor keeps its input's shape; x[::-1] keeps x's sizes.
    x = T.matrix("x")
    z = T.zeros_like(x)
    g = T.inc_subtensor(z[1:], T.exp(x[1:]))[::-1]
    outs = [sum_to(g, x.shape), broadcast_to(g, x.shape)]
    fg = _rewritten([x], outs, "all")
    assert not any(isinstance(n.op, SumTo) or str(n.op).startswith("BroadcastTo")
                   for n in fg.apply_nodes)
    _check_values([x], outs, fg, mode, [_data(3, 2)], [_data(1, 1)])


def test_gradient_through_scan_keeps_its_values():
    W, x, h0 = T.matrix("W"), T.matrix("x"), T.vector("h0")
    hs, _ = bptt.scan(lambda xt, h: T.tanh(T.dot(W, h) + xt), sequences=[x], outputs_info=[h0])
    grads = bptt.grad(hs.sum(), [W, h0])
    fg = _rewritten([W, x, h0], grads, "all")
    assert not any(isinstance(n.op, SumTo) for n in fg.apply_nodes)
    _check_values([W, x, h0], grads, fg, "PY", [_data(2, 2), _data(4, 2), _data(2)])
