"""Special functions of float64 scalars for compiled code (tensor/special.py's ops).

Generated code sees them through ``runtime`` as ``special_<name>``; they run
from Python too (plain functions under `register_jitable`), which the tests use.

* **erf, erfc, gamma, gammaln**: the C library's (``math.erf``...), which
  numba calls directly.
* **psi** (digamma) and **tri_gamma** (``polygamma(1, x)``): for ``x < 10``
  the recurrences ``psi(x) = psi(x + 1) - 1/x`` and ``tri_gamma(x) =
  tri_gamma(x + 1) + 1/x**2`` move the argument to ``[10, 11)``, where the
  asymptotic (Stirling) series with the Bernoulli numbers B2..B14 is exact to
  rounding (the first term left out is below 1e-16 of the value there).
  Negative arguments use the reflection formulas ``psi(x) = psi(1 - x) -
  pi / tan(pi x)`` and ``tri_gamma(x) = -tri_gamma(1 - x) + (pi / sin(pi
  x))**2``, with ``x`` first reduced by its nearest integer (exactly, where
  the fractional part ``x - floor(x)`` would round just below an integer).
  Poles as SciPy: psi(+0) is -inf, psi(-0) is +inf, psi of a negative
  integer is NaN; tri_gamma is +inf at every non-positive integer. Near
  psi's roots the error is absolute (a few 1e-16), not relative.
* **erfinv, erfcinv**: Winitzki's closed-form approximation (relative error
  below 2e-3, "A handy approximation for the error function and its
  inverse", 2008) refined by Halley's method on ``erf(x) = y``, or on
  ``erfc(x) = q`` in the tails (``|y| >= 1/2``), where ``q = 1 - |y|`` is
  exact and erfc keeps its relative precision. Halley's steps converge
  cubically: two reach rounding for ``|y| < 1/2``, three in the tails (one
  and two leave 2e-13 and 2e-7 relative error there). ``erfc(x) = q`` needs
  ``exp(-x**2)`` as a normal number: below q = 1e-300 the result loses
  digits gradually.
"""
from __future__ import annotations

import math

import numpy as np
from numba.extending import register_jitable

__all__ = ["special_erf", "special_erfc", "special_gamma", "special_gammaln",
           "special_psi", "special_tri_gamma", "special_erfinv", "special_erfcinv"]

_helper = register_jitable(no_cfunc_wrapper=True)

_D = np.float64
_PI = _D(math.pi)
_TWO_OVER_SQRT_PI = _D(2.0 / math.sqrt(math.pi))
_WINITZKI_A = _D(0.147)
_WINITZKI_B = _D(2.0 / (math.pi * 0.147))
_ASYMPTOTIC_FROM = _D(10.0)
# psi(x) ~ log x - 1/(2x) - sum_k B_2k / (2k x**2k): the B_2k / 2k, k = 1..7
_PSI_SERIES = (_D(1 / 12), _D(-1 / 120), _D(1 / 252), _D(-1 / 240), _D(1 / 132),
               _D(-691 / 32760), _D(1 / 12))
# tri_gamma(x) ~ 1/x + 1/(2x**2) + sum_k B_2k / x**(2k+1): the B_2k, k = 1..7
_TRIGAMMA_SERIES = (_D(1 / 6), _D(-1 / 30), _D(1 / 42), _D(-1 / 30), _D(5 / 66),
                    _D(-691 / 2730), _D(7 / 6))


# numba compiles calls of these C library functions by any name
special_erf, special_erfc, special_gamma, special_gammaln = (math.erf, math.erfc, math.gamma,
                                                             math.lgamma)


@_helper
def _series(z, coefficients):
    """sum_k coefficients[k] z**(k + 1), by Horner's rule."""
    acc = _D(0.0)
    for k in range(len(coefficients) - 1, -1, -1):
        acc = (acc + coefficients[k]) * z
    return acc


@_helper
def _psi_positive(x):
    shift = _D(0.0)
    while x < _ASYMPTOTIC_FROM:
        shift -= 1.0 / x
        x += 1.0
    return shift + math.log(x) - 0.5 / x - _series(1.0 / (x * x), _PSI_SERIES)


@_helper
def _tri_gamma_positive(x):
    shift = _D(0.0)
    while x < _ASYMPTOTIC_FROM:
        shift += 1.0 / (x * x)
        x += 1.0
    return shift + 1.0 / x + 0.5 / (x * x) + _series(1.0 / (x * x), _TRIGAMMA_SERIES) / x


@_helper
def special_psi(x):
    if x > 0.0 or math.isnan(x):
        return _psi_positive(x)
    if x == math.floor(x):          # a pole (-inf included)
        if x == 0.0:
            return -math.copysign(math.inf, x)
        return math.nan
    # tan has period pi, and x minus its nearest integer is exact
    return _psi_positive(1.0 - x) - _PI / math.tan(_PI * (x - round(x)))


@_helper
def special_tri_gamma(x):
    if x > 0.0 or math.isnan(x):
        return _tri_gamma_positive(x)
    if x == math.floor(x):
        return math.inf
    s = math.sin(_PI * (x - round(x)))
    return -_tri_gamma_positive(1.0 - x) + (_PI / s) ** 2


@_helper
def _winitzki(w):
    """erfinv(y) >= 0 to 2e-3 relative, from ``w = log(1 - y**2)``; rationalised so
    that small |w| does not cancel."""
    b = _WINITZKI_B + 0.5 * w
    c = -w / _WINITZKI_A
    return math.sqrt(c / (math.sqrt(b * b + c) + b))


@_helper
def _halley(x, residual, derivative):
    """One Halley step for f(x) = 0 where f''(x) = -2 x f'(x) (erf and erfc)."""
    t = residual / derivative
    return x - t / (1.0 + x * t)


@_helper
def _erfcinv_tail(q):
    """erfcinv(q) for 0 < q <= 1/2."""
    x = _winitzki(math.log(q) + math.log(2.0 - q))
    for _ in range(3):
        x = _halley(x, math.erfc(x) - q, -_TWO_OVER_SQRT_PI * math.exp(-x * x))
    return x


@_helper
def special_erfinv(y):
    a = abs(y)
    if not a < 1.0:                 # NaN, +-1, beyond
        return math.copysign(math.inf, y) if a == 1.0 else math.nan
    if a >= 0.5:
        return math.copysign(_erfcinv_tail(1.0 - a), y)
    x = math.copysign(_winitzki(math.log1p(-y * y)), y)
    for _ in range(2):
        x = _halley(x, math.erf(x) - y, _TWO_OVER_SQRT_PI * math.exp(-x * x))
    return x


@_helper
def special_erfcinv(q):
    if not 0.0 < q < 2.0:           # NaN, 0, 2, outside
        return math.inf if q == 0.0 else -math.inf if q == 2.0 else math.nan
    if q > 1.5:
        return -_erfcinv_tail(2.0 - q)
    if q >= 0.5:
        return special_erfinv(1.0 - q)
    return _erfcinv_tail(q)
