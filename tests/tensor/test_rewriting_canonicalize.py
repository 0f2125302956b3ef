"""Canonicalizations that remove useless work from gradient graphs: constant factors of a
product (`mul_constants`), views of zeros (`dimshuffle_of_alloc`, `subtensor_of_alloc`, and
`filled_with` through indexing), sums over static length-1 axes, writes that overwrite a
whole buffer (`write_of_whole`), and the second canonicalize pass that removes the
``zeros + dot`` the scan push-outs build.

Each: the graph's structure after rewriting, equal values and dtypes with and without the
rewrites (PY and NUMBA) on run-time shapes with size-1 dimensions, where a rewrite that
forgot broadcasting would change the result, and the cases where it must not fire.
"""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import bptt
import bptt.tensor as T
from bptt.compile.mode import linker_for
from bptt.compile.passes import run_passes
from bptt.graph.fg import FunctionGraph
from bptt.graph.replace import clone_replace
from bptt.graph.rewriting import Fixpoint, InToOut, fired
from bptt.tensor.basic import Alloc, alloc
from bptt.tensor.elemwise import Elemwise
from bptt.tensor.math import Sum
from bptt.tensor.rewriting import canonical_rewriters, merge, shape_rewriters
from bptt.tensor.shape import DimShuffle
from bptt.tensor.subtensor import IncSubtensor, Subtensor

from ..helpers import rnn_grad_graph

RNG = np.random.default_rng(0)


def _simplify(inputs, outputs, passes="canonicalize"):
    fg = FunctionGraph(inputs, outputs)
    if passes == "all":
        run_passes(fg)
    else:
        Fixpoint([InToOut(shape_rewriters() + canonical_rewriters()), merge]).apply(fg)
    return fg


def _count(fg, cls, name=None):
    return sum(isinstance(n.op, cls) and (name is None or str(n.op) == name)
               for n in fg.apply_nodes)


def _check(inputs, outputs, fg, mode, arg_sets, exact=True):
    """`fg` computes what `outputs` compute (values, dtypes, shapes), linked as one graph."""
    raw = clone_replace(list(outputs), dict(zip(inputs, fg.inputs)))
    both = linker_for(mode)(FunctionGraph(fg.inputs, list(fg.outputs) + raw, clone=False))
    n = len(fg.outputs)
    for args in arg_sets:
        results = [np.asarray(r) for r in both(*[np.asarray(a) for a in args])]
        for got, want in zip(results[:n], results[n:]):
            assert got.dtype == want.dtype and got.shape == want.shape
            if exact:
                np.testing.assert_array_equal(got, want)
            else:
                np.testing.assert_allclose(got, want, rtol=1e-12)


shapes = st.tuples(st.integers(1, 3), st.integers(1, 3))


# -- constant factors of a product ---------------------------------------------------------

def _half(ndim):
    """The 0.5 of a loss's gradient, as a broadcastable constant array (1, ..., 1)."""
    return T.constant(np.full((1,) * ndim, 0.5))


@given(shapes)
def test_mul_constants_collects_the_factors_and_drops_a_product_of_one(mode, shape):
    x, y = T.matrix("x"), T.matrix("y")
    outs = [_half(2) * (2.0 * x),               # the loss 0.5 * sum(x ** 2): its gradient is x
            4.0 * (x * 0.75),                   # one constant 3.0
            (2.0 * x) * y * 0.25,               # powers of two around two terms: 0.5 * x * y
            _half(3) * (2.0 * x)]               # the constant keeps the output's ndim 3
    fg = _simplify([x, y], outs)
    assert fg.outputs[0] is fg.inputs[0]
    muls = [n for n in fg.toposort() if str(n.op) == "mul"]
    consts = sorted(float(np.asarray(i.data).flat[0]) for n in muls for i in n.inputs
                    if hasattr(i, "data"))
    assert consts == [0.5, 1.0, 3.0] and len(muls) == 3
    assert fg.outputs[3].ndim == 3
    assert fired(fg)["mul_constants"] >= 4
    args = [RNG.standard_normal(shape), RNG.standard_normal(shape[::-1])[:1].T[:, :1]
            * np.ones(shape)]
    _check([x, y], outs, fg, mode, [args])


