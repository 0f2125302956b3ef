"""Trigonometric, hyperbolic and base-2/base-10 functions, as NumPy's ufuncs.

Each is a scalar op of its own (NumPy's ufunc in PY mode, the same ufunc in
numba code) with its derivative written from the ufunc's, so Theano programs
that call ``T.tan``, ``T.arcsin``, ``T.log2``... get values, gradients and
compiled code like the core functions of math.py.
"""
from __future__ import annotations

import numpy as np

from .elemwise import Elemwise
from .math import sqrt
from .scalar_ops import _Binary, _Float

__all__ = ["tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh",
           "arctanh", "log2", "log10", "exp2", "arctan2"]


_LN2, _LN10 = float(np.log(2.0)), float(np.log(10.0))    # Python floats: weak, keep float32


class Tan(_Float):
    name, ufunc = "tan", np.tan

    def partials(self, inputs, output):
        return [1 + output * output]


class Arcsin(_Float):
    name, ufunc = "arcsin", np.arcsin

    def partials(self, inputs, output):
        x = inputs[0]
        return [1 / sqrt(1 - x * x)]


class Arccos(_Float):
    name, ufunc = "arccos", np.arccos

    def partials(self, inputs, output):
        x = inputs[0]
        return [-1 / sqrt(1 - x * x)]


class Arctan(_Float):
    name, ufunc = "arctan", np.arctan

    def partials(self, inputs, output):
        x = inputs[0]
        return [1 / (1 + x * x)]


class Sinh(_Float):
    name, ufunc = "sinh", np.sinh

    def partials(self, inputs, output):
        return [cosh(inputs[0])]


class Cosh(_Float):
    name, ufunc = "cosh", np.cosh

    def partials(self, inputs, output):
        return [sinh(inputs[0])]


class Arcsinh(_Float):
    name, ufunc = "arcsinh", np.arcsinh

    def partials(self, inputs, output):
        x = inputs[0]
        return [1 / sqrt(x * x + 1)]


class Arccosh(_Float):
    name, ufunc = "arccosh", np.arccosh

    def partials(self, inputs, output):
        x = inputs[0]
        return [1 / sqrt(x * x - 1)]


class Arctanh(_Float):
    name, ufunc = "arctanh", np.arctanh

    def partials(self, inputs, output):
        x = inputs[0]
        return [1 / (1 - x * x)]


class Log2(_Float):
    name, ufunc = "log2", np.log2

    def partials(self, inputs, output):
        return [1 / (inputs[0] * _LN2)]


class Log10(_Float):
    name, ufunc = "log10", np.log10

    def partials(self, inputs, output):
        return [1 / (inputs[0] * _LN10)]


class Exp2(_Float):
    name, ufunc = "exp2", np.exp2

    def partials(self, inputs, output):
        return [output * _LN2]


class Arctan2(_Binary):
    """arctan2(y, x): the angle of the point (x, y), as NumPy's."""

    name, ufunc, float_valued = "arctan2", np.arctan2, True

    def partials(self, inputs, output):
        y, x = inputs
        r2 = x * x + y * y
        return [x / r2, -y / r2]


tan = Elemwise(Tan())
arcsin = Elemwise(Arcsin())
arccos = Elemwise(Arccos())
arctan = Elemwise(Arctan())
sinh = Elemwise(Sinh())
cosh = Elemwise(Cosh())
arcsinh = Elemwise(Arcsinh())
arccosh = Elemwise(Arccosh())
arctanh = Elemwise(Arctanh())
log2 = Elemwise(Log2())
log10 = Elemwise(Log10())
exp2 = Elemwise(Exp2())
arctan2 = Elemwise(Arctan2())
