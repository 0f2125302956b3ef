"""An update must fit its shared variable's type (ndim, static shape, dtype).

What the types decide is refused when the function (or scan) is built; a
static size the value's type does not prove is checked when the function
runs, before any update is written, so a refused update changes nothing and
compiled code never reads past an array whose size it trusted.
"""
import numpy as np
import pytest

import bptt
import bptt.tensor as T


def _b():
    return bptt.shared(np.full((1, 3), 7.0), name="b", shape=(1, 3))


def test_an_update_breaking_a_static_shape_is_refused_before_any_update(mode):
    b, c = _b(), bptt.shared(np.zeros(2), name="c")
    v = T.matrix("v")
    f = bptt.function([v], [], updates={c: c + 1.0, b: v}, mode=mode)
    with pytest.raises(ValueError, match=r"the update of 'b'.*has shape \(0, 3\); its type "
                                         r"needs \(1, 3\)"):
        f(np.zeros((0, 3)))
    np.testing.assert_array_equal(b.get_value(), np.full((1, 3), 7.0))
    np.testing.assert_array_equal(c.get_value(), [0.0, 0.0])   # nothing written
    y = T.matrix("y")
    g = bptt.function([y], y + b, mode=mode)
    np.testing.assert_array_equal(g(np.ones((2, 3))), np.full((2, 3), 8.0))
    f(np.full((1, 3), 2.0))
    np.testing.assert_array_equal(b.get_value(), np.full((1, 3), 2.0))
    np.testing.assert_array_equal(c.get_value(), [1.0, 1.0])


def test_a_larger_value_cannot_replace_a_static_shape(mode):
    W = bptt.shared(np.ones((2, 3)), name="W", shape=(2, 3))
    v = T.matrix("v")
    f = bptt.function([v], [], updates={W: v}, mode=mode)
    with pytest.raises(ValueError, match=r"has shape \(4, 4\); its type needs \(2, 3\)"):
        f(np.full((4, 4), 10.0))
    assert bptt.function([], (W * T.ones((2, 3))).sum(), mode=mode)() == 6.0


def test_what_the_types_decide_is_refused_when_building():
    W = bptt.shared(np.ones((2, 3)), name="W", shape=(2, 3))
    with pytest.raises(ValueError, match="static shape"):
        bptt.function([], [], updates={W: T.ones((4, 4))})
    with pytest.raises(TypeError, match="dimension"):
        bptt.function([], [], updates={W: T.vector("v")})
    with pytest.raises(TypeError, match="dtype"):
        bptt.function([], [], updates={W: T.matrix("m", dtype="float32")})
    # A type that proves the sizes needs no check at run time.
    f = bptt.function([], [], updates={W: W * 2.0}, mode="PY")
    assert not any(type(n.op).__name__ == "Check" for n in f.fgraph.apply_nodes)


def test_a_scan_step_update_is_checked_at_every_step(mode):
    b = _b()
    k = T.lscalar("k")
    xs = T.matrix("xs")
    out, upd = bptt.scan(lambda x: ((x + b).sum(), {b: b[:k] * 2.0}), sequences=[xs],
                         name="loop")
    f = bptt.function([xs, k], out, updates=upd, mode=mode)
    with pytest.raises(ValueError, match=r"scan 'loop': the update of 'b' has shape \(0, 3\)"):
        f(np.ones((3, 3)), 0)
    np.testing.assert_array_equal(b.get_value(), np.full((1, 3), 7.0))
    np.testing.assert_array_equal(f(np.ones((2, 3)), 1), [24.0, 45.0])
    np.testing.assert_array_equal(b.get_value(), np.full((1, 3), 28.0))


def test_a_given_breaking_a_static_shape_is_checked(mode):
    x = T.tensor("float64", (1, 3), name="x")
    v = T.matrix("v")
    f = bptt.function([v], x + 1.0, givens={x: v}, mode=mode)
    with pytest.raises(ValueError, match=r"has shape \(2, 3\); its type needs \(1, 3\)"):
        f(np.ones((2, 3)))
