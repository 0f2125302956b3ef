"""`check`: a value passed through, or a ValueError whose message carries run-time values."""
import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.tensor.assertion import Check, check


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
