"""Theano's functions whose result depends on the values, not only the shapes:
nonzero, flatnonzero, nonzero_values, searchsorted, compress, unique, and the
index conversions ravel_multi_index and unravel_index.

Three ops, each with an output length known only at run time (static None):

- `Nonzero`: the ``(a.ndim, count)`` int64 matrix of the positions of `a`'s
  nonzero entries in C order (row i the i-th coordinate), as ``np.nonzero``
  stacked; Theano's ``nonzero(a, return_matrix=True)``.
- `Searchsorted`: ``np.searchsorted`` of a vector, int64 with `v`'s shape.
- `Unique`: the sorted distinct values of the flattened input and, as asked,
  the position of each one's first occurrence, the inverse map (a vector over
  the flattened input, as Theano) and the counts.

Their outputs are integers, so no gradient flows through them (Theano gives
zero there too). ``nonzero_values`` and ``compress`` are integer indexing by
their positions, whose gradient adds into the entries they select (STYLE
rule 3); the index conversions are integer arithmetic with a run-time range
check.
"""
from __future__ import annotations

import numpy as np

from ..graph.basic import Apply
from ..graph.op import Op
from .type import TensorType, as_tensor_variable

__all__ = ["Nonzero", "Searchsorted", "Unique", "nonzero", "flatnonzero", "nonzero_values",
           "searchsorted", "compress", "unique", "ravel_multi_index", "unravel_index"]


class Nonzero(Op):
    """The positions of the nonzero entries of `a` (at least 1-d) as an int64
    matrix with one row per dimension of `a` and one column per entry, C order."""

    no_gradient = "integer output"

    def make_node(self, a):
        a = as_tensor_variable(a)
        if a.ndim == 0:
            raise ValueError(f"nonzero: the input must have at least one dimension, got "
                             f"{a.type}; for a scalar use a.dimshuffle('x')")
        return Apply(self, [a], [TensorType("int64", (a.ndim, None))()])

    def perform(self, node, inputs, output_storage):
        a = inputs[0]
        out = np.empty((a.ndim, np.count_nonzero(a)), "int64")
        for row, idx in zip(out, np.nonzero(a)):
            row[:] = idx
        output_storage[0][0] = out


SORTER_RANGE = ("searchsorted: sorter has an index out of range for x; it must hold "
                "positions into x, such as argsort(x)")


class Searchsorted(Op):
    """``np.searchsorted(x, v, side, sorter)``: where the entries of `v` would go
    in the sorted vector `x` (or ``x[sorter]``), int64 with `v`'s shape."""

    __props__ = ("side",)
    no_gradient = "integer output"

    def __init__(self, side="left"):
        if side not in ("left", "right"):
            raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
        self.side = side

    def make_node(self, x, v, sorter=None):
        x, v = as_tensor_variable(x), as_tensor_variable(v)
        if x.ndim != 1:
            raise TypeError(f"searchsorted: x must be a vector (sorted, or sorted by "
                            f"`sorter`), got {x.type}; flatten it with x.flatten()")
        inputs = [x, v]
        if sorter is not None:
            sorter = as_tensor_variable(sorter)
            if sorter.ndim != 1 or sorter.dtype[0] not in "iu":
                raise TypeError(f"searchsorted: sorter must be a vector of integer indices "
                                f"(argsort(x)), got {sorter.type}")
            inputs.append(sorter)
        return Apply(self, inputs, [TensorType("int64", v.type.shape)()])

    def perform(self, node, inputs, output_storage):
        x, v = inputs[:2]
        sorter = inputs[2] if len(inputs) == 3 else None
        if sorter is not None and sorter.size and not 0 <= sorter.min() <= sorter.max() < len(x):
            raise ValueError(SORTER_RANGE)
        out = np.searchsorted(x, v, side=self.side, sorter=sorter)
        output_storage[0][0] = np.asarray(out, "int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[1]]


class Unique(Op):
    """The sorted distinct values of the flattened input, then the outputs asked
    for, in this order: first-occurrence positions, inverse map, counts (int64
    vectors). NaNs count as one value, as NumPy's ``unique``."""

    __props__ = ("return_index", "return_inverse", "return_counts")
    no_gradient = "a selection of the input by its values"

    def __init__(self, return_index=False, return_inverse=False, return_counts=False):
        self.return_index = bool(return_index)
        self.return_inverse = bool(return_inverse)
        self.return_counts = bool(return_counts)

    def make_node(self, x):
        x = as_tensor_variable(x)
        extra = self.return_index + self.return_inverse + self.return_counts
        outs = [TensorType(x.dtype, (None,))()] + [TensorType("int64", (None,))()
                                                   for _ in range(extra)]
        return Apply(self, [x], outs)

    def perform(self, node, inputs, output_storage):
        got = np.unique(inputs[0], return_index=self.return_index,
                        return_inverse=self.return_inverse, return_counts=self.return_counts)
        got = got if isinstance(got, tuple) else (got,)
        for store, value, var in zip(output_storage, got, node.outputs):
            store[0] = np.asarray(value, var.dtype).reshape(-1)


def nonzero(a, return_matrix=False):
    """The positions of `a`'s nonzero entries: a tuple of int64 index vectors, one
    per dimension (``np.nonzero``), or with `return_matrix` their ``(a.ndim, n)``
    matrix. ``a[nonzero(a)]`` are the nonzero values."""
    out = Nonzero()(a)
    if return_matrix:
        return out
    return tuple(out[i] for i in range(out.type.shape[0]))


def flatnonzero(a):
    """The positions of `a`'s nonzero entries in the flattened input (int64)."""
    from .shape import flatten

    a = as_tensor_variable(a)
    if a.ndim == 0:
        raise ValueError(f"flatnonzero: the input must have at least one dimension, got "
                         f"{a.type}; for a scalar use a.dimshuffle('x')")
    return Nonzero()(flatten(a, 1))[0]


def nonzero_values(a):
    """The nonzero entries of `a` in C order, as a vector; the gradient goes to them."""
    from .shape import flatten

    return flatten(a, 1)[flatnonzero(a)]


def searchsorted(x, v, side="left", sorter=None):
    """NumPy's ``searchsorted``: the positions at which the entries of `v` would be
    inserted into the sorted vector `x` (sorted by the indices `sorter` if given)
    to keep it sorted; `side` "left" puts a value before equal entries, "right"
    after them."""
    return Searchsorted(side)(x, v, sorter)


def compress(condition, x, axis=None):
    """NumPy's ``compress``: the slices of `x` along `axis` (the entries of the
    flattened `x` for None) where the vector `condition` is true. A condition
    longer than the axis is an IndexError at run time where it is true past
    the end; a shorter one selects among the first entries only."""
    from .shape import flatten

    condition, x = as_tensor_variable(condition), as_tensor_variable(x)
    if condition.ndim != 1:
        raise TypeError(f"compress: condition must be a vector, got {condition.type}; "
                        "flatten it with condition.flatten()")
    if axis is None:
        return flatten(x, 1)[flatnonzero(condition)]
    if not isinstance(axis, (int, np.integer)) or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"compress: axis must be None or an int in [-{x.ndim}, {x.ndim}) "
                         f"for {x.type}, got {axis!r}")
    return x[(slice(None),) * (int(axis) % x.ndim) + (flatnonzero(condition),)]


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    """NumPy's ``unique`` of the flattened `ar`: the sorted distinct values, and,
    as asked, a list with the positions of their first occurrences, the inverse
    map (``uniq[inverse]`` is the flattened `ar`) and the counts."""
    if axis is not None:
        raise NotImplementedError(f"unique: only axis=None (the flattened input) is "
                                  f"supported, got axis={axis!r}; for unique rows compare "
                                  "rows with a reduction instead")
    return Unique(return_index, return_inverse, return_counts)(ar)


