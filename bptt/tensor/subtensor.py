"""Indexing: NumPy's basic and integer-array indexing, and writing into a region.

Four ops share one description of an index, ``idx_list``, kept in their props
(tensor/index.py parses it and derives layouts and shapes from it):

=====================  ===================================================
entry                  meaning
=====================  ===================================================
``int``                a constant integer index (baked into the op)
``SCALAR`` (``"?"``)   an integer scalar read from the next index input
``ARRAY`` (``"[?]"``)  an integer array read from the next index input
``SliceSpec(a, b, c)`` a slice; each part None, an int or ``SCALAR``
``None``               ``np.newaxis`` (advanced ops only)
``Ellipsis``           ``...`` (advanced ops only)
=====================  ===================================================

The inputs of a node are the indexed tensor ``x``, then ``y`` for the ops
that write, then one input per placeholder, in the order they appear::

    x[i, 1:n:-1, idx]  ->  AdvancedSubtensor{?, 1:?:-1, [?]}(x, i, n, idx)

`getitem` routes an index: without integer arrays it builds a `Subtensor`
(a view; ``None`` entries become a `DimShuffle` after it), otherwise an
`AdvancedSubtensor`. `set_subtensor`/`inc_subtensor` read the index back from
the node that computed their ``x`` and build `IncSubtensor` or
`AdvancedIncSubtensor`; neither modifies its input (the result is a copy).

Advanced indexing follows NumPy: every integer array, and every integer when
there is an array, is an *advanced* index; they are broadcast together and
their broadcast dimensions replace them in the result if they are adjacent in
the index, and go first otherwise (``...``, ``None`` and slices between them
break adjacency). Writing with repeated indices: ``inc`` accumulates every
occurrence (``np.add.at``); ``set`` leaves the value written last in C order
of the broadcast index (what NumPy does in practice), and its gradient with
respect to ``y`` flows only to the occurrences that were kept.

A boolean mask of k dimensions (a tensor, a NumPy array, a list of bools)
indexes the k dimensions of x where it stands and is read, as NumPy reads
it, as its ``nonzero()`` index vectors: an integer-array index whose length
is known when the graph runs (when it is built for a NumPy mask). A mask of
x's shape gives a flat vector. Its shape must be that of the dimensions it
indexes: checked when the graph is built where both are static, else by a
`Check` that raises IndexError when it runs.

Not supported, with a clear error: a boolean scalar as an index (NumPy's new
axis of length 1 or 0), float indices, more indices than dimensions, writing through
nested indexing (``set_subtensor(x[i][j], y)`` updates ``x[i]`` only, as in
Theano). Out-of-bounds integers raise IndexError at run time in both modes.
"""
from __future__ import annotations

import numpy as np

from ..graph.basic import Apply, Variable
from ..graph.op import Op
from .assertion import Check
from .index import (ARRAY, FULL, SCALAR, InvalidIndexError, SliceSpec,  # noqa: F401
                    check_count, expand_ellipsis, format_index, is_int, is_int_dtype,
                    layout, n_index_inputs, numpy_index, parse_entry, static_shape,
                    symbolic_shape)
from .type import TensorConstant, TensorType, TensorVariable, _flat, as_tensor_variable

