"""bptt/link/numba/fastmath.py: accuracy in ulp against NumPy, special values, scalar = loop.

The oracle is NumPy's long double (x87, 64-bit mantissa) evaluation of each
function, 11 bits more than float64: its error is far below 0.01 ulp of the
result. The error of a result is ``|y - ref| / ulp`` with ``ulp`` the spacing of
float64 (or float32) at the correctly rounded ``ref``, so in the subnormal
range it is the smallest subnormal. Where the rounded reference is NaN, an
infinity or a zero, the result must be exactly that (zeros with their sign).
"""
import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bptt.link.numba import fastmath as fm

LD = np.longdouble


def _sigmoid_ref(x):
    e = np.exp(-np.abs(x))
    return np.where(x < 0, e, LD(1)) / (1 + e)


def _softplus_ref(x):
    return np.maximum(x, LD(0)) + np.log1p(np.exp(-np.abs(x)))


#: name: (function, long double reference, max ulp float64, max ulp float32);
#: the bounds are those of the table in fastmath's docstring.
CASES = {
    "exp": (fm.fast_exp, np.exp, 1.5, 1.5),
    "expm1": (fm.fast_expm1, np.expm1, 2.5, 2.5),
    "log": (fm.fast_log, np.log, 1, 1),
    "log1p": (fm.fast_log1p, np.log1p, 1, 1),
    "tanh": (fm.fast_tanh, np.tanh, 3, 3),
    "sigmoid": (fm.fast_sigmoid, _sigmoid_ref, 3, 3),
    "softplus": (fm.fast_softplus, _softplus_ref, 2, 2),
}
NAMES = list(CASES)
DTYPES = [np.float64, np.float32]


@numba.njit(error_model="numpy")
def _loop(f, x, out):
    for i in range(x.shape[0]):
        out[i] = f(x[i])
    return out


def run_loop(name, x):
    return _loop(CASES[name][0], x, np.empty_like(x))


def ulp_errors(name, x, y):
    """Error of `y` = f(`x`) in ulp; asserts the exact cases (NaN, inf, 0) on the way."""
    dtype = x.dtype
    with np.errstate(all="ignore"):
        ref = CASES[name][1](x.astype(LD))
        rounded = ref.astype(dtype)
    nan = np.isnan(rounded)
    np.testing.assert_array_equal(np.isnan(y), nan, err_msg=f"{name}: NaN where NumPy has NaN")
    exact = ~nan & (np.isinf(rounded) | (rounded == 0))
    np.testing.assert_array_equal(y[exact], rounded[exact], err_msg=f"{name}: inf/0")
    np.testing.assert_array_equal(np.signbit(y[exact]), np.signbit(rounded[exact]),
                                  err_msg=f"{name}: sign of a zero")
    ok = ~nan & ~exact
    mag = np.abs(rounded[ok])
    ulp = np.spacing(np.where(mag == np.finfo(dtype).max, np.nextafter(mag, 0), mag)).astype(LD)
    return np.abs(y[ok].astype(LD) - ref[ok]) / ulp


def assert_within_bound(name, x):
    x = np.asarray(x)
    bound = CASES[name][2 if x.dtype == np.float64 else 3]
    err = ulp_errors(name, x, run_loop(name, x))
    if err.size:
        worst = int(np.argmax(err))
        assert err[worst] <= bound, (
            f"{name}({x.dtype}): {float(err[worst]):.2f} ulp > {bound} at x = {_at(name, x, worst)!r}")


def _at(name, x, k):
    """The k-th input among those `ulp_errors` measured (for the failure message)."""
    with np.errstate(all="ignore"):
        rounded = CASES[name][1](x.astype(LD)).astype(x.dtype)
    ok = ~np.isnan(rounded) & ~np.isinf(rounded) & (rounded != 0)
    return x[ok][k]


