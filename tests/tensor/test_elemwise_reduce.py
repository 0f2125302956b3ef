"""`reduce_of_elemwise`: a reduction of an elementwise expression is one loop (`ElemwiseReduce`).

Oracles: the graph after the passes (no array Elemwise, no Reduce: one ElemwiseReduce per
output), the cases the rewrite must leave alone, NumPy for values (PY and NUMBA, hypothesis
over run-time shapes including empty ones), the NUMBA result without the pass (bit for bit
for a partial sum: same elements, same order, same accumulator), float32 sums accumulated in float64, and
verify_grad for the op's gradient.
"""
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.graph.traversal import toposort
from bptt.tensor.elemwise import Elemwise
from bptt.tensor.elemwise_reduce import ElemwiseReduce
from bptt.tensor.math import Dot, Max, Reduce, Sum
from bptt.tensor.scalar_ops import Mul
from bptt.link.numba.dispatch.elemwise_reduce import reduce_loop_source

from ..helpers import excluding
from ..strategies import assert_same

X = T.tensor("float32", shape=(None, None, None), name="x")
B = T.tensor("float32", shape=(None,), name="b")
# Each output reduces its own expression (a shared one would be stored: left alone).
SUMS = [(X * X).sum(), (T.tanh(X) * B).sum(axis=(0, 1)), (X + B).sum(axis=2),
        (X - B).sum(axis=(0, 2)), T.exp(X * 0.01).prod(axis=1)]
EXTREMA = [(X * B).max(axis=2), (B - X).min(axis=(0, 1)), (X * 2).max()]


def _sums_np(x, b):
    w = np.float64
    return [(x * x).sum(dtype=w).astype(x.dtype), (np.tanh(x) * b).sum(axis=(0, 1), dtype=w),
            (x + b).sum(axis=2, dtype=w), (x - b).sum(axis=(0, 2), dtype=w),
            np.exp(x * np.float32(0.01)).prod(axis=1)]


def _extrema_np(x, b):
    return [(x * b).max(axis=2), (b - x).min(axis=(0, 1)), (x * 2).max()]


def _ops(f):
    return [n.op for n in f.fgraph.toposort()]


def test_each_reduction_of_an_expression_is_one_node_without_temporary():
    f = bptt.function([X, B], SUMS + EXTREMA, mode="PY")
    ops = _ops(f)
    assert sum(isinstance(op, ElemwiseReduce) for op in ops) == len(SUMS + EXTREMA)
    assert not any(isinstance(op, Reduce) for op in ops), ops
    # no x-shaped array: the only elementwise node left is neg(b), a vector
    assert all(n.outputs[0].ndim < 3 for n in f.fgraph.toposort() if isinstance(n.op, Elemwise))
    # the fused expression is inside: tanh(x) * b is one composite
    assert any("tanh" in str(op.elemwise) for op in ops)


def test_left_alone():
    a = T.matrix("a")
    p = X * X
    cases = [([X], [p.sum(axis=0), p]),                 # the product is an output: stored
             ([X], [p.sum(axis=0), p.max(axis=1)]),     # read twice: stored
             ([X], [(X > 0).sum(axis=1)]),              # a bool count
             ([a], [a.sum(axis=0)]),                    # nothing elementwise to fuse
             ]
    for ins, outs in cases:
        ops = _ops(bptt.function(ins, outs, mode="PY"))
        assert not any(isinstance(op, ElemwiseReduce) for op in ops), outs
        assert any(isinstance(op, Reduce) for op in ops), outs


def test_the_benchmark_loss_is_one_loop_over_the_trace():
    for dtype in ["float32", "float64"]:
        h = T.tensor(dtype, shape=(None, None, None), name="H")
        f = bptt.function([h], 0.5 * (h[1:] ** 2).sum(), mode="PY")
        (node,) = [n for n in f.fgraph.toposort() if isinstance(n.op, ElemwiseReduce)]
        assert node.inputs[0].ndim == 3 and not any(isinstance(op, (Reduce, Dot))
                                                   for op in _ops(f))
        assert all(n.outputs[0].ndim == 0 for n in f.fgraph.toposort()
                   if isinstance(n.op, Elemwise))


_FUNCTIONS = {}


def _function(which, mode):
    key = (which, mode)
    if key not in _FUNCTIONS:
        outs = SUMS if which == "sums" else EXTREMA
        _FUNCTIONS[key] = bptt.function([X, B], outs, mode=mode)
    return _FUNCTIONS[key]


def _data(shape, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 2).astype("float32")
    return x, rng.standard_normal(shape[-1:]).astype("float32")


SIZES = st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 5))


@given(SIZES, st.integers(0, 2**32 - 1))
def test_sums_equal_numpy(mode, shape, seed):
    x, b = _data(shape, seed)
    for k, (got, want) in enumerate(zip(_function("sums", mode)(x, b), _sums_np(x, b))):
        assert_same(got, want.astype("float32"), scale=np.sum(np.abs(x)) * 4 + 1, what=str(k))


@given(st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 5)),
       st.integers(0, 2**32 - 1), st.booleans())
def test_extrema_equal_numpy(mode, shape, seed, nan):
    x, b = _data(shape, seed)
    if nan:             # NaN wins, as in NumPy
        x.flat[seed % x.size] = np.nan
    for k, (got, want) in enumerate(zip(_function("extrema", mode)(x, b), _extrema_np(x, b))):
        assert_same(got, want, what=str(k))


