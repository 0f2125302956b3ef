"""Broadcast and slice size keys (`rewriting.sizes`) and the increments-to-Join rewrite
(`rewriting.subtensor`): the graph's structure after rewriting, and equal values with and
without the rewrites on run-time shapes where a wrong proof would show (a batch of one
broadcasting against several, slices clipped by a short axis)."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import bptt
import bptt.tensor as T
from bptt.compile.mode import linker_for
from bptt.graph.fg import FunctionGraph
from bptt.graph.replace import clone_replace
from bptt.graph.rewriting import Fixpoint, InToOut
from bptt.tensor.basic import Alloc, Join
from bptt.tensor.rewriting import canonical_rewriters, merge, shape_rewriters
from bptt.tensor.rewriting.sizes import assume_same_shape, shape_keys, size_facts
from bptt.tensor.shape import SumTo, shape_tuple, sum_to
from bptt.tensor.subtensor import IncSubtensor


def _simplify(fg):
    Fixpoint([InToOut(shape_rewriters() + canonical_rewriters()), merge]).apply(fg)
    return fg


def _count(fg, cls):
    return sum(isinstance(n.op, cls) for n in fg.apply_nodes)


# -- broadcast keys -------------------------------------------------------------------------

def _lstm_like():
    """h_new = z * c_new, c_new = z * c, z = x + h: the state facts (c_new ~ c, h_new ~ h)
    prove z's shape is the states' shape, though x alone may broadcast."""
    x, h, c = T.matrix("x"), T.matrix("h"), T.matrix("c")
    z = x + h
    c_new = T.sigmoid(z) * c
    h_new = T.tanh(z) * c_new
    return x, h, c, z, c_new, h_new


def test_state_facts_prove_the_broadcast_of_x_and_h_is_the_state():
    x, h, c, z, c_new, h_new = _lstm_like()
    fg = FunctionGraph([x, h, c], [z, c_new, h_new], clone=False)
    assert shape_keys(fg, z) != shape_keys(fg, c)          # nothing known yet
    assume_same_shape(fg, c_new, c)
    assume_same_shape(fg, h_new, h)
    assert shape_keys(fg, z) == shape_keys(fg, c) == shape_keys(fg, h)
    assert shape_keys(fg, x) != shape_keys(fg, h)          # x may still be one row


def test_unbroadcast_to_the_state_removed_only_with_the_state_facts():
    for facts in (False, True):
        x, h, c, z, c_new, h_new = _lstm_like()
        g = sum_to(T.exp(z), shape_tuple(c))
        fg = FunctionGraph([x, h, c], [g, c_new, h_new], clone=False)
        if facts:
            assume_same_shape(fg, c_new, c)
            assume_same_shape(fg, h_new, h)
        _simplify(fg)
        assert _count(fg, SumTo) == (0 if facts else 1)


def test_a_broadcast_equal_to_a_member_covers_its_parts():
    a, b, c = T.matrix("a"), T.matrix("b"), T.matrix("c")
    abc, ac, ab = a + b + c, a * c, a - b
    fg = FunctionGraph([a, b, c], [abc, ac, ab], clone=False)
    assume_same_shape(fg, abc, c)        # a and b are each 1 or c's size there
    assert shape_keys(fg, ac) == shape_keys(fg, c)
    assert shape_keys(fg, ab) != shape_keys(fg, c)   # a and b may both be 1


def test_static_sizes_decide_a_broadcast():
    a, b = T.tensor("float64", shape=(None, 5)), T.matrix("b")
    fg = FunctionGraph([a, b], [a + b], clone=False)
    assert shape_keys(fg, fg.outputs[0])[1] == ("const", 5)
    keys = size_facts(fg)
    assert keys.broadcast([("const", 1), ("const", 1)]) == ("const", 1)


def test_equal_slices_of_equal_sizes_have_one_key():
    z, h = T.matrix("z"), T.matrix("h")
    n = h.shape[1]
    fg = FunctionGraph([z, h], [z[:, n:2 * n], T.zeros_like(z)[:, n:2 * n], z[:, :n]],
                       clone=False)
    _simplify(fg)
    a, b, c = fg.outputs
    assert shape_keys(fg, a) == shape_keys(fg, b) != shape_keys(fg, c)


# -- increments into zeros become a Join ----------------------------------------------------

def _slice_gradient(bounds):
    """The gradient of a sum over slices z[:, lo:hi] (bounds as multiples of n = h.shape[1],
    None for an open end), a different function of each."""
    z, h = T.matrix("z"), T.matrix("h")
    n = h.shape[1]
    funcs = [T.tanh, T.exp, T.sigmoid, T.sin]
    cost = 0
    for k, (lo, hi) in enumerate(bounds):
        lo = None if lo is None else (n if lo == 1 else lo * n)
        hi = None if hi is None else (n if hi == 1 else hi * n)
        cost = cost + (funcs[k](z[:, lo:hi]) * (k + 1)).sum()
    (g,) = bptt.grad(cost, [z])
    return [z, h], g + 0 * h.sum()


def _check(inputs, out, mode, arg_sets, joins):
    fg = _simplify(FunctionGraph(inputs, [out]))
    assert _count(fg, Join) == joins
    if joins:
        assert _count(fg, IncSubtensor) == 0
    raw = clone_replace([out], dict(zip(inputs, fg.inputs)))
    both = linker_for(mode)(FunctionGraph(fg.inputs, list(fg.outputs) + raw, clone=False))
    for args in arg_sets:
        got, want = both(*args)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    return fg


@given(st.integers(1, 3), st.integers(0, 9), st.integers(1, 2))
def test_slices_covering_the_axis_become_one_join(mode, n, width, rows):
    """Cover [:n], [n:2n], [2n:3n], [3n:] of an axis of any width, also shorter than 3n."""
    inputs, g = _slice_gradient([(2, 3), (None, 1), (3, None), (1, 2)])
    rng = np.random.default_rng(n * 100 + width)
    args = [rng.standard_normal((rows, width)), np.zeros((1, n))]
    fg = _check(inputs, g, mode, [args], joins=1)
    assert _count(fg, Alloc) == 0


@pytest.mark.parametrize("bounds", [
    [(None, 1), (2, None)],              # [n:2n] is not written: the zeros stay
    [(None, 2), (1, None)],              # [:2n] and [n:] overlap
])
def test_slices_that_do_not_partition_keep_the_increments(mode, bounds):
    inputs, g = _slice_gradient(bounds)
    rng = np.random.default_rng(3)
    fg = _check(inputs, g, mode, [[rng.standard_normal((2, 7)), np.zeros((1, 2))]], joins=0)
    assert _count(fg, IncSubtensor) >= 1


def test_a_piece_that_broadcasts_into_its_region_keeps_the_increments(mode):
    z, y1, y2 = T.matrix("z"), T.matrix("y1"), T.matrix("y2")
    n = z.shape[1]                    # [:n] and [n:] cover the axis
    zeros = T.zeros_like(z)
    first = T.inc_subtensor(zeros[:, :n], y1)
    out = T.inc_subtensor(first[:, n:], y2)
    fg = _simplify(FunctionGraph([z, y1, y2], [out]))
    assert _count(fg, Join) == 0      # y1 of one row may broadcast over z's rows
    raw = clone_replace([out], dict(zip([z, y1, y2], fg.inputs)))
    both = linker_for(mode)(FunctionGraph(fg.inputs, list(fg.outputs) + raw, clone=False))
    rng = np.random.default_rng(5)
    got, want = both(rng.standard_normal((3, 4)), rng.standard_normal((1, 4)),
                     rng.standard_normal((3, 0)))
    np.testing.assert_array_equal(got, want)


def test_an_empty_slice_does_not_loop_the_partition_search(mode):
    """[0:0] starts where it ends: the chain search must not follow it forever."""
    inputs, g = _slice_gradient([(0, 0), (2, None)])
    rng = np.random.default_rng(4)
    fg = _check(inputs, g, mode, [[rng.standard_normal((2, 7)), np.zeros((1, 2))]], joins=0)
    assert _count(fg, IncSubtensor) >= 1