def dense_grid(dtype, n=200_001):
    """Every binade of both signs from the smallest subnormal to the largest float,
    plus a fine linear grid over [-50, 50] and the neighbourhoods of 0 and 1."""
    fi = np.finfo(dtype)
    with np.errstate(over="ignore"):
        mags = np.geomspace(float(fi.smallest_subnormal), float(fi.max), n // 2).astype(dtype)
    lin = np.linspace(-50, 50, n // 2).astype(dtype)
    near = np.concatenate([1 + np.geomspace(fi.eps / 4, 1, 2000), 1 - np.geomspace(fi.eps / 4, 1, 2000)])
    return np.unique(np.concatenate([mags, -mags, lin, near.astype(dtype)]))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", NAMES)
def test_dense_grid_within_bound(name, dtype):
    assert_within_bound(name, dense_grid(dtype))


#: where each function changes behaviour (ranges the grid above covers only sparsely)
INTERESTING = {
    "exp": [(-750, -700), (-110, -85), (700, 712), (80, 90), (-1, 1)],
    "expm1": [(-1, 1), (-40, -15), (15, 45), (700, 712), (80, 90)],
    "log": [(0.5, 2), (0.7, 0.72), (1.4, 1.42), (1e-310, 1e-300), (1e-40, 1e-37)],
    "log1p": [(-1, -0.9), (-0.3, 0.5), (1e15, 1e17), (1e6, 2e7)],
    "tanh": [(-1, 1), (-25, 25), (-0.01, 0.01), (8, 10)],
    "sigmoid": [(-750, -700), (-110, -85), (-40, 40), (30, 40)],
    "softplus": [(-750, -700), (-110, -85), (-40, 40), (-1, 1)],
}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", NAMES)
def test_interesting_ranges_within_bound(name, dtype):
    fi = np.finfo(dtype)
    xs = [np.linspace(max(lo, -float(fi.max)), min(hi, float(fi.max)), 50_001).astype(dtype)
          for lo, hi in INTERESTING[name]]
    assert_within_bound(name, np.concatenate(xs))


def _floats(dtype):
    width = 64 if dtype == np.float64 else 32
    return st.lists(st.floats(width=width, allow_nan=True, allow_infinity=True,
                              allow_subnormal=True), min_size=1, max_size=64)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", NAMES)
def test_hypothesis_values_within_bound(name, dtype):
    @given(_floats(dtype))
    def check(values):
        assert_within_bound(name, np.array(values, dtype=dtype))
    check()


def special_values(dtype):
    fi = np.finfo(dtype)
    tiny, sub = fi.smallest_normal, fi.smallest_subnormal
    huge = fi.max
    # overflow / underflow thresholds of exp and the neighbours of each
    ln_max, ln_sub = np.log(LD(huge)), np.log(LD(sub))
    thresholds = [ln_max, ln_sub, np.log(LD(tiny)), -ln_max, -ln_sub]
    edges = []
    for t in thresholds:
        v = dtype(t)
        edges += [np.nextafter(v, -np.inf, dtype=dtype), v, np.nextafter(v, np.inf, dtype=dtype)]
    base = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, huge, -huge, tiny, -tiny, sub, -sub,
            sub * 3, tiny / 2, 1.0, -1.0, np.nextafter(dtype(-1), 0, dtype=dtype),
            fi.eps, -fi.eps, fi.eps / 4, 2.0, 0.5]
    return np.array(base + edges, dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", NAMES)
def test_special_values(name, dtype):
    assert_within_bound(name, special_values(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", NAMES)
def test_special_values_match_numpy_exactly(name, dtype):
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan]
    if name in ("log", "log1p"):
        edges += [-1.0, -2.0]
    x = np.array(edges, dtype=dtype)
    numpy_form = {"sigmoid": lambda v: 1 / (1 + np.exp(-v)),
                  "softplus": lambda v: np.maximum(v, 0) + np.log1p(np.exp(-np.abs(v)))}
    with np.errstate(all="ignore"):
        want = numpy_form.get(name, getattr(np, name, None))(x)
    got = run_loop(name, x)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got[:2]), np.signbit(want[:2]))


@numba.njit(error_model="numpy")
def _one(f, v):
    return f(v)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", NAMES)
def test_scalar_and_loop_agree_bit_for_bit(name, dtype):
    rng = np.random.default_rng(0)
    x = np.concatenate([special_values(dtype),
                        rng.standard_normal(64).astype(dtype) * dtype(30)])
    in_loop = run_loop(name, x)
    f = CASES[name][0]
    from_python = np.array([f(v) for v in x], dtype=dtype)      # the dispatcher on a scalar
    in_numba = np.array([_one(f, v) for v in x], dtype=dtype)   # a scalar inside numba code
    for other in (from_python, in_numba):
        np.testing.assert_array_equal(other.view(f"u{x.itemsize}"), in_loop.view(f"u{x.itemsize}"))


@pytest.mark.parametrize("name", NAMES)
def test_float32_is_computed_in_float32(name):
    f = CASES[name][0]
    f(np.float32(0.5))
    f(np.float64(0.5))
    sigs = {sig.args[0]: sig.return_type for sig in f.nopython_signatures}
    assert sigs[numba.float32] == numba.float32
    assert sigs[numba.float64] == numba.float64


def test_integer_arguments_are_refused():
    with pytest.raises(numba.core.errors.TypingError):
        fm.fast_exp(np.int64(1))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_scalar_ops_on_0d_values_call_the_fast_functions(dtype):
    import bptt
    import bptt.tensor as T

    x = T.scalar(dtype=dtype)
    ops = {"exp": T.exp, "expm1": T.expm1, "log": T.log, "log1p": T.log1p, "tanh": T.tanh,
           "sigmoid": T.nnet.sigmoid, "softplus": T.nnet.softplus}
    f = bptt.function([x], [op(x) for op in ops.values()], mode="NUMBA")
    for name in ops:
        assert f"fast_{name}(" in f._fn.source
    for v in special_values(np.dtype(dtype).type)[:12].tolist() + [0.3, -2.5, 40.0]:
        v = np.asarray(v, dtype=dtype)
        for name, out in zip(ops, f(v)):
            assert out.dtype == dtype and out.shape == ()
            x1 = v.reshape(1)
            assert np.array_equal(out.reshape(1), run_loop(name, x1), equal_nan=True), (name, v)
