"""Indexing: NumPy's basic and integer-array indexing, and writing into a region.

Four ops share one description of an index, ``idx_list``, kept in their props:

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

Not supported, with a clear error: boolean masks (their result shape depends
on the data), float indices, more indices than dimensions, writing through
nested indexing (``set_subtensor(x[i][j], y)`` updates ``x[i]`` only, as in
Theano). Out-of-bounds integers raise IndexError at run time in both modes.
"""
from __future__ import annotations

import collections
import operator

import numpy as np

from ..graph.basic import Apply, Constant, Variable
from ..graph.op import Op
from .type import TensorConstant, TensorType, TensorVariable, _flat, as_tensor_variable

SCALAR = "?"
ARRAY = "[?]"


class SliceSpec(collections.namedtuple("SliceSpec", "start stop step")):
    """A slice whose parts are None, ints or `SCALAR` (slices are not hashable)."""

    __slots__ = ()

    def __str__(self):
        parts = ["" if p is None else str(p) for p in self]
        text = ":".join(parts[:2]) if self.step is None else ":".join(parts)
        return text


FULL = SliceSpec(None, None, None)


class InvalidIndexError(IndexError, TypeError):
    """An index NumPy also rejects (an IndexError), found while building the graph."""


# -- parsing a Python index ----------------------------------------------------

def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _int_dtype(dtype):
    return dtype.startswith("int") or dtype.startswith("uint")


_WHY_MASK = ("boolean mask indexing is not supported: the result's shape would depend on "
             "the data. For a constant mask use x[np.nonzero(mask)]; to zero elements out "
             "use T.switch(mask, x, 0)")
_VALID = ("only integers, slices (`:`), ellipsis (`...`), None (np.newaxis) and integer "
          "arrays are valid indices")


def _bound(b, inputs):
    """A slice part: None, an int, or SCALAR with its variable appended to `inputs`."""
    if b is None or _is_int(b) or isinstance(b, (bool, np.bool_)):
        return None if b is None else int(b)
    v = _as_index_variable(b, "slice bound")
    if v.ndim != 0:
        raise InvalidIndexError(f"slice bounds must be integer scalars, got {v.type}")
    if isinstance(v, Constant):
        return int(v.data)
    inputs.append(v)
    return SCALAR


def _as_index_variable(item, what):
    if isinstance(item, Variable):
        v = as_tensor_variable(item)
    elif isinstance(item, (list, tuple)) and any(isinstance(e, Variable) for e in _flat(item)):
        v = as_tensor_variable(list(item))
    else:
        arr = np.asarray(item)
        if arr.size == 0 and arr.dtype.kind == "f":
            arr = arr.astype("int64")
        v = as_tensor_variable(arr)
    if v.dtype == "bool":
        raise InvalidIndexError(_WHY_MASK)
    if not _int_dtype(v.dtype):
        raise InvalidIndexError(f"{_VALID}; got a {what} of dtype {v.dtype}")
    return v


def _entry(item, inputs):
    """One idx_list entry for one element of a Python index."""
    if item is None or item is Ellipsis:
        return item
    if isinstance(item, slice):
        spec = SliceSpec(*(_bound(b, inputs) for b in (item.start, item.stop, item.step)))
        if spec.step == 0:
            raise ValueError("slice step cannot be zero")
        return spec
    if isinstance(item, (bool, np.bool_)):
        raise InvalidIndexError(_WHY_MASK)
    if _is_int(item):
        return int(item)
    if isinstance(item, (float, complex, np.floating, str)):
        raise InvalidIndexError(f"{_VALID}; got {type(item).__name__} {item!r}")
    if not isinstance(item, (Variable, list, tuple, np.ndarray)):
        raise InvalidIndexError(f"{_VALID}; got {type(item).__name__}")
    v = _as_index_variable(item, "index")
    if v.ndim == 0:
        if isinstance(v, Constant):
            return int(v.data)
        inputs.append(v)
        return SCALAR
    inputs.append(v)
    return ARRAY


def _consumed(idx_list):
    return sum(1 for e in idx_list if e is not None and e is not Ellipsis)


def _check_count(idx_list, ndim):
    if sum(1 for e in idx_list if e is Ellipsis) > 1:
        raise InvalidIndexError("an index can only have a single ellipsis ('...')")
    n = _consumed(idx_list)
    if n > ndim:
        raise InvalidIndexError(f"too many indices for a tensor: it is {ndim}-dimensional, "
                                f"but {n} were indexed")


def _expand_ellipsis(idx_list, ndim):
    """`idx_list` with ``...`` replaced by full slices and trailing full slices added."""
    fill = ndim - _consumed(idx_list)
    out = []
    for e in idx_list:
        if e is Ellipsis:
            out.extend([FULL] * fill)
            fill = 0
        else:
            out.append(e)
    return out + [FULL] * fill


