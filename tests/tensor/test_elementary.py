"""tan, arcsin... log2, arctan2: NumPy's values, finite-difference gradients, both modes."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.compat.theano.tensor as TT
import bptt.tensor as T

#: name -> (NumPy function, the open interval its argument is drawn from)
UNARY = {
    "tan": (np.tan, (-1.4, 1.4)), "arcsin": (np.arcsin, (-0.95, 0.95)),
    "arccos": (np.arccos, (-0.95, 0.95)), "arctan": (np.arctan, (-5, 5)),
    "sinh": (np.sinh, (-5, 5)), "cosh": (np.cosh, (-5, 5)), "arcsinh": (np.arcsinh, (-5, 5)),
    "arccosh": (np.arccosh, (1.1, 6)), "arctanh": (np.arctanh, (-0.95, 0.95)),
    "log2": (np.log2, (0.1, 9)), "log10": (np.log10, (0.1, 9)), "exp2": (np.exp2, (-5, 5)),
}


def _points(rng, interval, size, dtype):
    lo, hi = interval
    return rng.uniform(lo, hi, size=size).astype(dtype)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_values_and_gradient_match_numpy(name, mode):
    fn, interval = UNARY[name]
    rng = np.random.default_rng(len(name))
    op = getattr(T, name)
    assert getattr(TT, name) is op        # Theano programs reach it as theano.tensor.<name>
    x32, x64 = T.vector("x32", dtype="float32"), T.matrix("x64")
    f = bptt.function([x32, x64], [op(x32), op(x64)], mode=mode)
    v32, v64 = _points(rng, interval, 5, "float32"), _points(rng, interval, (2, 3), "float64")
    got32, got64 = f(v32, v64)
    assert got32.dtype == np.float32 and got64.dtype == np.float64
    np.testing.assert_allclose(got32, fn(v32), rtol=2e-6)
    np.testing.assert_allclose(got64, fn(v64), rtol=1e-13)
    bptt.verify_grad(op, [_points(rng, interval, (2, 3), "float64")], rng=rng, mode=mode)


def test_an_integer_input_gives_float64():
    i = T.ivector("i")
    got = bptt.function([i], T.log2(i), mode="PY")(np.array([1, 8], "int32"))
    assert got.dtype == np.float64 and got.tolist() == [0.0, 3.0]


@settings(max_examples=25, deadline=None)
@given(st.floats(-50, 50), st.floats(-50, 50))
def test_arctan2_is_numpy_s_angle_with_its_gradient(y, x):
    vy, vx = T.dscalar("y"), T.dscalar("x")
    out = T.arctan2(vy, vx)
    f = bptt.function([vy, vx], [out] + bptt.grad(out, [vy, vx]), mode="PY")
    got, gy, gx = f(y, x)
    np.testing.assert_allclose(got, np.arctan2(y, x), rtol=1e-14, atol=1e-300)
    r2 = x * x + y * y
    if r2 > 1e-6:
        np.testing.assert_allclose([gy, gx], [x / r2, -y / r2], rtol=1e-12)


def test_arctan2_gradient_and_numba(mode):
    rng = np.random.default_rng(3)
    bptt.verify_grad(T.arctan2, [rng.normal(size=4), rng.normal(size=4) + 3], rng=rng, mode=mode)
    y, x = T.fvector("y"), T.fvector("x")
    vy, vx = rng.normal(size=4).astype("float32"), rng.normal(size=4).astype("float32")
    got = bptt.function([y, x], T.arctan2(y, x), mode=mode)(vy, vx)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.arctan2(vy, vx), rtol=2e-6)