def _ints(v, what, name):
    v = as_tensor_variable(v)
    if v.dtype[0] not in "iu":
        raise TypeError(f"{what}: {name} must hold integers, got {v.type}; cast it with "
                        f"{name}.astype('int64')")
    from .basic import cast

    return cast(v, "int64")


def _dims(dims, what):
    if isinstance(dims, (list, tuple)):
        dims = [_ints(d, what, "dims") for d in dims]
    else:
        d = _ints(dims, what, "dims")
        if d.ndim != 1 or d.type.shape[0] is None:
            raise TypeError(f"{what}: dims must be a tuple or a vector of known length, "
                            f"got {d.type}")
        dims = [d[i] for i in range(d.type.shape[0])]
    for d in dims:
        if d.ndim != 0:
            raise TypeError(f"{what}: each of dims must be a scalar, got {d.type}")
    return dims


def _strides(dims, order):
    if order not in ("C", "F"):
        raise ValueError(f"order must be 'C' or 'F', got {order!r}")
    strides, step = [None] * len(dims), 1
    for i in (reversed(range(len(dims))) if order == "C" else range(len(dims))):
        strides[i] = step
        step = step * dims[i]
    return strides, step


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """NumPy's ``ravel_multi_index``: the flat positions, in an array of shape `dims`,
    of the coordinates in the tuple `multi_index` (int arrays of one shape).
    `mode` "raise" checks at run time that each coordinate is within its dim,
    "wrap" wraps it around, "clip" clips it to the dim."""
    from .assertion import check
    from .math import all as all_, and_, clip, ge, lt

    what = "ravel_multi_index"
    dims = _dims(dims, what)
    if not isinstance(multi_index, (list, tuple)) or len(multi_index) != len(dims):
        raise TypeError(f"{what}: multi_index must be a tuple of {len(dims)} integer arrays, "
                        f"one per entry of dims, got {multi_index!r}")
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"{what}: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    strides, _ = _strides(dims, order)
    flat = None
    for c, d, s in zip(multi_index, dims, strides):
        c = _ints(c, what, "multi_index")
        if mode == "raise":
            c = check(c, all_(and_(ge(c, 0), lt(c, d))), f"{what}: a coordinate is out of "
                      "range of its dim; pass mode='wrap' or mode='clip' to bring it in")
        else:
            c = c % d if mode == "wrap" else clip(c, 0, d - 1)
        flat = c * s if flat is None else flat + c * s
    return flat


def unravel_index(indices, dims, order="C"):
    """NumPy's ``unravel_index``: the coordinates, in an array of shape `dims`, of
    the flat positions `indices` (int64 arrays of `indices`' shape, one per dim).
    A position outside ``[0, prod(dims))`` is a ValueError at run time."""
    from .assertion import check
    from .math import all as all_, and_, ge, lt

    what = "unravel_index"
    dims = _dims(dims, what)
    strides, size = _strides(dims, order)
    indices = _ints(indices, what, "indices")
    indices = check(indices, all_(and_(ge(indices, 0), lt(indices, size))),
                    f"{what}: an index is out of range for the array of shape dims")
    return tuple((indices // s) % d for d, s in zip(dims, strides))
