"""Symbolic tensors: types, constructors and the op library (``import bptt.tensor as T``)."""
from ..config import config as _config
from . import nnet as nnet
from .basic import (alloc, arange, cast, concatenate, full, grad_clip, join, ones, ones_like,
                    second, stack, tensor_copy, zero_grad, zeros, zeros_like)
from .elementary import (arccos, arccosh, arcsin, arcsinh, arctan, arctan2, arctanh, cosh,
                         exp2, log2, log10, sinh, tan)
from .extra import (argsort, batched_dot, max_and_argmax, repeat, sort, tensordot,
                    tile)
from .extra_ops import (bartlett, bincount, cumprod, cumsum, diff, fill_diagonal,
                        fill_diagonal_offset, roll)
from .math import (abs, add, all, and_, any, argmax, argmin, bitwise_and, bitwise_or,
                   bitwise_xor, ceil, clip, cos, dot, eq, exp, expm1, floor, ge, gt,
                   int_div, invert, isinf, isnan, le, log, log1p, log_sigmoid, logical_and,
                   logical_not, logical_or, logical_xor, lt, matmul, max, maximum, mean, min,
                   minimum, mod, mul, neg, neq, or_, outer, pow, power, prod, reciprocal,
                   round, sgn, sigmoid, sin, softplus, sqr, sqrt, square, std, sub, sum, switch,
                   tanh, true_div, var, where, xor)
from .shape import (broadcast_to, dimshuffle, flatten, reshape, shape, shape_padaxis,
                    shape_padleft, shape_padright, specify_shape, squeeze, transpose)
from .search import (compress, flatnonzero, nonzero, nonzero_values, ravel_multi_index,
                     searchsorted, unique, unravel_index)
from .special import erf, erfc, erfcinv, erfinv, gamma, gammaln, psi, tri_gamma
from .type import (TensorConstant, TensorType, TensorVariable, as_tensor_variable, constant,
                   tensor)

as_tensor = as_tensor_variable
sign = sgn


def _maker(ndim, dtype=None):
    def make(name=None, dtype=dtype, shape=None):
        if shape is None:
            shape = (None,) * ndim
        if len(shape) != ndim:
            raise ValueError(f"shape {shape} does not have {ndim} entries")
        return TensorType(dtype if dtype is not None else _config.floatX, shape)(name)

    make.__doc__ = f"A new {ndim}-d input variable (dtype defaults to floatX)."
    return make


scalar, vector, matrix, tensor3, tensor4 = (_maker(n) for n in range(5))
_prefix = {"b": "int8", "w": "int16", "i": "int32", "l": "int64", "f": "float32",
           "d": "float64"}
for _p, _dt in _prefix.items():
    for _n, _kind in enumerate(("scalar", "vector", "matrix", "tensor3", "tensor4")):
        globals()[_p + _kind] = _maker(_n, _dt)
bscalar = globals()["bscalar"]


def _plural(make, single):
    """Theano's ``dscalars('x', 'y')``: one new variable per name; one string names one
    variable per character (``scalars('abc')``), an int n gives n unnamed ones, and a
    single one-character name gives the variable itself."""
    def many(*names):
        if len(names) == 1 and isinstance(names[0], int):
            return [make() for _ in range(names[0])]
        if len(names) == 1:
            names = names[0]
        return make(names) if len(names) == 1 else [make(n) for n in names]

    many.__doc__ = f"New variables as `{single}` makes them, one per name (see `_plural`)."
    return many


for _p in ("", "f", "d", "i", "l"):
    for _kind, _plural_name in (("scalar", "scalars"), ("vector", "vectors"),
                                ("matrix", "matrices"), ("tensor3", "tensor3s"),
                                ("tensor4", "tensor4s")):
        globals()[_p + _plural_name] = _plural(globals()[_p + _kind], _p + _kind)


def _lazy_subtensor():
    from .subtensor import inc_subtensor, set_subtensor

    return inc_subtensor, set_subtensor


def set_subtensor(x, y, **kwargs):
    """``x`` with the region it was indexed from replaced by ``y`` (x must be ``a[idx]``)."""
    return _lazy_subtensor()[1](x, y, **kwargs)


def inc_subtensor(x, y, **kwargs):
    """``x``'s source with ``y`` added to the indexed region."""
    return _lazy_subtensor()[0](x, y, **kwargs)


def __getattr__(name):
    if name == "shared_randomstreams":
        from . import random

        return random
    if name in ("RandomStreams",):
        from .random import RandomStreams

        return RandomStreams
    raise AttributeError(f"module 'bptt.tensor' has no attribute {name!r}")
