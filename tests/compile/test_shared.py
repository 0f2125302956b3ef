"""`bptt.shared`: types of the stored value, get/set, and Theano's borrow semantics."""
import copy

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

import bptt
import bptt.tensor as T


@pytest.mark.parametrize("value, dtype, ndim", [
    (3, "int64", 0), (2.5, "float64", 0), (True, "bool", 0),
    (np.float32(1.5), "float32", 0), ([1, 2], "int64", 1),
    (np.zeros((2, 3), dtype="int8"), "int8", 2)])
def test_dtype_and_ndim_follow_the_value(value, dtype, ndim):
    s = bptt.shared(value, name="s")
    assert s.dtype == dtype and s.ndim == ndim
    assert s.type.shape == (None,) * ndim
    assert s.get_value().dtype == dtype


def test_python_floats_become_floatx(monkeypatch):
    monkeypatch.setattr(bptt.config, "floatX", "float32")
    assert bptt.shared(0.5).dtype == "float32"


def test_unsupported_values_are_rejected():
    with pytest.raises(TypeError, match="cannot store"):
        bptt.shared(object())
    with pytest.raises(ValueError, match="2 entries"):
        bptt.shared(np.zeros(3), shape=(3, 1))


@given(arrays("float64", array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
              elements=st.floats(-1e6, 1e6)))
def test_no_borrow_means_no_shared_memory(a):
    keep = a.copy()
    s = bptt.shared(a)
    assert not np.shares_memory(s.get_value(borrow=True), a)
    v = s.get_value()
    assert not np.shares_memory(v, s.get_value(borrow=True))
    a[...] = 7.0
    v[...] = 8.0
    np.testing.assert_array_equal(s.get_value(), keep)
    b = np.array(keep + 1)
    s.set_value(b)
    b[...] = 9.0
    np.testing.assert_array_equal(s.get_value(), keep + 1)


def test_borrow_shares_memory_when_the_array_can_be_used_as_it_is():
    a = np.arange(4.0)
    s = bptt.shared(a, borrow=True)
    assert s.get_value(borrow=True) is a
    a[0] = 10.0
    assert s.get_value()[0] == 10.0
    b = np.ones(4)
    s.set_value(b, borrow=True)
    assert s.get_value(borrow=True) is b
    inner = s.get_value(borrow=True)
    inner[1] = -1.0
    assert s.get_value()[1] == -1.0


def test_borrowed_arrays_are_copied_when_their_layout_cannot_be_used():
    a = np.arange(12.0).reshape(3, 4)
    s = bptt.shared(a.T, borrow=True)
    stored = s.get_value(borrow=True)
    assert stored.flags.c_contiguous and not np.shares_memory(stored, a)
    np.testing.assert_array_equal(stored, a.T)
    s.set_value(a.astype(">f8"), borrow=True)
    assert s.get_value(borrow=True).dtype.isnative


def test_set_value_checks_the_type():
    s = bptt.shared(np.zeros(3, dtype="float32"), name="w")
    s.set_value([1, 2])  # lossless, and the size of a dimension may change
    assert s.get_value().dtype == np.float32 and s.get_value().shape == (2,)
    with pytest.raises(TypeError, match="'w'.*lose information") as info:
        s.set_value(np.array([0.1]))
    # the fix is a cast here: there is no function to compile with allow_input_downcast
    assert "allow_input_downcast" not in str(info.value)
    assert "set_value(value.astype('float32'))" in str(info.value)
    with pytest.raises(TypeError, match="dimension"):
        s.set_value(np.zeros((2, 2)))
    fixed = bptt.shared(np.zeros(3), shape=(3,))
    with pytest.raises(ValueError, match="size 3"):
        fixed.set_value(np.zeros(4))


def test_clones_share_the_value():
    s = bptt.shared(np.zeros(2), name="s")
    c = s.clone()
    s.set_value(np.ones(2))
    np.testing.assert_array_equal(c.get_value(), np.ones(2))
    assert copy.copy(s.container) == c.container


def test_functions_read_the_current_value(mode):
    s = bptt.shared(np.zeros(3), name="s")
    x = T.vector("x")
    f = bptt.function([x], x + s, mode=mode)
    np.testing.assert_array_equal(f(np.ones(3)), np.ones(3))
    s.set_value(np.arange(3.0))
    np.testing.assert_array_equal(f(np.ones(3)), np.arange(3.0) + 1)
    s.set_value(np.arange(5.0))  # a new length is fine: the type has unknown sizes
    np.testing.assert_array_equal(f(np.ones(5)), np.arange(5.0) + 1)
    borrowed = s.get_value(borrow=True)
    borrowed[0] = 100.0  # in-place changes of a borrowed value are seen
    assert f(np.zeros(5))[0] == 100.0


def test_updated_values_are_owned_by_the_shared_variable(mode):
    s = bptt.shared(np.zeros(2), name="s")
    x = T.vector("x")
    f = bptt.function([x], [], updates={s: x}, mode=mode)
    a = np.array([1.0, 2.0])
    f(a)
    a[0] = 50.0
    np.testing.assert_array_equal(s.get_value(), [1.0, 2.0])