@pytest.mark.parametrize("make", [
    lambda x, y: 3.0 * (5.0 * x),               # two constants that are not powers of two
    lambda x, y: 2.0 * (x * y),                 # a nested product of two terms stays as built
    lambda x, y: (3.0 * x) * y * 2.0,           # 3.0 would move past y: another rounding
    lambda x, y: 1e308 * (4.0 * x),             # the product overflows
])
def test_mul_constants_leaves_products_it_cannot_collect_exactly(make):
    x, y = T.matrix("x"), T.matrix("y")
    fg = _simplify([x, y], [make(x, y)])
    assert not fired(fg)["mul_constants"]


def test_mul_constants_keeps_a_nested_product_read_elsewhere():
    x = T.matrix("x")
    twice = 2.0 * x
    fg = _simplify([x], [0.5 * twice, twice])
    assert not fired(fg)["mul_constants"]


def test_mul_constants_in_float32_and_wrapping_ints(mode):
    x32, i = T.fmatrix("x32"), T.imatrix("i")
    outs = [np.float32(0.5) * (2.0 * x32), 3 * (i * 5), _half(2).astype("float32") * (x32 * 8.0)]
    fg = _simplify([x32, i], outs)
    assert fg.outputs[0] is fg.inputs[0]
    assert [o.dtype for o in fg.outputs] == ["float32", "int32", "float32"]
    big = np.array([[2 ** 30, -7], [3, 2 ** 29 + 1]], dtype="int32")   # 15 * i wraps
    _check([x32, i], outs, fg, mode,
           [[RNG.standard_normal((2, 2)).astype("float32"), big]])


# -- views of zeros ----------------------------------------------------------------------------

def test_views_of_an_alloc_are_an_alloc(mode):
    n, m = T.lscalar("n"), T.lscalar("m")
    outs = [alloc(0.0, n, m)[None][0],                 # the zeros of a pushed-out accumulator
            alloc(1.5, n, m).dimshuffle(1, "x", 0),
            alloc(2.0, n, 3)[:, ::-1],
            alloc(2.0, n, 3)[:, 1:]]
    fg = _simplify([n, m], outs)
    assert _count(fg, Alloc) == 4 and _count(fg, Subtensor) == _count(fg, DimShuffle) == 0
    _check([n, m], outs, fg, mode, [[2, 3], [1, 1], [0, 2]])


def test_views_of_an_alloc_kept_where_an_index_may_be_out_of_bounds():
    n, m = T.lscalar("n"), T.lscalar("m")
    zeros = alloc(0.0, n, m)
    fg = _simplify([n, m], [zeros[0], alloc(0.0, n, m)[:, 1:], zeros.T * 2])
    assert _count(fg, Subtensor) == 2          # [0] of a size that may be 0; [1:] of size m
    assert _count(fg, DimShuffle) == 1          # the alloc has two readers: it stays one buffer


@given(shapes, st.booleans())
def test_zeros_seen_through_views_are_dropped_from_a_sum_only_when_provable(mode, shape, row):
    x = T.matrix("x")
    n, m = T.lscalar("n"), T.lscalar("m")
    provable = alloc(0.0, x.shape[0], x.shape[1])[None][0] + x
    unknown = alloc(0.0, n, m)[None][0] + x     # x may be one row broadcast over n
    fg = _simplify([x, n, m], [provable, unknown])
    assert fg.outputs[0] is fg.inputs[0]
    assert _count(fg, Elemwise, "add") == 1
    xs = RNG.standard_normal((1 if row else shape[0], shape[1]))
    _check([x, n, m], [provable, unknown], fg, mode, [[xs, shape[0], shape[1]]])