def test_extremum_of_nothing_is_refused_in_both_modes(mode):
    with pytest.raises(ValueError, match="zero-size array"):
        _function("extrema", mode)(*_data((2, 3, 0), 0))


def test_compiled_loop_matches_the_two_loops_and_accumulates_float32_in_float64():
    fused = _function("sums", "NUMBA")
    main = fused._fn.source.split("def main", 1)[1]
    assert not re.search(r"alloc_empty\(\(\w+, \w+, \w+, \)", main), main   # no x-shaped array
    with excluding(["reduce_of_elemwise"]):
        apart = bptt.function([X, B], SUMS[:2], mode="NUMBA")   # all axes, some axes
    for shape, seed in [((3, 4, 5), 1), ((100, 50, 40), 2)]:
        x, b = _data(shape, seed)
        (total, partial), (total_apart, partial_apart) = fused(x, b)[:2], apart(x, b)
        np.testing.assert_array_equal(partial, partial_apart)   # same adds in the same order
        # over every axis: partial sums per last index, then their sum (another order)
        assert_same(total, total_apart, scale=np.sum(x.astype(np.float64) ** 2))
    # 200000 float32 squares: a float32 accumulator is off by ~1e-5 relative here
    total = fused(x, b)[0]
    assert total == np.float32(np.sum(x.astype(np.float64) ** 2))


def test_gradient_is_the_chained_gradient():
    for reduce in (Sum((1,)), Max((0,))):
        op = ElemwiseReduce(reduce, Elemwise(Mul()))
        rng = np.random.default_rng(0)
        bptt.verify_grad(lambda a, m: op(T.tanh(a), m), [rng.standard_normal((3, 4)),
                                                         rng.standard_normal((3, 4))], mode="PY")


def test_a_step_graph_reduces_in_one_loop_too():
    xs, h0 = T.tensor3("xs"), T.matrix("h0")

    def step(x, h):
        h_new = T.tanh(x + h)
        return h_new, (h_new * x).sum(axis=1)

    (hs, ss), _ = bptt.scan(step, sequences=xs, outputs_info=[h0, None])
    x, h = _data((5, 3, 4), 7)[0].astype("float64"), np.ones((3, 4))
    results = []
    for mode in ("PY", "NUMBA"):
        f = bptt.function([xs, h0], ss, mode=mode)
        (scan,) = [n for n in f.fgraph.toposort() if type(n.op).__name__ == "Scan"]
        inner = [type(n.op) for n in toposort(scan.op.inner_outputs)]
        assert ElemwiseReduce in inner and Sum not in inner, inner
        results.append(f(x, h))
    want, hh = [], h
    for t in range(5):
        hh = np.tanh(x[t] + hh)
        want.append((hh * x[t]).sum(axis=1))
    for got in results:
        assert_same(got, np.array(want))


P = T.tensor("float32", shape=(None, None), name="p")
Q = T.tensor("float32", shape=(None, None), name="q")
# Sums over every axis whose first input is a transposed view: the compiled loop visits
# the axes in reverse, every input's strides reversed with them (elemwise_reduce.py).
TRANSPOSED = [(P.T * P.T).sum(), (P.T * Q).sum(), (Q - P.T).sum(),
              (T.tanh(X.dimshuffle(2, 1, 0)) * 2).sum()]


def _transposed_np(p, q, x):
    w = np.float64
    return [(p.T * p.T).sum(dtype=w), (p.T * q).sum(dtype=w), (q - p.T).sum(dtype=w),
            (np.tanh(x.transpose(2, 1, 0)) * 2).sum(dtype=w)]


@given(st.integers(0, 5), st.integers(0, 6), st.integers(0, 2**32 - 1))
def test_sums_of_transposed_views_equal_numpy(mode, m, n, seed):
    key = ("transposed", mode)
    if key not in _FUNCTIONS:
        _FUNCTIONS[key] = bptt.function([P, Q, X], TRANSPOSED, mode=mode)
    rng = np.random.default_rng(seed)
    p = rng.standard_normal((m, n)).astype("float32")
    q = (rng.standard_normal((n, m)) * 3).astype("float32")
    x = rng.standard_normal((m, n, 3)).astype("float32")
    for k, (got, want) in enumerate(zip(_FUNCTIONS[key](p, q, x), _transposed_np(p, q, x))):
        assert_same(got, want.astype("float32"), scale=np.sum(np.abs(q)) * 4 + x.size * 2 + 1,
                    what=str(k))


def test_only_a_sum_over_every_axis_reverses_its_axes():
    f = bptt.function([P, Q, X], TRANSPOSED + [(P.T + Q).sum(axis=0)], mode="PY")
    nodes = [n for n in f.fgraph.toposort() if isinstance(n.op, ElemwiseReduce)]
    sources = {n.outputs[0].ndim: [] for n in nodes}
    for n in nodes:
        sources[n.outputs[0].ndim].append(reduce_loop_source(n.op, n))
    assert len(sources[0]) == len(TRANSPOSED)
    assert all("abs(e0[0]) < abs(e0[" in s for s in sources[0]), sources[0]
    assert not any("abs(" in s for s in sources[1]), sources[1]