def getitem(x, index):
    """``x[index]`` with NumPy semantics (see the module docstring for what is supported).

    Parameters
    ----------
    x : TensorVariable
    index : int, slice, None, Ellipsis, integer array or scalar variable, or a tuple of them
        Slice parts and scalar indices may be symbolic integer scalars.

    Returns
    -------
    TensorVariable
    """
    x = as_tensor_variable(x)
    items = index if isinstance(index, tuple) else (index,)
    inputs = []
    idx_list = tuple(_entry(item, inputs) for item in items)
    _check_count(idx_list, x.ndim)
    if ARRAY in idx_list:
        return AdvancedSubtensor(idx_list)(x, *inputs)
    expanded = _expand_ellipsis(idx_list, x.ndim)
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


# -- layout: where each index entry goes ---------------------------------------

def _number(idx_list):
    """Pair every placeholder with the position of its index input.

    Returns a list parallel to `idx_list` where SCALAR becomes ``("s", k)``,
    ARRAY ``("a", k)`` and slice parts ``("s", k)``.
    """
    k = 0
    out = []

    def ref(kind):
        nonlocal k
        k += 1
        return (kind, k - 1)

    for e in idx_list:
        if e == SCALAR:
            out.append(ref("s"))
        elif e == ARRAY:
            out.append(ref("a"))
        elif isinstance(e, SliceSpec):
            out.append(SliceSpec(*(ref("s") if p == SCALAR else p for p in e)))
        else:
            out.append(e)
    return out


def n_index_inputs(idx_list):
    """How many index inputs `idx_list` reads."""
    n = 0
    for e in idx_list:
        if isinstance(e, SliceSpec):
            n += sum(1 for p in e if p == SCALAR)
        elif e in (SCALAR, ARRAY):
            n += 1
    return n


Layout = collections.namedtuple("Layout", "dims out")
Layout.__doc__ = """Where an index takes its data and puts its result.

``dims[d]`` is the (numbered) entry that indexes dimension d of x: an int,
``("s", k)``, ``("a", k)`` or a SliceSpec. ``out`` lists the result's
dimensions in order: ``"adv"`` stands for the block of broadcast dimensions
of the advanced indices (as many as the largest array has), ``("slice", d)``
for a sliced dimension d of x, ``"new"`` for an inserted axis.
"""


def layout(idx_list, ndim):
    """The `Layout` of indexing an `ndim`-dimensional tensor with `idx_list`."""
    numbered = _number(idx_list)
    is_adv = ARRAY in idx_list
    adv_pos = [i for i, e in enumerate(idx_list) if is_adv and not isinstance(e, SliceSpec)
               and e is not None and e is not Ellipsis]
    in_place = bool(adv_pos) and adv_pos[-1] - adv_pos[0] + 1 == len(adv_pos)
    dims, out = [], [] if in_place or not is_adv else ["adv"]
    for i, e in enumerate(_expand_ellipsis(numbered, ndim)):
        if e is None:
            out.append("new")
        elif isinstance(e, SliceSpec):
            out.append(("slice", len(dims)))
            dims.append(e)
        else:
            dims.append(e)
            if in_place and "adv" not in out:
                out.append("adv")
    return Layout(dims, out)


# -- static and symbolic shapes --------------------------------------------------

def _static_slice_length(n, spec):
    if n is None or SCALAR in spec:
        return None
    return len(range(*slice(*spec).indices(n)))


def _known_int(v):
    """The value of a constant scalar input, else None."""
    return int(v.data) if isinstance(v, Constant) and v.ndim == 0 else None


def _resolve_static(spec_or_entry, index_inputs):
    """Replace numbered references to constant scalar inputs by their values."""
    def value(p):
        if isinstance(p, tuple) and p[0] == "s":
            known = _known_int(index_inputs[p[1]])
            return SCALAR if known is None else known
        return p

    if isinstance(spec_or_entry, SliceSpec):
        return SliceSpec(*(value(p) for p in spec_or_entry))
    return value(spec_or_entry)


def _broadcast_static(shapes):
    from .elemwise import broadcast_static_shape

    try:
        return broadcast_static_shape([TensorType("int64", s) for s in shapes], "index")
    except TypeError as exc:
        raise InvalidIndexError(f"shape mismatch: indexing arrays could not be broadcast "
                                f"together with shapes {' '.join(map(str, shapes))}") from exc


def _static_shape(idx_list, x_type, index_inputs):
    """Static shape of ``x[idx]``; IndexError for constant indices known to be out of bounds."""
    lay = layout(idx_list, x_type.ndim)
    for d, e in enumerate(lay.dims):
        e = _resolve_static(e, index_inputs)
        n = x_type.shape[d]
        if _is_int(e) and n is not None and not -n <= e < n:
            raise IndexError(f"index {e} is out of bounds for axis {d} with size {n}")
    arrays = [index_inputs[e[1]].type.shape for e in lay.dims
              if isinstance(e, tuple) and not isinstance(e, SliceSpec) and e[0] == "a"]
    adv = _broadcast_static(arrays) if arrays else ()
    shape = []
    for o in lay.out:
        if o == "adv":
            shape.extend(adv)
        elif o == "new":
            shape.append(1)
        else:
            spec = _resolve_static(lay.dims[o[1]], index_inputs)
            shape.append(_static_slice_length(x_type.shape[o[1]], spec))
    return tuple(shape)


