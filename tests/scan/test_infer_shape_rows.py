"""`Scan.infer_shape`: a nit_sot row size read from an inner input's shape is that input's
outer size.

The LSTM's backward step returns the gradient of its sequence as
``SumTo(dz, (Shape_i(0)(x_t), Shape_i(1)(x_t)))``; the rows of the outer output then have
the sequence's row shape (``x.shape[1:]``), which lets ``write_of_whole`` drop the zero
fill and the copy of ``set_subtensor(zeros[:T], g)`` after the loop. A size that needs an
inner value other than an input's shape still comes from the output itself. Values are
compared between PY and NUMBA and with the new sizes off, over zero steps and rows of one.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.compile.mode import optimize
from bptt.graph.fg import FunctionGraph
from bptt.graph.traversal import ancestors
from bptt.scan import op as scan_op
from bptt.scan.op import Scan
from bptt.tensor.rewriting.sizes import shape_keys
from bptt.tensor.shape import shape_i
from bptt.tensor.subtensor import IncSubtensor


def _scan_node(outputs):
    (node,) = [v.owner for v in ancestors(outputs)
               if v.owner is not None and isinstance(v.owner.op, Scan)]
    return node


def _row_sized_by_the_sequence(x):
    """A nit_sot whose rows are ``zeros(x_t.shape[0], x_t.shape[1]) + 2``, and its node."""
    ys, _ = bptt.scan(lambda x_t: T.alloc(2.0, shape_i(x_t, 0), shape_i(x_t, 1)),
                      sequences=x)
    return ys, _scan_node([ys])


def test_a_row_size_of_a_sequence_row_is_the_outer_size():
    x = T.tensor3("x")
    ys, node = _row_sized_by_the_sequence(x)
    outer = [tuple(shape_i(v, d) for d in range(v.ndim)) for v in node.inputs]
    rows = node.op.infer_shape(None, node, outer)[0]
    for d in (1, 2):   # x.shape[1:], not a size read from the output
        assert node.outputs[0] not in ancestors([rows[d]])
        assert set(ancestors([rows[d]])) & set(node.outputs) == set()
    fg = FunctionGraph([x], [ys], clone=False)
    assert shape_keys(fg, ys)[1:] == shape_keys(fg, x)[1:]


def test_a_size_of_an_inner_value_still_comes_from_the_output():
    x = T.matrix("x")
    ys, _ = bptt.scan(lambda x_t: T.alloc(1.0, T.cast(x_t[0], "int64")), sequences=x)
    node = _scan_node([ys])
    outer = [tuple(shape_i(v, d) for d in range(v.ndim)) for v in node.inputs]
    (row,) = node.op.infer_shape(None, node, outer)[0][1:]
    assert node.outputs[0] in ancestors([row])


def _sequence_gradient(x, w):
    """sum(tanh(x_t * w)) over a scan, and its gradient with respect to x: a nit_sot of
    the sequence's row shape written into ``zeros_like(x)`` after the loop."""
    ys, _ = bptt.scan(lambda x_t: T.tanh(x_t * w), sequences=x)
    return bptt.grad(ys.sum(), x)


def test_the_sequence_gradient_is_not_copied_into_zeros():
    x, w = T.tensor3("x"), T.matrix("w")
    fg = optimize(FunctionGraph([x, w], [_sequence_gradient(x, w)]), "NUMBA")
    assert not any(isinstance(n.op, IncSubtensor) for n in fg.apply_nodes)


@given(st.integers(0, 3), st.integers(1, 3), st.integers(1, 3), st.booleans())
def test_values_match_without_the_outer_sizes(mode, steps, batch, width, row_of_w):
    x, w = T.tensor3("x"), T.matrix("w")
    g = _sequence_gradient(x, w)
    f = bptt.function([x, w], g, mode=mode)
    saved = scan_op._outer_sizes
    scan_op._outer_sizes = lambda s, sizes: {}
    try:
        ref = bptt.function([x, w], g, mode="PY")
    finally:
        scan_op._outer_sizes = saved
    rng = np.random.default_rng(steps * 9 + batch * 3 + width)
    xv = rng.standard_normal((steps, batch, width))
    wv = rng.standard_normal((1 if row_of_w else batch, width))
    got, want = f(xv, wv), ref(xv, wv)
    assert got.shape == want.shape == xv.shape
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)


@pytest.mark.parametrize("steps", [0, 2])
def test_the_row_shape_of_zero_steps_is_the_sequence_row_shape(mode, steps):
    x = T.tensor3("x")
    ys, _ = _row_sized_by_the_sequence(x)
    f = bptt.function([x], [ys, ys.shape], mode=mode)
    out, shape = f(np.zeros((steps, 2, 3)))
    assert out.shape == tuple(shape) == (steps, 2, 3)