def getitem(x, index):
    """``x[index]`` with NumPy semantics (see the module docstring for what is supported).

    Parameters
    ----------
    x : TensorVariable
    index : int, slice, None, Ellipsis, integer array or scalar variable, or a tuple of them
        Slice parts and scalar indices may be symbolic integer scalars. A list
        holding a slice is read as the tuple of its entries, as in Theano.

    Returns
    -------
    TensorVariable
    """
    x = as_tensor_variable(x)
    if isinstance(index, list) and any(isinstance(e, slice) for e in index):
        # Theano and NumPy < 1.23 read a list holding a slice as the tuple of its entries;
        # NumPy 2 refuses such a list, so no index it accepts changes meaning.
        index = tuple(index)
    items = index if isinstance(index, tuple) else (index,)
    items = _expand_masks(x, items)
    inputs = []
    idx_list = tuple(parse_entry(item, inputs) for item in items)
    check_count(idx_list, x.ndim)
    if ARRAY in idx_list:
        return AdvancedSubtensor(idx_list)(x, *inputs)
    expanded = expand_ellipsis(idx_list, x.ndim)
    basic = [e for e in expanded if e is not None]
    while basic and basic[-1] == FULL:
        basic.pop()
    out = Subtensor(basic)(x, *inputs)
    if None not in expanded:
        return out
    from .shape import dimshuffle

    pattern, k = [], 0
    for e in expanded:
        if e is None:
            pattern.append("x")
        elif isinstance(e, SliceSpec):
            pattern.append(k)
            k += 1
    view = dimshuffle(out, pattern)
    # set/inc_subtensor on this view write through an advanced op that knows the None axes.
    view.tag["indexed_from"] = (x, idx_list, tuple(inputs))
    return view


def _as_mask(item):
    """`item` as a boolean mask (an array or tensor of at least one dimension), else None."""
    if isinstance(item, Variable):
        v = item
    elif isinstance(item, (list, tuple)) and any(isinstance(e, Variable) for e in _flat(item)):
        v = as_tensor_variable(list(item))
    elif isinstance(item, (list, tuple, np.ndarray)):
        try:
            v = np.asarray(item)
        except ValueError:   # a ragged list: parse_entry reports it as an index
            return None
    else:
        return None
    return v if str(v.dtype) == "bool" and v.ndim >= 1 else None


def _expand_masks(x, items):
    """`items` with every boolean mask replaced by its ``nonzero()`` index vectors, as
    NumPy reads one: a k-d mask indexes the k dimensions of `x` where it stands."""
    masks = [_as_mask(item) for item in items]
    if all(m is None for m in masks):
        return items
    widths = [0 if it is None or it is Ellipsis else 1 if m is None else m.ndim
              for it, m in zip(items, masks)]
    # An index with too many entries or ellipses has no axes: check_count reports it.
    placed = sum(widths) <= x.ndim and sum(it is Ellipsis for it in items) <= 1
    out, axis = [], 0
    for i, (item, mask) in enumerate(zip(items, masks)):
        if item is Ellipsis:
            axis = x.ndim - sum(widths[i + 1:])
        if mask is None:
            out.append(item)
        else:
            out.extend(_mask_vectors(x, mask, axis if placed else None))
        axis += widths[i]
    return tuple(out)


def _mask_vectors(x, mask, axis):
    """The index vectors of `mask`, the first checked to match x's dimensions from `axis`."""
    from .search import nonzero

    if isinstance(mask, TensorConstant):
        mask = mask.data
    if isinstance(mask, np.ndarray):
        vectors = [as_tensor_variable(v.astype("int64")) for v in np.nonzero(mask)]
        m_shape, m_sizes = mask.shape, [np.int64(n) for n in mask.shape]
    else:
        vectors = list(nonzero(mask))
        m_shape, m_sizes = mask.type.shape, [mask.shape[i] for i in range(mask.ndim)]
    if axis is None:
        return vectors
    axes = range(axis, axis + len(m_shape))
    x_shape = tuple(x.type.shape[a] for a in axes)
    text = (f"boolean mask of shape {{}} does not match the dimension{'s' * (len(axes) > 1)} "
            f"{', '.join(map(str, axes))} it indexes, of shape {{}}: a mask must have the "
            f"shape of the dimensions it indexes")
    if any(m is not None and n is not None and m != n for m, n in zip(m_shape, x_shape)):
        raise IndexError(text.format(m_shape, x_shape))
    unknown = [i for i, (m, n) in enumerate(zip(m_shape, x_shape)) if m is None or n is None]
    if not unknown:
        return vectors
    from .math import eq, logical_and

    cond = None
    for i in unknown:
        same = eq(m_sizes[i], x.shape[axes[i]])
        cond = same if cond is None else logical_and(cond, same)
    slots = "({}" + ", {}" * (len(axes) - 1) + ("," if len(axes) == 1 else "") + ")"
    template = text.replace("{", "{{").replace("}", "}}").replace("{{}}", slots)
    values = m_sizes + [x.shape[a] for a in axes]
    vectors[0] = Check(template, error="IndexError")(vectors[0], cond, *values)
    return vectors