def _slice_length(n, spec, index_inputs):
    """Symbolic ``len(range(*slice(*spec).indices(n)))`` (n an int64 scalar)."""
    from .basic import cast
    from .math import maximum, minimum, switch

    def part(p):
        return cast(index_inputs[p[1]], "int64") if isinstance(p, tuple) else p

    start, stop, step = (part(p) for p in spec)
    step = 1 if step is None else step

    def wrap(v, lo, hi):
        v = switch(v < 0, v + n, v) if isinstance(v, Variable) else (v + n if v < 0 else v)
        return minimum(maximum(v, lo), hi)

    # A unit step (the usual) needs no division: shape programs compiled into a scan's
    # n == 0 branch pay numba's typing of every scalar operation (the LSTM's gate slices).
    def forward():
        s = 0 if start is None else wrap(start, 0, n)
        e = n if stop is None else wrap(stop, 0, n)
        if isinstance(step, int) and step == 1:
            return maximum(e - s, 0)
        return maximum((e - s + step - 1) // step, 0)

    def backward():
        s = n - 1 if start is None else wrap(start, -1, n - 1)
        e = -1 if stop is None else wrap(stop, -1, n - 1)
        if isinstance(step, int) and step == -1:
            return maximum(s - e, 0)
        return maximum((s - e - step - 1) // (-step), 0)

    if isinstance(step, int):
        length = forward() if step > 0 else backward()
    else:
        length = switch(step > 0, forward(), backward())
    return cast(length, "int64")


def _infer_shape(idx_list, node, input_shapes, n_values):
    from .shape import broadcast_shapes

    x_shape = input_shapes[0]
    index_inputs = node.inputs[1 + n_values:]
    index_shapes = input_shapes[1 + n_values:]
    lay = layout(idx_list, len(x_shape))
    arrays = [index_shapes[e[1]] for e in lay.dims
              if isinstance(e, tuple) and not isinstance(e, SliceSpec) and e[0] == "a"]
    shape = []
    for o in lay.out:
        if o == "adv":
            shape.extend(broadcast_shapes(*arrays))
        elif o == "new":
            shape.append(as_tensor_variable(np.int64(1)))
        else:
            shape.append(_slice_length(x_shape[o[1]], lay.dims[o[1]], index_inputs))
    return tuple(shape)


# -- the ops --------------------------------------------------------------------

def numpy_index(idx_list, values):
    """The NumPy index for `idx_list` given the values of its index inputs."""
    it = iter(values)

    def scalar(p):
        return operator.index(np.asarray(next(it)).item()) if p == SCALAR else p

    out = []
    for e in idx_list:
        if isinstance(e, SliceSpec):
            out.append(slice(*(scalar(p) for p in e)))
        elif e == ARRAY:
            out.append(np.asarray(next(it)))
        else:
            out.append(scalar(e))
    return tuple(out)


def _format(idx_list):
    return ", ".join("..." if e is Ellipsis else "None" if e is None else str(e)
                     for e in idx_list)


class _IndexOp(Op):
    """Shared by the four indexing ops: props, printing, checking index inputs."""

    abstract = True  # never instantiated (tests/test_op_coverage.py)
    __props__ = ("idx_list",)
    n_values = 0                   # 1 for the ops that take `y`
    allows_advanced = False

    def __init__(self, idx_list):
        self.idx_list = tuple(idx_list)
        for e in self.idx_list:
            ok = (_is_int(e) or e in (SCALAR, FULL) or isinstance(e, SliceSpec)
                  or (self.allows_advanced and (e is None or e is Ellipsis or e == ARRAY)))
            if not ok:
                raise ValueError(f"{type(self).__name__}: invalid index entry {e!r}")

    def __str__(self):
        return f"{type(self).__name__}{{{_format(self.idx_list)}}}"

    def _index_inputs(self, x, index):
        _check_count(self.idx_list, x.ndim)
        n = n_index_inputs(self.idx_list)
        if len(index) != n:
            raise TypeError(f"{self} takes {n} index inputs, got {len(index)}")
        placeholders = [p for e in self.idx_list
                        for p in (e if isinstance(e, SliceSpec) else (e,))
                        if p in (SCALAR, ARRAY)]
        out = []
        for p, v in zip(placeholders, index):
            v = as_tensor_variable(v)
            if not _int_dtype(v.dtype) or (p == SCALAR and v.ndim != 0):
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
        shape = _static_shape(self.idx_list, x.type, index)
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
        return [_infer_shape(self.idx_list, node, input_shapes, 0)]


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
        return f"{name}{{{_format(self.idx_list)}}}" + ("{inplace}" if self.inplace else "")

    def make_node(self, x, y, *index):
        x, y = as_tensor_variable(x), as_tensor_variable(y)
        index = self._index_inputs(x, index)
        if y.dtype != x.dtype:
            raise TypeError(f"{self}: y must have x's dtype {x.dtype}, got {y.describe()} "
                            "(set_subtensor/inc_subtensor cast it for you)")
        region = _static_shape(self.idx_list, x.type, index)
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
