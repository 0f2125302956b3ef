"""`check`: a value passed through, or an error (ValueError unless named) whose message carries run-time values;
`check_shape`: static sizes proven at run time, even where only the sizes are read."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.tensor.assertion import Check, check, check_shape


def test_check_passes_the_value_or_reports_what_came(mode):
    x = T.dvector("x")
    y = check(x, x.shape[0] >= 2, "x {{braces}} has {} rows, {} needed", x.shape[0], 2) * 2.0
    f = bptt.function([x], y, mode=mode)
    np.testing.assert_array_equal(f(np.array([1.0, 2.0])), [2.0, 4.0])
    with pytest.raises(ValueError, match=r"^x \{braces\} has 1 rows, 2 needed"):
        f(np.array([1.0]))


def test_check_gradient_is_the_identity(mode):
    bptt.verify_grad(lambda x: check(x, T.all(x > -10.0), "never") ** 2,
                     [np.array([0.5, -1.5])], mode=mode)


def test_check_rejects_bad_arguments():
    x = T.dvector()
    with pytest.raises(TypeError, match="boolean scalar"):
        check(x, x, "m")
    with pytest.raises(ValueError, match="1 slots for 0 values"):
        Check("{}")(x, x.shape[0] > 0)


@pytest.mark.parametrize("read", ["value", "size"])
def test_check_raises_the_error_it_names(mode, read):
    x = T.dvector("x")
    y = Check("x has {} rows", shape=(2,), error="IndexError")(x, T.eq(x.shape[0], 2), x.shape[0])
    # reading only the proven size folds it to a constant, which keeps a copy of the check
    f = bptt.function([x], y * 2.0 if read == "value" else y.shape[0] + 0, mode=mode)
    with pytest.raises(IndexError, match="^x has 3 rows"):
        f(np.zeros(3))
    with pytest.raises(ValueError, match="error must be one of"):
        Check("m", error="KeyError")


# -- the static sizes a check proves: reading them keeps the check -------------------

# Graphs that read the sizes a check proves, most without reading the checked value:
# the size-facts rewrites fold such reads to constants, which must not drop the check.
READERS = {
    "size": lambda y, d: y.shape[d] + 0,
    "shape": lambda y, d: y.shape * 1,
    "derived size": lambda y, d: (T.exp(y) * 2.0).shape[d] + 0,
    "alloc": lambda y, d: T.alloc(1.0, *(y.shape[i] for i in range(y.ndim))) * 2.0,
    "reshape": lambda y, d: T.reshape(y, tuple(y.shape[i] for i in range(y.ndim))) * 2.0,
    "sum": lambda y, d: y.sum(axis=d) * 0.0 + y.shape[d],
}

# The sources of static sizes that are checked at run time, and their messages.
SOURCES = {
    "check_shape": (lambda x, shape: check_shape(x, shape, "the value"), r"^the value has shape"),
    "specify_shape": (lambda x, shape: T.specify_shape(x, shape),
                      r"^specify_shape: expected the sizes"),
}


@st.composite
def _checked_shapes(draw):
    """(checked shape with some None, a valid value shape, the checked dimension made wrong)."""
    ndim = draw(st.integers(1, 3))
    shape = draw(st.lists(st.one_of(st.none(), st.integers(1, 3)), min_size=ndim, max_size=ndim)
                 .filter(lambda s: any(v is not None for v in s)))
    value = tuple(draw(st.integers(1, 3)) if s is None else s for s in shape)
    wrong = draw(st.sampled_from([d for d, s in enumerate(shape) if s is not None]))
    return tuple(shape), value, wrong


@given(_checked_shapes(), st.sampled_from(sorted(READERS)), st.sampled_from(sorted(SOURCES)))
def test_a_read_of_a_checked_size_keeps_the_check(mode, shapes, reader, source):
    shape, good, d = shapes
    build, message = SOURCES[source]
    x = T.tensor("float64", (None,) * len(shape), "x")
    y = build(x, shape)
    f = bptt.function([x], READERS[reader](y, d), mode=mode)
    f(np.ones(good))
    bad = tuple(n + 1 if i == d else n for i, n in enumerate(good))
    with pytest.raises(ValueError, match=message):
        f(np.ones(bad))


def test_a_shape_check_reports_what_came_not_its_own_hint(mode):
    """The check's condition and message read the input's sizes, not the hinted ones."""
    x = T.tensor4("x")
    y = check_shape(x, (None, 2, 5, None), "x")
    f = bptt.function([x], T.reshape(y, (y.shape[0], 10, y.shape[3])), mode=mode)
    assert f(np.ones((1, 2, 5, 4))).shape == (1, 10, 4)
    with pytest.raises(ValueError, match=r"^x has shape \(1, 2, 6, 4\); its type needs "
                                         r"\(\?, 2, 5, \?\)"):
        f(np.ones((1, 2, 6, 4)))


def test_a_given_for_a_static_shared_variable_is_checked_when_only_its_size_is_read(mode):
    a = T.dmatrix("a")
    w = bptt.shared(np.ones((2, 5)), shape=(None, 5), name="W")
    f = bptt.function([a], w.shape[1] * 1, givens={w: a}, mode=mode)
    assert f(np.ones((3, 5))) == 5
    with pytest.raises(ValueError, match=r"the value for 'W' .* has shape \(2, 6\); its type "
                                         r"needs \(\?, 5\)"):
        f(np.ones((2, 6)))


# -- a check's condition is not decided by what its consumers need ---------------------

# Consumers of a checked matrix that fail unless its column count is w's length (or 3):
# the size facts learn that equality from them, which must not fold the check that runs
# before them.
CONSUMERS = {
    "join": lambda y, w: T.join(0, w[None], y),
    "dot": lambda y, w: T.dot(y, w),
    "specify_shape": lambda y, w: T.specify_shape(y, (None, 3)) + w.sum(),
    "dot in a sum": lambda y, w: T.dot(T.exp(y) * 2.0, w).sum() + y.shape[1],
}


@pytest.mark.parametrize("consumer", sorted(CONSUMERS))
def test_a_check_is_not_folded_by_what_its_consumers_need(mode, consumer):
    x, w = T.dmatrix("x"), T.dvector("w")
    y = check(x, T.eq(x.shape[1], w.shape[0]), "x has {} columns for {} weights",
              x.shape[1], w.shape[0])
    f = bptt.function([x, w], CONSUMERS[consumer](y, w), mode=mode)
    f(np.ones((2, 3)), np.ones(3))
    with pytest.raises(ValueError, match=r"^x has 4 columns for 3 weights(\n|$)"):
        f(np.ones((2, 4)), np.ones(3))