class _IndexOp(Op):
    """Shared by the four indexing ops: props, printing, checking index inputs."""

    abstract = True  # never instantiated (tests/test_op_coverage.py)
    __props__ = ("idx_list",)
    n_values = 0                   # 1 for the ops that take `y`
    allows_advanced = False

    def __init__(self, idx_list):
        self.idx_list = tuple(idx_list)
        for e in self.idx_list:
            ok = (is_int(e) or e in (SCALAR, FULL) or isinstance(e, SliceSpec)
                  or (self.allows_advanced and (e is None or e is Ellipsis or e == ARRAY)))
            if not ok:
                raise ValueError(f"{type(self).__name__}: invalid index entry {e!r}")

    def __str__(self):
        return f"{type(self).__name__}{{{format_index(self.idx_list)}}}"

    def _index_inputs(self, x, index):
        check_count(self.idx_list, x.ndim)
        n = n_index_inputs(self.idx_list)
        if len(index) != n:
            raise TypeError(f"{self} takes {n} index inputs, got {len(index)}")
        placeholders = [p for e in self.idx_list
                        for p in (e if isinstance(e, SliceSpec) else (e,))
                        if p in (SCALAR, ARRAY)]
        out = []
        for p, v in zip(placeholders, index):
            v = as_tensor_variable(v)
            if not is_int_dtype(v.dtype) or (p == SCALAR and v.ndim != 0):
                want = "an integer scalar" if p == SCALAR else "an integer array"
                raise TypeError(f"{self}: index input must be {want}, got {v.describe()}")
            out.append(v)
        return out

    def connection_pattern(self, node):
        n = 1 + self.n_values
        return [[True]] * n + [[False]] * (len(node.inputs) - n)

    def _index_grads(self, inputs):
        from ..graph.gradient_types import disconnected_grad

        return [disconnected_grad() for _ in inputs[1 + self.n_values:]]


