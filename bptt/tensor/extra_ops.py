"""Theano's ``extra_ops`` on arrays: cumsum, cumprod, diff, roll, bincount,
fill_diagonal, fill_diagonal_offset, squeeze, bartlett.

`CumOp` is the one op here (a running sum or product along one axis, or of
the flattened input). Its gradients are again running sums, read backwards::

    d cumsum:   gx = rev(cumsum(rev(g)))
    d cumprod:  gx[i] = sum_{j >= i} g[j] prod_{k <= j, k != i} x[k]

For cumprod with every x nonzero that is ``rev(cumsum(rev(g y))) / x``
(Theano's rule, which gives NaN at a zero). Written without a division by
zero: with ``x1`` the input with its zeros replaced by 1, ``p = cumprod(x1)``
and ``c = cumsum(x == 0)`` (the zeros so far), the products above are
``p[j] / x1[i]`` where no zero other than ``x[i]`` lies in ``[0, j]``, else 0::

    x[i] != 0:  gx[i] = rev(cumsum(rev(g p [c == 0])))[i] / x[i]
    x[i] == 0:  gx[i] = rev(cumsum(rev(g p [c == 1])))[i]   (0 past the first zero)

The other functions are graphs of indexing, `concatenate` and
`inc_subtensor`, whose gradients they inherit (STYLE rule 3):

- ``diff(x, n, axis)``: ``x[1:] - x[:-1]`` along `axis`, n times;
- ``roll(x, shift, axis)``: ``concatenate([x[n - s:], x[:n - s]])`` with
  ``s = shift mod n`` (a symbolic shift too);
- ``bincount(x, weights, minlength)``: ones (or the weights) added at the
  positions `x` into zeros of length ``max(x) + 1`` (at least `minlength`),
  after a run-time check that no value of `x` is negative;
- ``fill_diagonal(a, val)``, ``fill_diagonal_offset(a, val, offset)``: `val`
  written at the diagonal's positions, given as index vectors;
- ``bartlett(M)``: ``1 - |n| / (M - 1)`` over ``n = arange(1 - M, M, 2)``.
"""
from __future__ import annotations

import numpy as np

from ..graph.basic import Apply
from ..graph.op import Op
from .basic import arange, cast, concatenate, zeros
from .math import _accumulated_dtype, _flat_size, eq, maximum, minimum, switch
from .math import max as max_
from .shape import _product, flatten, reshape, shape_i, squeeze
from .type import TensorType, as_tensor_variable

__all__ = ["CumOp", "cumsum", "cumprod", "diff", "roll", "bincount", "fill_diagonal",
           "fill_diagonal_offset", "squeeze", "bartlett"]


class CumOp(Op):
    """The running sum (`mode` "add") or product ("mul") along `axis`, or over the
    flattened input (axis None). Small integers accumulate in 64 bits, as NumPy."""

    __props__ = ("axis", "mode")

    def __init__(self, axis=None, mode="add"):
        if mode not in ("add", "mul"):
            raise ValueError(f"CumOp: mode must be 'add' or 'mul', got {mode!r}")
        self.axis, self.mode = (None if axis is None else int(axis)), mode

    def __str__(self):
        return f"cum{'sum' if self.mode == 'add' else 'prod'}{{axis={self.axis}}}"

    def make_node(self, x):
        x = as_tensor_variable(x)
        if self.axis is not None and -x.ndim <= self.axis < 0:    # Theano's CumOp(-1)
            return CumOp(self.axis + x.ndim, self.mode).make_node(x)
        if self.axis is not None and not 0 <= self.axis < x.ndim:
            raise ValueError(f"{self}: axis {self.axis} is out of range for the {x.ndim}-d "
                             f"input {x.type}; use an axis in [-{x.ndim}, {x.ndim}), or None "
                             "for the flattened input")
        shape = (_flat_size(x.type.shape),) if self.axis is None else x.type.shape
        return Apply(self, [x], [TensorType(_accumulated_dtype(x.dtype), shape)()])

    def perform(self, node, inputs, output_storage):
        fn = np.cumsum if self.mode == "add" else np.cumprod
        output_storage[0][0] = fn(inputs[0], axis=self.axis, dtype=node.outputs[0].dtype)

    def infer_shape(self, fgraph, node, input_shapes):
        if self.axis is None:
            return [(_product(input_shapes[0]),)]
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        (x,), (g,) = inputs, output_grads
        flat = x if self.axis is None else None
        axis = 0 if self.axis is None else self.axis
        if flat is not None:
            x = flatten(x, 1)
        if self.mode == "add":
            gx = _reverse_cumsum(g, axis)
        else:
            gx = _cumprod_grad(x, g, axis)
        return [gx if flat is None else reshape(gx, flat.shape, ndim=flat.ndim)]

    def R_op(self, inputs, eval_points):
        if self.mode != "add":
            raise NotImplementedError("Rop of cumprod is not implemented; use Lop or grad")
        if eval_points[0] is None:
            from .basic import zeros_like

            return [zeros_like(self(inputs[0]))]
        return [self(eval_points[0])]


