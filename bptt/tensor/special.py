"""Special functions, elementwise: erf, erfc, erfinv, erfcinv, gamma, gammaln, psi, tri_gamma.

Each is a scalar op (as the functions of elementary.py) whose NumPy form is
``scipy.special``'s and whose numba form calls ``special_<name>``
(link/numba/special.py: the C library's erf, erfc, gamma and lgamma, and
series for psi, tri_gamma, erfinv and erfcinv). The derivatives are the
textbook ones::

    erf'(x)     =  2/sqrt(pi) exp(-x**2)      erfc'(x)    = -erf'(x)
    erfinv'(x)  =  sqrt(pi)/2 exp(erfinv(x)**2)
    erfcinv'(x) = -sqrt(pi)/2 exp(erfcinv(x)**2)
    gamma'(x)   =  gamma(x) psi(x)            gammaln'(x) = psi(x)
    psi'(x)     =  tri_gamma(x)

tri_gamma's own derivative (polygamma of order 2) is not provided, as in
Theano: its gradient raises NotImplementedError naming it.
"""
from __future__ import annotations

import math

from .elemwise import Elemwise
from .math import exp
from .scalar_ops import _Float

__all__ = ["erf", "erfc", "erfinv", "erfcinv", "gamma", "gammaln", "psi", "tri_gamma"]

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)    # Python floats: weak, keep float32
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0


class _Special(_Float):
    """A float op computed by ``scipy.special.<scipy_name>`` and ``special_<name>``."""

    scipy_name = None

    def impl(self, x):
        import scipy.special   # imported on first use: most graphs never need it

        return getattr(scipy.special, self.scipy_name or self.name)(x)

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        # float64 inside: the float32 result is the float64 value rounded once
        return f"special_{self.name}(np.float64({args[0]}))"


class Erf(_Special):
    name = "erf"

    def partials(self, inputs, output):
        x = inputs[0]
        return [_TWO_OVER_SQRT_PI * exp(-(x * x))]


class Erfc(_Special):
    name = "erfc"

    def partials(self, inputs, output):
        x = inputs[0]
        return [-_TWO_OVER_SQRT_PI * exp(-(x * x))]


class Erfinv(_Special):
    name = "erfinv"

    def partials(self, inputs, output):
        return [_SQRT_PI_OVER_TWO * exp(output * output)]


class Erfcinv(_Special):
    name = "erfcinv"

    def partials(self, inputs, output):
        return [-_SQRT_PI_OVER_TWO * exp(output * output)]


class Gamma(_Special):
    name = "gamma"

    def partials(self, inputs, output):
        return [output * psi(inputs[0])]


class GammaLn(_Special):
    name = "gammaln"

    def partials(self, inputs, output):
        return [psi(inputs[0])]


class Psi(_Special):
    """The digamma function, gammaln's derivative."""

    name = "psi"

    def partials(self, inputs, output):
        return [tri_gamma(inputs[0])]


class TriGamma(_Special):
    """psi's derivative, ``polygamma(1, x)``."""

    name = "tri_gamma"

    def impl(self, x):
        import scipy.special

        return scipy.special.polygamma(1, x).astype(x.dtype, copy=False)

    def partials(self, inputs, output):
        raise NotImplementedError(
            "tri_gamma: its derivative, polygamma(2, x), is not implemented, so psi has a "
            "first derivative (tri_gamma) but no second; differentiate psi once only")


erf = Elemwise(Erf())
erfc = Elemwise(Erfc())
erfinv = Elemwise(Erfinv())
erfcinv = Elemwise(Erfcinv())
gamma = Elemwise(Gamma())
gammaln = Elemwise(GammaLn())
psi = Elemwise(Psi())
tri_gamma = Elemwise(TriGamma())