# -- sums over length-1 axes and writes of a whole buffer -----------------------------------

def test_sum_over_static_length_one_axes_is_a_dimshuffle(mode):
    a = T.tensor("float64", shape=(1, None, 1), name="a")
    i8 = T.tensor("int8", shape=(1, None), name="i8")
    outs = [a.sum(axis=0), a.sum(axis=(0, 1, 2)), a.sum(axis=1), i8.sum(axis=0)]
    fg = _simplify([a, i8], outs)
    sums = [n.op.axis for n in fg.apply_nodes if isinstance(n.op, Sum)]
    assert sorted(sums) == [(0,), (0,), (1,)]   # (0, 1, 2) -> (0,); the int8 sum widens: kept
    _check([a, i8], outs, fg, mode,
           [[RNG.standard_normal((1, 3, 1)), np.array([[100, 100]], dtype="int8")],
            [RNG.standard_normal((1, 1, 1)), np.array([[-3]], dtype="int8")]])


def _h0_gradient(h0, g):
    """The gradient of ``h0[None]`` fed to a scan: ``sum(set_subtensor(zeros[:1], g[:1]), 0)``."""
    zeros = T.zeros_like(h0.dimshuffle("x", 0, 1))
    return T.set_subtensor(zeros[:1], g[:1]).sum(axis=0)


@given(st.integers(1, 3), shapes)
def test_a_write_of_the_whole_buffer_is_its_value(mode, rows, shape):
    h0, r, m = T.matrix("h0"), T.tensor3("r"), T.matrix("m")
    g = T.concatenate([r, h0[None]])            # rows of h0's shape (Join proves it)
    outs = [_h0_gradient(h0, g),
            T.set_subtensor(T.zeros_like(m)[:], T.exp(m)),
            T.inc_subtensor(T.zeros_like(m)[:, :], m * 3)]
    fg = _simplify([h0, r, m], outs)
    assert _count(fg, IncSubtensor) == 0 and _count(fg, Sum) == 0
    assert fired(fg)["write_of_whole"] == 3 and fired(fg)["sum_of_length_one_axes"] == 1
    args = [RNG.standard_normal(shape), RNG.standard_normal((rows - 1,) + shape),
            RNG.standard_normal(shape)]
    _check([h0, r, m], outs, fg, mode, [args])


@given(shapes, st.booleans())
def test_a_write_that_may_broadcast_or_keeps_part_of_the_buffer_stays(mode, shape, row):
    m, v = T.matrix("m"), T.matrix("v")
    outs = [T.set_subtensor(T.zeros_like(m)[:], v),        # v may be one row spread over m
            T.inc_subtensor(T.ones_like(m)[:], m),          # not zeros: the ones count
            T.set_subtensor(T.zeros_like(m)[1:], m[1:]),    # row 0 stays zero
            _h0_gradient(m, v[None])]                       # v may be one row spread over m
    fg = _simplify([m, v], outs)
    assert _count(fg, IncSubtensor) == 4 and _count(fg, Sum) == 0
    vs = RNG.standard_normal((1 if row else shape[0], shape[1]))
    _check([m, v], outs, fg, mode, [[RNG.standard_normal(shape), vs]])


# -- the pipeline on an RNN gradient ------------------------------------------------------------

_rnn_gradient = rnn_grad_graph


