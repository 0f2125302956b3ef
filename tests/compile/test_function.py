"""`bptt.function`: arguments, outputs, updates, givens, validation, aliasing.

Every test runs in both modes (`mode` fixture). Graph structures are few and
built with unknown shapes, so one numba compilation serves every example.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import bptt
import bptt.tensor as T
from bptt import UnusedInputError

floats = st.floats(-10, 10, allow_nan=False, width=64)


# -- outputs -------------------------------------------------------------------
def test_output_forms(mode):
    x = T.vector("x")
    a = np.arange(3.0)
    one = bptt.function([x], x + 1, mode=mode)(a)
    assert isinstance(one, np.ndarray)
    np.testing.assert_array_equal(one, a + 1)
    lst = bptt.function([x], [x + 1, x * 2], mode=mode)(a)
    tup = bptt.function([x], (x + 1, x * 2), mode=mode)(a)
    for out in (lst, tup):
        assert isinstance(out, list) and len(out) == 2
        np.testing.assert_array_equal(out[1], a * 2)
    assert bptt.function([x], [], mode=mode, on_unused_input="ignore")(a) == []
    assert bptt.function([x], None, mode=mode, on_unused_input="ignore")(a) is None


def test_scalar_outputs_are_0d_arrays_of_the_output_dtype(mode):
    i = T.iscalar("i")
    x = T.fvector("x")
    f = bptt.function([i, x], [i * 2, x.sum(), (x > 0).any()], mode=mode)
    outs = f(3, np.ones(4, "float32"))
    assert [o.dtype.name for o in outs] == ["int32", "float32", "bool"]
    assert all(isinstance(o, np.ndarray) and o.shape == () for o in outs)
    assert outs[0] == 6 and outs[1] == 4 and outs[2]


@given(a=arrays("float64", st.tuples(st.integers(0, 4), st.integers(0, 4)), elements=floats),
       c=floats)
def test_py_and_numba_agree(a, c):
    m, s = T.matrix("m"), T.scalar("s")
    outs = [T.tanh(m * s + 1).sum(axis=0), (m ** 2).mean(), m.T * s]
    got = [bptt.function([m, s], outs, mode=mode)(a, c) for mode in ("PY", "NUMBA")]
    for p, n in zip(*got):
        assert p.dtype == n.dtype and p.shape == n.shape
        np.testing.assert_allclose(p, n, rtol=1e-12, atol=1e-12)


# -- arguments -----------------------------------------------------------------
def test_arguments_by_position_and_name(mode):
    x, y = T.vector("x"), T.scalar("y")
    f = bptt.function([x, y], x * y, mode=mode)
    a = np.arange(3.0)
    np.testing.assert_array_equal(f(a, 2.0), a * 2)
    np.testing.assert_array_equal(f(a, y=3.0), a * 3)
    np.testing.assert_array_equal(f(y=4.0, x=a), a * 4)
    with pytest.raises(TypeError, match="missing a value for input 1"):
        f(a)
    with pytest.raises(TypeError, match="takes 2 input"):
        f(a, 1.0, 2.0)
    with pytest.raises(TypeError, match="no input named 'z'"):
        f(a, z=1.0)
    with pytest.raises(TypeError, match="given twice"):
        f(a, 1.0, y=2.0)


def test_lossless_conversions_are_accepted(mode):
    x = T.vector("x")
    f = bptt.function([x], T.pow(x, 2), mode=mode)
    np.testing.assert_array_equal(f(range(10)), np.arange(10.0) ** 2)
    np.testing.assert_array_equal(f([1, 2]), [1.0, 4.0])
    np.testing.assert_array_equal(f(np.arange(3, dtype="int32")), [0.0, 1.0, 4.0])
    i = T.ivector("i")
    g = bptt.function([i], i * 2, mode=mode)
    out = g(np.array([1, 2, 3], dtype="int64"))
    assert out.dtype == np.int32 and out.tolist() == [2, 4, 6]
    s = T.scalar("s")
    h = bptt.function([s], s + 1, mode=mode)
    assert h(2) == 3.0 and h(np.float32(0.5)) == 1.5 and h(np.array(1.0)) == 2.0


def test_lossy_conversions_need_allow_input_downcast(mode):
    x = T.fvector("x")
    f = bptt.function([x], x * 2, mode=mode)
    a = np.array([0.1, 0.2])
    with pytest.raises(TypeError, match=r"input 0 \(x\).*float64.*float32.*allow_input_downcast"):
        f(a)
    np.testing.assert_array_equal(f(np.array([0.5, 1.0])), [1.0, 2.0])  # exact in float32
    g = bptt.function([x], x * 2, mode=mode, allow_input_downcast=True)
    np.testing.assert_array_equal(g(a), a.astype("float32") * 2)
    i = T.ivector("i")
    h = bptt.function([i], i + 1, mode=mode, allow_input_downcast=False)
    with pytest.raises(TypeError, match="int64 to int32 would lose information"):
        h(np.array([2**40]))


def test_python_floats_round_to_floatx_by_default(mode, monkeypatch):
    monkeypatch.setattr(bptt.config, "floatX", "float32")
    s = T.scalar("s")
    assert s.dtype == "float32"
    f = bptt.function([s], s * 2, mode=mode)
    assert f(0.1) == np.float32(0.1) * 2
    g = bptt.function([s], s * 2, mode=mode, allow_input_downcast=False)
    with pytest.raises(TypeError, match="would lose information"):
        g(0.1)


def test_bad_arguments_name_the_input_and_what_was_expected(mode):
    x = T.tensor("float64", shape=(None, 3), name="x")
    f = bptt.function([x], x.sum(), mode=mode, name="fn")
    with pytest.raises(TypeError, match=r"'fn' input 0 \(x\): expected dtype float64 with 2 "
                                        r"dimension\(s\) and shape \(\?, 3\), got a float64 "
                                        r"array of shape \(3,\)"):
        f(np.ones(3))
    with pytest.raises(ValueError, match=r"shape \(\?, 3\), got a float64 array of shape \(2, 4\)"):
        f(np.ones((2, 4)))
    with pytest.raises(TypeError, match=r"got a value of type list \(as an array: int64, "
                                        r"shape \(2,\)\)"):
        f([1, 2])
    with pytest.raises(TypeError, match="got a value of type object\n"):
        f(object())


def test_unusual_layouts_give_correct_results_without_recompiling(mode):
    m = T.matrix("m")
    f = bptt.function([m], m * 2 + m.sum(axis=1, keepdims=True), mode=mode)
    base = np.arange(12.0).reshape(3, 4)
    readonly = base.copy()
    readonly.flags.writeable = False
    for a in (base, base.T, base[:, ::2], np.asfortranarray(base), readonly,
              base.astype(">f8"), np.zeros((0, 5))):
        np.testing.assert_array_equal(f(a), a * 2 + a.sum(axis=1, keepdims=True))
    if mode == "NUMBA":
        assert len(f._fn.numba_function.signatures) == 1


# -- aliasing --------------------------------------------------------------------
def _independent(outs, held):
    outs = [o for o in outs if isinstance(o, np.ndarray)]
    for k, o in enumerate(outs):
        for other in held + outs[:k]:
            assert not np.shares_memory(o, other)


def test_outputs_never_alias_arguments_shared_values_or_each_other(mode):
    x = T.matrix("x")
    s = bptt.shared(np.ones((2, 3)), name="s")
    y = x * 2
    f = bptt.function([x], [x, x.T, x[None], y, y, y.T, s, s.T, s * 1], mode=mode)
    a = np.arange(6.0).reshape(2, 3)
    outs = f(a)
    _independent(outs, [a, s.get_value(borrow=True)])
    outs[0][...] = -1
    outs[6][...] = -1
    np.testing.assert_array_equal(a, np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(s.get_value(), np.ones((2, 3)))


def test_update_values_never_alias_outputs_or_arguments(mode):
    x = T.vector("x")
    s, t = bptt.shared(np.zeros(2), name="s"), bptt.shared(np.zeros(2), name="t")
    y = x + 1
    f = bptt.function([x], y, updates=[(s, y), (t, x)], mode=mode)
    a = np.array([1.0, 2.0])
    out = f(a)
    _independent([out, s.get_value(borrow=True), t.get_value(borrow=True)], [a])
    # Passing a stored value back in must not alias either.
    out2 = f(s.get_value(borrow=True))
    _independent([out2, s.get_value(borrow=True), t.get_value(borrow=True)], [])


# -- updates -------------------------------------------------------------------
def test_updates_are_all_computed_before_any_is_written(mode):
    a, b = bptt.shared(np.array(1.0), name="a"), bptt.shared(np.array(2.0), name="b")
    swap = bptt.function([], [], updates={a: b, b: a}, mode=mode)
    swap()
    assert (a.get_value(), b.get_value()) == (2.0, 1.0)
    acc = bptt.shared(np.zeros(3), name="acc")
    x = T.vector("x")
    f = bptt.function([x], acc * 1, updates=[(acc, acc + x)], mode=mode)
    np.testing.assert_array_equal(f(np.ones(3)), np.zeros(3))  # the old value
    np.testing.assert_array_equal(f(np.ones(3)), np.ones(3))
    np.testing.assert_array_equal(acc.get_value(), 2 * np.ones(3))


def test_a_failing_call_changes_no_shared_value(mode):
    count = bptt.shared(np.array(0, dtype="int64"), name="count")
    w = bptt.shared(np.ones(3), name="w")
    m, v = T.matrix("m"), T.vector("v")
    # count's update is computed first; the dot raises on mismatched shapes.
    f = bptt.function([m, v], [], updates=[(count, count + 1), (w, T.dot(m, v) + w)],
                      mode=mode)
    f(np.ones((3, 2)), np.ones(2))
    assert count.get_value() == 1
    np.testing.assert_array_equal(w.get_value(), 3 * np.ones(3))
    with pytest.raises(ValueError) as info:
        f(np.ones((3, 2)), np.ones(4))
    assert any("while calling function" in n for n in getattr(info.value, "__notes__", []))
    assert count.get_value() == 1
    np.testing.assert_array_equal(w.get_value(), 3 * np.ones(3))


def test_update_arguments_are_checked(mode):
    s = bptt.shared(np.zeros(3), name="s")
    x = T.vector("x")
    with pytest.raises(TypeError, match="not a shared variable"):
        bptt.function([x], x, updates={x: x + 1}, mode=mode)
    with pytest.raises(ValueError, match="updated twice"):
        bptt.function([x], x, updates=[(s, x), (s, x + 1)], mode=mode)
    with pytest.raises(TypeError, match=r"dtype int32.*astype\('float64'\)"):
        bptt.function([], [], updates={s: T.ivector("i")}, mode=mode, on_unused_input="ignore")
    with pytest.raises(TypeError, match="has 2 dimension"):
        bptt.function([], [], updates={s: T.matrix("m")}, mode=mode)
    with pytest.raises(TypeError, match=r"\(variable, value\) pairs"):
        bptt.function([x], x, updates=[s], mode=mode)
    # Constants are converted to the variable's dtype when nothing is lost.
    f = bptt.function([], [], updates={s: np.array([1, 2, 3])}, mode=mode)
    f()
    assert s.get_value().dtype == np.float64 and s.get_value().tolist() == [1.0, 2.0, 3.0]


def test_default_updates_apply_unless_overridden(mode):
    n = bptt.shared(np.array(0, dtype="int64"), name="n")
    n.default_update = n + 1
    x = T.scalar("x")
    f = bptt.function([x], x * 2, mode=mode, on_unused_input="ignore")
    g = bptt.function([x], x + n, mode=mode)
    h = bptt.function([x], x + n, updates={n: n + 10}, mode=mode)
    f(1.0)
    assert n.get_value() == 0  # f does not read n
    assert g(1.0) == 1.0 and n.get_value() == 1
    assert h(1.0) == 2.0 and n.get_value() == 11


# -- givens and unused inputs --------------------------------------------------
def test_givens_replace_variables(mode):
    x, y = T.vector("x"), T.vector("y")
    data = bptt.shared(np.arange(4.0), name="data")
    f = bptt.function([y], x * y, givens={x: data * 2}, mode=mode)
    np.testing.assert_array_equal(f(np.ones(4)), np.arange(4.0) * 2)
    g = bptt.function([y], x + y, givens=[(x, np.array([1.0, 2.0]))], mode=mode)
    np.testing.assert_array_equal(g(np.ones(2)), [2.0, 3.0])
    s = bptt.shared(np.zeros(2), name="s")
    h = bptt.function([y], [], updates={s: s + x}, givens={x: y * 3}, mode=mode)
    h(np.ones(2))
    np.testing.assert_array_equal(s.get_value(), [3.0, 3.0])


def test_givens_are_checked(mode):
    x, y = T.vector("x"), T.vector("y")
    with pytest.raises(ValueError, match="is an input of the function"):
        bptt.function([x], x + 1, givens={x: y}, mode=mode)
    with pytest.raises(TypeError, match="has 2 dimension"):
        bptt.function([y], x + y, givens={x: T.matrix()}, mode=mode)
    with pytest.raises(TypeError, match="dtype int32"):
        bptt.function([y], x + y, givens={x: T.ivector()}, mode=mode)
    with pytest.raises(TypeError, match="key must be a symbolic variable"):
        bptt.function([y], y, givens={1.0: y}, mode=mode)


def test_on_unused_input(mode):
    x, y = T.vector("x"), T.vector("y")
    with pytest.raises(UnusedInputError, match=r"input 1, 'y'"):
        bptt.function([x, y], x + 1, mode=mode)
    with pytest.warns(UserWarning, match="not used"):
        f = bptt.function([x, y], x + 1, mode=mode, on_unused_input="warn")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = bptt.function([x, y], x + 1, mode=mode, on_unused_input="ignore")
    for fn in (f, g):
        np.testing.assert_array_equal(fn(np.ones(2), np.ones(5)), [2.0, 2.0])
    with pytest.raises(ValueError, match="on_unused_input"):
        bptt.function([x], x, mode=mode, on_unused_input="maybe")


def test_inputs_are_checked(mode):
    x = T.vector("x")
    s = bptt.shared(np.zeros(2))
    with pytest.raises(TypeError, match="shared variable"):
        bptt.function([s], s + 1, mode=mode)
    with pytest.raises(TypeError, match="not a symbolic variable"):
        bptt.function([np.ones(2)], x, mode=mode)
    with pytest.raises(ValueError, match="appears twice"):
        bptt.function([x, x], x, mode=mode)
    with pytest.raises(TypeError, match="must be a list"):
        bptt.function(x, x, mode=mode)
    with pytest.raises(bptt.MissingInputError, match="'x'"):
        bptt.function([], x + 1, mode=mode)


def test_profile_counts_calls(mode):
    x = T.vector("x")
    f = bptt.function([x], x + 1, mode=mode, profile=True, name="inc")
    assert bptt.function([x], x + 1, mode=mode).profile is None
    for _ in range(3):
        f(np.ones(2))
    assert f.profile.calls == 3 and f.profile.call_time > 0
    assert "inc" in f.profile.summary() and "3 calls" in f.profile.summary()