class _Get(_IndexOp):
    abstract = True  # base of Subtensor and AdvancedSubtensor

    def make_node(self, x, *index):
        x = as_tensor_variable(x)
        index = self._index_inputs(x, index)
        shape = static_shape(self.idx_list, x.type, index)
        return Apply(self, [x, *index], [TensorType(x.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        x, *values = inputs
        out = x[numpy_index(self.idx_list, values)]
        output_storage[0][0] = out if isinstance(out, np.ndarray) else np.asarray(out)

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            from .basic import zeros_like

            return [zeros_like(self(*inputs))]
        return [self(eval_points[0], *inputs[1:])]

    def infer_shape(self, fgraph, node, input_shapes):
        return [symbolic_shape(self.idx_list, node, input_shapes, 0)]


class _Write(_IndexOp):
    abstract = True  # base of IncSubtensor and AdvancedIncSubtensor

    __props__ = ("idx_list", "set_instead_of_inc", "inplace")
    n_values = 1

    def __init__(self, idx_list, set_instead_of_inc=False, inplace=False):
        # inplace: write into x's own buffer instead of a copy. Only the late
        # `inplace_inc_subtensor` pass sets it, once it has proven that nothing
        # else can see x (bptt/tensor/rewriting/inplace_subtensor.py).
        super().__init__(idx_list)
        self.set_instead_of_inc = bool(set_instead_of_inc)
        self.inplace = bool(inplace)

    def __str__(self):
        what = "Set" if self.set_instead_of_inc else "Inc"
        name = type(self).__name__.replace("Inc", what)
        return f"{name}{{{format_index(self.idx_list)}}}" + ("{inplace}" if self.inplace else "")

    def make_node(self, x, y, *index):
        x, y = as_tensor_variable(x), as_tensor_variable(y)
        index = self._index_inputs(x, index)
        if y.dtype != x.dtype:
            raise TypeError(f"{self}: y must have x's dtype {x.dtype}, got {y.describe()} "
                            "(set_subtensor/inc_subtensor cast it for you)")
        region = static_shape(self.idx_list, x.type, index)
        _check_values_shape(y.type.shape, region, str(self))
        return Apply(self, [x, y, *index], [x.type()])

    def perform(self, node, inputs, output_storage):
        x, y, *values = inputs
        out = x if self.inplace else x.copy()
        idx = numpy_index(self.idx_list, values)
        _check_runtime_values_shape(y.shape, out[idx].shape)
        if self.set_instead_of_inc:
            out[idx] = y
        else:
            self._add(out, idx, y)
        output_storage[0][0] = out

    def R_op(self, inputs, eval_points):
        from .basic import zeros_like

        x, y, *index = inputs
        ex = zeros_like(x) if eval_points[0] is None else eval_points[0]
        ey = zeros_like(y) if eval_points[1] is None else eval_points[1]
        return [self(ex, ey, *index)]

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def _add(self, out, idx, y):
        raise NotImplementedError


def _check_values_shape(y_shape, region, what):
    if len(y_shape) > len(region):
        raise ValueError(f"{what}: y has {len(y_shape)} dimensions, more than the "
                         f"{len(region)} of the indexed region")
    for ys, rs in zip(y_shape[::-1], region[::-1]):
        if ys is not None and rs is not None and ys not in (1, rs):
            raise ValueError(f"{what}: y of static shape {y_shape} cannot be broadcast to the "
                             f"indexed region of static shape {region}")


def _check_runtime_values_shape(y_shape, region):
    for ys, rs in zip(y_shape[::-1], region[::-1]):
        if ys not in (1, rs):
            raise ValueError(f"shape mismatch: value array of shape {y_shape} could not be "
                             f"broadcast to indexing result of shape {region}")


class Subtensor(_Get):
    """``x[idx]`` for integers and slices: a view in both modes."""

    def L_op(self, inputs, outputs, output_grads):
        from .basic import zeros_like

        x, *index = inputs
        gx = IncSubtensor(self.idx_list)(zeros_like(x), output_grads[0], *index)
        return [gx] + self._index_grads(inputs)


class AdvancedSubtensor(_Get):
    """``x[idx]`` where `idx` holds integer arrays (NumPy advanced indexing): a copy."""

    allows_advanced = True

    def L_op(self, inputs, outputs, output_grads):
        from .basic import zeros_like

        x, *index = inputs
        gx = AdvancedIncSubtensor(self.idx_list)(zeros_like(x), output_grads[0], *index)
        return [gx] + self._index_grads(inputs)


class IncSubtensor(_Write):
    """A copy of `x` with the region ``x[idx]`` (integers and slices) set to or increased by `y`."""

    def _add(self, out, idx, y):
        out[idx] += y

    def L_op(self, inputs, outputs, output_grads):
        x, y, *index = inputs
        (g,) = output_grads
        gx = IncSubtensor(self.idx_list, True)(g, _zero(g), *index) \
            if self.set_instead_of_inc else g
        return [gx, Subtensor(self.idx_list)(g, *index)] + self._index_grads(inputs)


class AdvancedIncSubtensor(_Write):
    """A copy of `x` with ``x[idx]`` set to or increased by `y`, `idx` as in `AdvancedSubtensor`.

    ``inc`` accumulates at repeated indices (``np.add.at``); ``set`` keeps the
    last value written, in C order of the broadcast index.
    """

    allows_advanced = True

    def _add(self, out, idx, y):
        np.add.at(out, idx, y)

    def L_op(self, inputs, outputs, output_grads):
        x, y, *index = inputs
        (g,) = output_grads
        g_region = AdvancedSubtensor(self.idx_list)(g, *index)
        if not self.set_instead_of_inc:
            return [g, g_region] + self._index_grads(inputs)
        gx = AdvancedIncSubtensor(self.idx_list, True)(g, _zero(g), *index)
        if ARRAY in self.idx_list:
            g_region = g_region * _kept_writes(self.idx_list, x, g_region, index)
        return [gx, g_region] + self._index_grads(inputs)


def _zero(like):
    return TensorConstant(TensorType(like.dtype, ()), np.zeros((), like.dtype))


def _kept_writes(idx_list, x, region, index):
    """1 where a write of ``set`` at repeated indices survived (was last), else 0.

    Every element of the region gets a distinct id; setting those ids into an
    array shaped like `x` and reading them back shows which ids survived.
    """
    from .basic import alloc, arange, cast
    from .math import eq, prod
    from .shape import reshape, shape, shape_tuple

    ids = reshape(arange(prod(shape(region))), shape(region), ndim=region.ndim)
    board = alloc(np.asarray(-1, dtype="int64"), *shape_tuple(x))
    board = AdvancedIncSubtensor(idx_list, True)(board, ids, *index)
    kept = eq(AdvancedSubtensor(idx_list)(board, *index), ids)
    return cast(kept, region.dtype)


# -- writing into a region -------------------------------------------------------

def _indexed_source(x):
    """(source tensor, idx_list, index inputs, advanced?) of ``x = source[idx]``."""
    if isinstance(x, TensorVariable) and "indexed_from" in x.tag:
        src, idx_list, index = x.tag["indexed_from"]
        return src, idx_list, list(index), True
    node = getattr(x, "owner", None)
    if node is not None and isinstance(node.op, (Subtensor, AdvancedSubtensor)):
        return node.inputs[0], node.op.idx_list, node.inputs[1:], \
            isinstance(node.op, AdvancedSubtensor)
    what = x.describe() if isinstance(x, Variable) else type(x).__name__
    raise TypeError(f"set_subtensor/inc_subtensor: x must be the result of indexing a tensor "
                    f"(x = a[idx]), got {what}")


def _as_values(y, x, what):
    """`y` cast to x's dtype when that loses nothing (weak Python numbers always adapt)."""
    from .basic import cast

    y = as_tensor_variable(y)
    if y.dtype == x.dtype:
        return y
    if isinstance(y, TensorConstant) and y.weak:
        from .elemwise import _settle_weak

        return _settle_weak(y, x.dtype)
    if not np.can_cast(y.dtype, x.dtype, "safe"):
        raise TypeError(f"{what}: cannot write {y.type} values into a {x.dtype} tensor without "
                        f"losing information; cast y with y.astype('{x.dtype}')")
    return cast(y, x.dtype)


def inc_subtensor(x, y, inplace=False, set_instead_of_inc=False,
                  tolerate_inplace_aliasing=False):
    """The tensor ``a`` that ``x = a[idx]`` indexes, with ``y`` added to that region.

    Parameters
    ----------
    x : TensorVariable
        The result of indexing, ``a[idx]`` (one level: for ``a[i][j]`` the
        result is the updated ``a[i]``).
    y : tensor-like
        Broadcast into the region as NumPy does; cast to x's dtype if that
        loses nothing.
    inplace, tolerate_inplace_aliasing : bool
        Accepted for Theano compatibility; the result is always a new array.
    set_instead_of_inc : bool
        Replace the region instead of adding to it.

    Returns
    -------
    TensorVariable
        Shaped like ``a``. With repeated integer-array indices, increments
        accumulate and, for ``set``, the last write wins.
    """
    src, idx_list, index, advanced = _indexed_source(x)
    what = "set_subtensor" if set_instead_of_inc else "inc_subtensor"
    y = _as_values(y, src, what)
    cls = AdvancedIncSubtensor if advanced else IncSubtensor
    return cls(idx_list, set_instead_of_inc)(src, y, *index)


def set_subtensor(x, y, inplace=False, tolerate_inplace_aliasing=False):
    """The tensor ``a`` that ``x = a[idx]`` indexes, with that region replaced by ``y``.

    See `inc_subtensor` for the parameters.
    """
    return inc_subtensor(x, y, set_instead_of_inc=True)