def _reversed(x, axis):
    return x[(slice(None),) * axis + (slice(None, None, -1),)]


def _reverse_cumsum(g, axis):
    """``out[i] = sum_{j >= i} g[j]`` along `axis`."""
    return _reversed(CumOp(axis, "add")(_reversed(g, axis)), axis)


def _cumprod_grad(x, g, axis):
    """The cumprod gradient of the module docstring, exact where x has zeros."""
    zero = eq(x, 0)
    x1 = switch(zero, 1, x)
    g_p = g * CumOp(axis, "mul")(x1)
    zeros_so_far = CumOp(axis, "add")(zero)
    before = _reverse_cumsum(switch(eq(zeros_so_far, 0), g_p, 0), axis) / x1
    at_first_zero = _reverse_cumsum(switch(eq(zeros_so_far, 1), g_p, 0), axis)
    return switch(zero, at_first_zero, before)


def _axis(axis, x, what):
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{what}: axis must be an int in [-{x.ndim}, {x.ndim}) for the "
                         f"{x.ndim}-d input {x.type}, got {axis!r}")
    return int(axis) % x.ndim


def _cum(x, axis, mode, what):
    x = as_tensor_variable(x)
    return CumOp(None if axis is None else _axis(axis, x, what), mode)(x)


def cumsum(x, axis=None):
    """NumPy's ``cumsum``: running sums along `axis` (the flattened input for None)."""
    return _cum(x, axis, "add", "cumsum")


def cumprod(x, axis=None):
    """NumPy's ``cumprod``: running products along `axis` (the flattened input for
    None). Its gradient is exact where `x` has zeros (module docstring)."""
    return _cum(x, axis, "mul", "cumprod")


def diff(x, n=1, axis=-1):
    """NumPy's ``diff``: the n-th discrete difference along `axis`
    (``out[i] = x[i + 1] - x[i]``, applied n times)."""
    x = as_tensor_variable(x)
    if x.ndim == 0:
        raise ValueError(f"diff: the input must have at least one dimension, got {x.type}")
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"diff: n must be a non-negative int, got {n!r}")
    axis = _axis(axis, x, "diff")
    lead = (slice(None),) * axis
    for _ in range(int(n)):
        x = x[lead + (slice(1, None),)] - x[lead + (slice(None, -1),)]
    return x


def _int_scalar(v, what, name):
    v = as_tensor_variable(v)
    if v.ndim != 0 or v.dtype not in ("int8", "int16", "int32", "int64", "uint8", "uint16",
                                      "uint32"):
        raise TypeError(f"{what}: {name} must be an int or an integer scalar, got {v.type}; "
                        f"cast a float with T.cast({name}, 'int64')")
    return cast(v, "int64")


def roll(x, shift, axis=None):
    """NumPy's ``roll``: `x` shifted by `shift` (an int or integer scalar) along
    `axis`, entries leaving at one end coming back at the other; axis None rolls
    the flattened input and keeps `x`'s shape."""
    x = as_tensor_variable(x)
    if axis is None:
        return reshape(roll(flatten(x, 1), shift, 0), x.shape, ndim=x.ndim)
    if x.ndim == 0:
        raise ValueError("roll: a 0-d input has no axis to roll along; pass axis=None")
    axis = _axis(axis, x, "roll")
    n = shape_i(x, axis)
    cut = n - _int_scalar(shift, "roll", "shift") % n   # mod 0 is 0: an empty axis stays
    lead = (slice(None),) * axis
    return concatenate([x[lead + (slice(cut, None),)], x[lead + (slice(None, cut),)]], axis)


