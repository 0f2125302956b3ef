"""erf, erfc, erfinv, erfcinv, gamma, gammaln, psi, tri_gamma: SciPy's values (tails, poles
and the compiled series included), finite-difference gradients, both modes."""
import functools

import numpy as np
import pytest
import scipy.special as sp
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.compat.theano.tensor as TT
import bptt.tensor as T
from tests.strategies import arrays, assert_same, shapes

NAMES = ("erf", "erfc", "erfinv", "erfcinv", "gamma", "gammaln", "psi", "tri_gamma")
SCIPY = {"erf": sp.erf, "erfc": sp.erfc, "erfinv": sp.erfinv, "erfcinv": sp.erfcinv,
         "gamma": sp.gamma, "gammaln": sp.gammaln, "psi": sp.psi,
         "tri_gamma": lambda x: sp.polygamma(1, x).astype(x.dtype)}


def _points():
    """Per function, float64 points over its domain: the bulk, the tails, the poles."""
    rng = np.random.default_rng(0)
    tiny = np.logspace(-300, -0.31, 400)            # 1e-300 .. 0.49
    real = np.concatenate([rng.uniform(-30, 30, 400), [0.0, -0.0, -1.0, -7.0, np.nan, np.inf],
                           -np.logspace(-12, 1, 100)])
    unit = np.concatenate([rng.uniform(-1, 1, 400), 1 - tiny, tiny - 1, tiny, -tiny,
                           [0.0, 0.5, -0.5, 1.0, -1.0, 1.5, np.nan]])
    two = np.concatenate([rng.uniform(0, 2, 400), tiny, 2 - np.logspace(-15, -0.31, 200),
                          [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, -1.0, np.nan]])
    return {"erf": np.concatenate([real, [-np.inf]]), "erfc": np.concatenate([real, [-np.inf]]),
            "erfinv": unit, "erfcinv": two,
            "gamma": np.concatenate([rng.uniform(-20, 171, 400), [0.0, -0.0, -3.0, 172.0]]),
            "gammaln": np.concatenate([rng.uniform(-50, 50, 400), np.logspace(-300, 300, 200)]),
            "psi": np.concatenate([real, np.logspace(-300, 300, 200), [-np.inf]]),
            "tri_gamma": np.concatenate([real, np.logspace(-150, 300, 200)])}


POINTS = _points()


@functools.lru_cache(maxsize=None)
def _all_functions(mode, dtype, ndim):
    xs = [T.tensor(dtype, (None,) * ndim, name=n) for n in NAMES]
    return bptt.function(xs, [getattr(T, n)(x) for n, x in zip(NAMES, xs)], mode=mode)


#: Relative tolerance against SciPy, a few times the largest difference measured. Where
#: it exceeds 1e-15 SciPy is the less accurate (checked with mpmath): erfc beyond 20
#: (cephes, 5e-14), psi near its poles, erfcinv in the tail; gammaln's is near its roots.
RTOL = {"erf": 1e-15, "erfc": 1e-13, "erfinv": 1e-15, "erfcinv": 1e-14, "gamma": 3e-15,
        "gammaln": 2e-14, "psi": 3e-14, "tri_gamma": 4e-15}


def test_values_match_scipy_across_the_domain(mode):
    got = _all_functions(mode, "float64", 1)(*(POINTS[n] for n in NAMES))
    for name, value in zip(NAMES, got):
        want = SCIPY[name](POINTS[name])
        # psi's roots (1.4616..., one per negative unit interval): absolute accuracy only;
        # SciPy's erfc flushes subnormal results to 0, the C library's keeps them
        atol = 1e-14 if name == "psi" else 1e-300
        np.testing.assert_allclose(value, want, rtol=RTOL[name], atol=atol, err_msg=name)


def test_float32_is_the_float64_value_rounded(mode):
    ins = [POINTS[n][np.isfinite(POINTS[n]) & (np.abs(POINTS[n]) < 1e30)].astype("float32")
           for n in NAMES]
    got = _all_functions(mode, "float32", 1)(*ins)
    for name, x, value in zip(NAMES, ins, got):
        assert value.dtype == np.float32, name
        want = SCIPY[name](x.astype("float64"))
        big = np.abs(want) < 3e38   # beyond, float32 overflows to inf: compared below
        np.testing.assert_allclose(value[big], want[big], rtol=3e-6, atol=1e-6, err_msg=name)
        assert np.all(np.isinf(value[~big & np.isfinite(want)])), name


@given(st.data())
def test_any_shape_in_both_modes(mode, data):
    ndim = data.draw(st.integers(0, 2))
    shape = data.draw(shapes(ndim=ndim, max_side=3))
    ins = [data.draw(arrays("float64", shape, "open_unit")) for _ in NAMES]
    got = _all_functions(mode, "float64", ndim)(*ins)
    for name, x, value in zip(NAMES, ins, got):
        assert_same(value, SCIPY[name](x), what=name)


def _gradient_graph(e, u, q, g):
    return [T.erf(e), T.erfc(e), T.erfinv(u), T.erfcinv(q), T.gamma(g), T.gammaln(g),
            T.psi(g), T.psi(-g)]


def test_gradients_match_finite_differences(mode):
    rng = np.random.default_rng(1)
    pt = [rng.uniform(-2, 2, 6), rng.uniform(-0.9, 0.9, 5), rng.uniform(0.1, 1.9, 4),
          rng.uniform(0.3, 4, 3) + 0.25]    # -g stays away from the poles of psi
    bptt.verify_grad(_gradient_graph, pt, rng=rng, mode=mode)


def test_the_derivatives_are_the_textbook_ones():
    x = T.dvector("x")
    v = np.array([-1.5, 0.2, 0.7, 3.0])
    grads = [bptt.grad(T.sum(getattr(T, n)(x)), x) for n in ("erf", "gammaln", "psi", "gamma")]
    got = bptt.function([x], grads, mode="PY")(v)
    want = [2 / np.sqrt(np.pi) * np.exp(-v * v), sp.psi(v), sp.polygamma(1, v),
            sp.gamma(v) * sp.psi(v)]
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-13)


def test_psi_has_no_second_derivative():
    x = T.dscalar("x")
    first = bptt.grad(T.psi(x), x)
    with pytest.raises(NotImplementedError, match=r"polygamma\(2, x\).*differentiate psi once"):
        bptt.grad(first, x)


def test_integers_give_floats_and_theano_has_the_names():
    i = T.ivector("i")
    got = bptt.function([i], T.gammaln(i), mode="PY")(np.array([1, 5], "int32"))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, [0.0, np.log(24.0)], atol=1e-15)
    for name in NAMES:
        assert getattr(TT, name) is getattr(T, name) is getattr(TT.basic, name)