def test_rnn_gradient_loses_its_zeros_and_constant_factors():
    inputs, outs = _rnn_gradient()
    fg = _simplify(inputs, outs, passes="all")
    outer = fg.toposort()
    assert not any(isinstance(n.op, IncSubtensor) for n in outer)
    assert not any(isinstance(n.op, Sum) and n.op.axis == (0,) for n in outer)
    # db and dU are the backward loop's chunked sums themselves (scan_chunk_accumulators):
    # no zeros + ... (db's SumTo to b's shape is a no-op unless b broadcasts)
    assert fg.outputs[3].owner.op.__class__.__name__ == "SumTo"
    assert fg.outputs[3].owner.inputs[0].owner.op.__class__.__name__ == "Scan"
    assert fg.outputs[1].owner.op.__class__.__name__ == "Scan"
    # the loss's gradient 0.5 * (2.0 * h) is h, and the loss's sum(h * h) one loop
    # (elemwise_reduce.py): no elementwise product over the trace
    assert sum(str(n.op) == "mul" and n.outputs[0].ndim == 3 for n in outer) == 0
    args = [RNG.standard_normal((4, 2, 3)), RNG.standard_normal((2, 5)),
            RNG.standard_normal((3, 5)), RNG.standard_normal((5, 5)) * 0.5,
            RNG.standard_normal(5)]
    _check(inputs, outs, fg, "PY", [args], exact=False)


# -- a switch whose branches are one value --------------------------------------------------

@given(st.tuples(st.integers(1, 3), st.integers(1, 3)), st.integers(-3, 3))
def test_switch_of_one_value_is_the_value(mode, shape, n):
    # the shape programs' broadcast sizes: switch(eq(s, 1), s, s) once both sides are one size
    x, c, s = T.matrix("x"), T.scalar("c", dtype="bool"), T.lscalar("s")
    outs = [T.switch(c, x, x), T.switch(T.eq(s, 1), s, s) + 1]
    fg = _simplify([x, c, s], outs)
    assert fg.outputs[0] is fg.inputs[0]
    assert not any(isinstance(nd.op, Elemwise) and "switch" in str(nd.op) for nd in fg.apply_nodes)
    args = [RNG.standard_normal(shape), np.bool_(n > 0), np.int64(n)]
    _check([x, c, s], outs, fg, mode, [args])


def test_switch_of_one_value_keeps_a_condition_that_may_broadcast():
    # c (2, 3) with x (1, 3): the switch's output has c's rows, x alone does not (and two
    # matrices of unknown sizes may be such a pair)
    x, c = T.tensor("float64", (1, None), name="x"), T.matrix("c", dtype="bool")
    fg = _simplify([x, c], [T.switch(c, x, x)])
    assert fg.outputs[0] is not fg.inputs[0]
    for mode in ("PY", "NUMBA"):      # compiled with every pass
        got = bptt.function([x, c], T.switch(c, x, x), mode=mode)(
            np.arange(3.0)[None], np.zeros((2, 3), dtype=bool))
        np.testing.assert_array_equal(got, np.tile(np.arange(3.0), (2, 1)))


# -- one row seen through a new axis and a reversal -----------------------------------------

@given(st.integers(0, 3), st.integers(1, 3), st.sampled_from([0, -1]))
def test_a_row_through_a_new_axis_and_a_reversal_is_the_row(mode, rows, cols, index):
    # save-mem's last cotangent row: shape_padleft(r)[::-1][0] is r (no view statements)
    x = T.matrix("x")
    r = x[-1]
    outs = [T.shape_padleft(r)[::-1][index], T.shape_padleft(x)[::-1], T.shape_padleft(x)[index]]
    fg = _simplify([x], outs)
    row, padded, same = fg.outputs
    assert isinstance(row.owner.op, Subtensor) and row.owner.inputs[0] is fg.inputs[0]
    assert isinstance(padded.owner.op, DimShuffle) and padded.owner.inputs[0] is fg.inputs[0]
    assert same is fg.inputs[0]
    assert _count(fg, Subtensor) == 1 and _count(fg, DimShuffle) == 1
    if rows:
        _check([x], outs, fg, mode, [[RNG.standard_normal((rows, cols))]])


def test_a_reversal_of_rows_that_may_be_many_stays():
    x = T.tensor3("x")
    fg = _simplify([x], [x[::-1], T.shape_padleft(x[0], 2)[0][::-1]])
    assert _count(fg, Subtensor) == 3