def bincount(x, weights=None, minlength=None, assert_nonneg=False):
    """NumPy's ``bincount``: ``out[v]`` counts (or sums the `weights` of) the entries
    of `x` equal to v, for v up to ``max(x)``, with at least `minlength` entries.

    `x` is a vector of integers; a negative value raises ValueError at run time
    (`assert_nonneg` is accepted for Theano's signature: the check is always
    made). Counts are int64; sums have the dtype of `weights`, as in Theano.
    """
    from .assertion import check
    from .math import all as all_, ge
    from .subtensor import inc_subtensor

    x = as_tensor_variable(x)
    if x.ndim != 1 or not x.dtype.startswith(("int", "uint")):
        raise TypeError(f"bincount: x must be a vector of integers, got {x.type}; "
                        "cast floats with x.astype('int64')")
    x = check(x, all_(ge(x, 0)), "bincount: x has negative values; every value must be "
              "a non-negative bin index")
    # max over x and -1: 0 bins for an empty x, where max alone would fail
    length = cast(max_(concatenate([cast(x, "int64"), as_tensor_variable(np.array([-1]))])),
                  "int64") + 1
    if minlength is not None:
        length = maximum(length, _int_scalar(minlength, "bincount", "minlength"))
    if weights is None:
        return inc_subtensor(zeros([length], "int64")[x], 1)
    weights = as_tensor_variable(weights)
    if weights.ndim != 1:
        raise TypeError(f"bincount: weights must be a vector like x, got {weights.type}")
    return inc_subtensor(zeros([length], weights.dtype)[x], weights)


def _diagonal_write(a, val, index, what):
    from .subtensor import set_subtensor

    val = as_tensor_variable(val)
    if val.ndim != 0:
        raise TypeError(f"{what}: val must be a scalar, got {val.type}")
    return set_subtensor(a[index], cast(val, a.dtype))


def fill_diagonal(a, val):
    """`a` with its main diagonal set to the scalar `val` (NumPy's ``fill_diagonal``,
    as a new value). For ``a.ndim > 2`` the positions are ``(i, i, ..., i)``."""
    a = as_tensor_variable(a)
    if a.ndim < 2:
        raise TypeError(f"fill_diagonal: a must have at least two dimensions, got {a.type}")
    k = shape_i(a, 0)
    for i in range(1, a.ndim):
        k = minimum(k, shape_i(a, i))
    return _diagonal_write(a, val, (arange(k),) * a.ndim, "fill_diagonal")


def fill_diagonal_offset(a, val, offset):
    """The matrix `a` with its diagonal `offset` (an int or integer scalar: > 0 above
    the main diagonal, < 0 below) set to the scalar `val`."""
    a = as_tensor_variable(a)
    if a.ndim != 2:
        raise TypeError(f"fill_diagonal_offset: a must be a matrix, got {a.type}")
    offset = _int_scalar(offset, "fill_diagonal_offset", "offset")
    right, down = maximum(offset, 0), maximum(-offset, 0)
    k = maximum(minimum(shape_i(a, 0) - down, shape_i(a, 1) - right), 0)
    i = arange(k)
    return _diagonal_write(a, val, (i + down, i + right), "fill_diagonal_offset")



def bartlett(M):
    """NumPy's ``bartlett``: the triangular window of `M` points (an int or integer
    scalar), ``1 - |n| / (M - 1)`` for ``n = 1 - M, 3 - M, ..., M - 1``, float64;
    ``[1.]`` for M = 1 and empty for M < 1."""
    from .math import abs as abs_

    m = _int_scalar(M, "bartlett", "M")
    n = cast(arange(1 - m, m, 2), "float64")
    # M = 1 has the one point n = 0: any nonzero divisor gives its 1 (M - 1 gives 0 / 0)
    return 1.0 - abs_(n) / cast(maximum(m - 1, 1), "float64")
