"""An index's description, ``idx_list``, and what follows from it alone.

The indexing ops (tensor/subtensor.py, whose docstring gives the entries of
an ``idx_list``) share it: parsing a Python index into entries and index
inputs (`parse_entry`), numbering the placeholders, where each entry takes its data
and puts its result (`layout`), the static and symbolic shapes of a result,
and the NumPy index for given index values (`numpy_index`). Nothing here
builds an op.
"""
from __future__ import annotations

import collections
import operator

import numpy as np

from ..graph.basic import Constant, Variable
from .type import TensorType, _flat, as_tensor_variable

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

def is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def is_int_dtype(dtype):
    return dtype.startswith("int") or dtype.startswith("uint")


_WHY_MASK = ("a boolean scalar is not a valid index here (NumPy reads one as a new axis of "
             "length 1 or 0); index with x[None], or with a boolean mask of at least one "
             "dimension")
_VALID = ("only integers, slices (`:`), ellipsis (`...`), None (np.newaxis) and integer "
          "arrays are valid indices")


def _bound(b, inputs):
    """A slice part: None, an int, or SCALAR with its variable appended to `inputs`."""
    if b is None or is_int(b) or isinstance(b, (bool, np.bool_)):
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
    if not is_int_dtype(v.dtype):
        raise InvalidIndexError(f"{_VALID}; got a {what} of dtype {v.dtype}")
    return v


def parse_entry(item, inputs):
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
    if is_int(item):
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


def check_count(idx_list, ndim):
    if sum(1 for e in idx_list if e is Ellipsis) > 1:
        raise InvalidIndexError("an index can only have a single ellipsis ('...')")
    n = _consumed(idx_list)
    if n > ndim:
        raise InvalidIndexError(f"too many indices for a tensor: it is {ndim}-dimensional, "
                                f"but {n} were indexed")


def expand_ellipsis(idx_list, ndim):
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
    for i, e in enumerate(expand_ellipsis(numbered, ndim)):
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


def static_shape(idx_list, x_type, index_inputs):
    """Static shape of ``x[idx]``; IndexError for constant indices known to be out of bounds."""
    lay = layout(idx_list, x_type.ndim)
    for d, e in enumerate(lay.dims):
        e = _resolve_static(e, index_inputs)
        n = x_type.shape[d]
        if is_int(e) and n is not None and not -n <= e < n:
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


def symbolic_shape(idx_list, node, input_shapes, n_values):
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


def format_index(idx_list):
    return ", ".join("..." if e is Ellipsis else "None" if e is None else str(e)
                     for e in idx_list)
