"""`inplace_elemwise`: an elementwise loop writes into a fresh input that nothing else reads."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.link.numba.linker import with_kernel_modules
from bptt.tensor.elemwise import Elemwise
from bptt.tensor.math import Dot
from bptt.tensor.shape import Reshape, Shape

from ..helpers import excluding, lstm_grad_graph
from ..scan.test_rewriting import rewritten

PASS = ("inplace_elemwise",)


def _flagged(fg):
    return [n for n in fg.toposort()
            if isinstance(n.op, Elemwise) and n.op.inplace_input is not None]


def test_the_lstm_gradients_preactivation_sum_is_written_into_the_recomputed_product():
    ins, outs = lstm_grad_graph()
    # the recomputed sum over all steps: without scan_chunk_seq_products (which computes
    # it per chunk in the loop) and scan_reuse_forward (which reads the forward's z instead,
    # when config.reuse_forward is on)
    fg = rewritten(ins, outs, exclude=("scan_reuse_forward", "scan_chunk_seq_products"))
    sums = [n for n in _flagged(fg) if n.outputs[0].ndim == 3]
    assert len(sums) == 1                       # the T x B x 4H pre-activation sum
    target = sums[0].inputs[sums[0].op.inplace_input]
    assert isinstance(target.owner.op, Reshape)
    assert isinstance(target.owner.inputs[0].owner.op, Dot)
    assert "inplace_input=" in str(sums[0].op)
    assert not _flagged(rewritten(ins, outs, exclude=PASS))


def _graph(case):
    """(inputs, outputs) of a small graph; the first output's node is the one examined."""
    x, y, W = T.matrix("x"), T.matrix("y"), T.matrix("W")
    d = T.dot(x, W)
    if case == "fresh":
        return [x, W], [T.tanh(d)]
    if case == "other_reader":
        return [x, W], [T.tanh(d), d.sum()]
    if case == "graph_output":
        return [x, W], [T.tanh(d), d]
    if case == "graph_input":
        return [x], [T.tanh(x)]
    if case == "view_of_input":
        return [x], [T.tanh(x[::-1])]
    if case == "broadcasts":
        r = T.tensor("float64", shape=(1, None), name="r")
        return [r, W, y], [T.dot(r, W) * y]
    if case == "dtype":
        xf, Wf = T.fmatrix("xf"), T.fmatrix("Wf")
        return [xf, Wf, y], [T.dot(xf, Wf) * y]
    if case == "aliased":        # x[::-1] + x with x fresh: the reversed read would see writes
        return [x, W], [d[::-1] * d]
    if case == "shape_reader":   # the product's shape is read, its values are not
        return [x, W, y], [T.tanh(d), T.reshape(y, d.shape)]
    raise ValueError(case)


@pytest.mark.parametrize("case", ["fresh", "shape_reader"])
def test_a_fresh_product_read_once_holds_the_result(case):
    ins, outs = _graph(case)
    fg = rewritten(ins, outs)
    (node,) = _flagged(fg)
    assert node.op.inplace_input == 0 and isinstance(node.inputs[0].owner.op, Dot)
    if case == "shape_reader":
        assert any(isinstance(c[0].op, Shape) for c in fg.clients[node.inputs[0]])


@pytest.mark.parametrize("mode_name", ["PY", "NUMBA"])
def test_a_shape_reader_sees_the_shape_after_the_write(mode_name):
    ins, outs = _graph("shape_reader")
    with excluding(PASS):
        before = bptt.function(ins, outs, mode=mode_name)
    after = bptt.function(ins, outs, mode=mode_name)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s) for s in ((3, 2), (2, 4), (4, 3))]
    for want, got in zip(before(*args), after(*args)):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("case", ["other_reader", "graph_output", "graph_input", "view_of_input",
                                  "broadcasts", "dtype", "aliased"])
def test_the_flag_is_not_set(case):
    ins, outs = _graph(case)
    fg = rewritten(ins, outs)
    node = fg.outputs[0].owner
    assert isinstance(node.op, Elemwise) and node.op.inplace_input is None


# -- values: with and without the pass, PY and NUMBA --------------------------------------------
_FUNCS = {}


def _functions(mode):
    """``tanh(x @ W) * y + 1``: fused, written into the product (broadcast at run time or not)."""
    if mode not in _FUNCS:
        x, y, W = T.matrix("x"), T.matrix("y"), T.matrix("W")
        ins, outs = [x, W, y], [T.tanh(T.dot(x, W)) * y + 1.0]
        with excluding(PASS):
            before = bptt.function(ins, outs, mode=mode)
        after = bptt.function(ins, outs, mode=mode)
        assert _flagged(after.fgraph) and not _flagged(before.fgraph)
        _FUNCS[mode] = before, after
    return _FUNCS[mode]


@pytest.mark.parametrize("mode_name", ["PY", "NUMBA"])
@given(m=st.integers(0, 3), k=st.integers(0, 2), n=st.integers(0, 3),
       x_rows_one=st.booleans(), y_shape=st.sampled_from(["full", "row", "col"]),
       seed=st.integers(0, 2 ** 16))
def test_values_equal_the_graph_without_the_pass(mode_name, m, k, n, x_rows_one, y_shape, seed):
    before, after = _functions(mode_name)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((1 if x_rows_one else m, k))
    W = rng.standard_normal((k, n))
    y = rng.standard_normal({"full": (m, n), "row": (1, n), "col": (m, 1)}[y_shape])
    copies = [a.copy() for a in (x, W, y)]
    (expected,) = before(x, W, y)
    (actual,) = after(x, W, y)
    for a, c in zip((x, W, y), copies):
        np.testing.assert_array_equal(a, c)      # the caller's arrays are never written
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-14)


def test_the_numba_loop_writes_into_the_product_when_the_shapes_match():
    before, after = (with_kernel_modules(f._fn.source) for f in _functions("NUMBA"))
    assert "out = i0\n" in after     # i0: the product, input 0 of the elementwise kernel
    assert "out = i0\n" not in before
    # the loop reads the product through the output's view: a view of its own would alias
    # the output exactly, and LLVM then runs its scalar loop (no vectorization)
    assert "elem_view(i0)" not in after
    assert "elem_view(i0)" in before
