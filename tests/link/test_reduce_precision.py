"""float32 sums in compiled code add into float64 (link/numba/dispatch/math.py)."""
import numpy as np
import pytest

import bptt
import bptt.tensor as T


@pytest.mark.parametrize("axis", [None, 0])
def test_float32_sums_are_as_accurate_as_a_float64_sum_rounded_once(axis):
    x = T.tensor("float32", shape=(None, None))
    f = bptt.function([x], x.sum(axis=axis), mode="NUMBA")
    # 2**20 rows of 0.1: added one by one in float32, the total drifts by about 1%
    v = np.full((2 ** 20, 2), 0.1, np.float32)
    got = f(v)
    assert got.dtype == np.float32
    exact = v.astype(np.float64).sum(axis=axis)
    np.testing.assert_array_equal(got, exact.astype(np.float32))
