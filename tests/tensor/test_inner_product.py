"""`sum_of_product_to_dot`: ``sum{all axes}(a * b)`` is ``dot(flatten(a), flatten(b))``.

Oracles: the graph after the passes (no elementwise product, one Dot of Reshapes), the
NUMBA source (no loop, no allocation: one BLAS dot over views), NumPy for values (PY and
NUMBA, hypothesis over sizes including empty rows), and the cases the rewrite must leave
alone (an unproven shape, float32, a partial sum, a product read elsewhere).
"""
import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.tensor.elemwise import Elemwise
from bptt.tensor.math import Dot
from bptt.tensor.shape import Reshape

from ..strategies import assert_same

X = T.tensor("float64", shape=(None, None, None), name="X")
LOSS = 0.5 * (X[1:] ** 2).sum()     # the benchmark loss over a trace X


def _array_elemwise(f):
    return [n for n in f.fgraph.toposort() if isinstance(n.op, Elemwise) and n.outputs[0].ndim]


def _dots(f):
    return [n for n in f.fgraph.toposort() if isinstance(n.op, Dot)]


def test_the_loss_is_one_dot_of_views_without_temporary():
    f = bptt.function([X], LOSS, mode="PY")
    assert not _array_elemwise(f)
    (dot,) = _dots(f)
    a, b = dot.inputs
    assert a is b and isinstance(a.owner.op, Reshape) and a.owner.inputs[0].ndim == 3


@given(st.integers(0, 4), st.integers(0, 3), st.integers(0, 3), st.integers(0, 2**32 - 1))
def test_values(mode, T_, B, H, seed):
    f = _compiled(mode)
    x = np.random.default_rng(seed).standard_normal((T_, B, H)) * 3
    assert_same(f(x), 0.5 * np.sum(x[1:] ** 2), scale=np.sum(x ** 2))


_CACHE = {}


def _compiled(mode):
    if mode not in _CACHE:
        _CACHE[mode] = bptt.function([X], LOSS, mode=mode)
        if mode == "NUMBA":
            main = _CACHE[mode]._fn.source.split("def main", 1)[1]
            assert "dot_vv(" in main
            # no loop; the one allocation is the flat shape vector (MakeVector)
            assert "for " not in main, main
            assert main.count("alloc") == main.count("alloc_empty(1, np.int64)") == 1, main
    return _CACHE[mode]


def test_left_alone_when_not_an_inner_product():
    a, b = T.matrix("a"), T.matrix("b")
    v = T.vector("v", dtype="float32")
    cases = [(a * b).sum(),                 # b may broadcast against a
             (v * v).sum(),                 # float32: BLAS would accumulate in float32
             (a * a).sum(axis=0),           # not every axis
             ]
    for out in cases:
        f = bptt.function([a, b, v], out, mode="PY", on_unused_input="ignore")
        assert not _dots(f) and len(_array_elemwise(f)) == 1, out
    p = a * a
    f = bptt.function([a], [p.sum(), p], mode="PY")    # the product is stored anyway
    assert not _dots(f)


def test_proven_equal_shapes_rewrite():
    a = T.matrix("a")
    out = (a * T.tanh(a)).sum()
    f = bptt.function([a], out, mode="PY")
    assert len(_dots(f)) == 1
    x = np.random.default_rng(1).standard_normal((3, 5))
    assert_same(f(x), np.sum(x * np.tanh(x)), scale=np.sum(np.abs(x)))
