"""Indexing rewrites: slices written into a zeros buffer that they cover become a Join.

The gradient of several slices of one value (the LSTM's gates ``z[:, :n]``,
``z[:, n:2n]``, ``z[:, 2n:3n]``, ``z[:, 3n:]``) is, after
``add_of_incs_into_zeros``, a chain of increments into one zeros buffer::

    inc(inc(inc(inc(zeros, g_c, [3n:]), g_i, [:n]), g_f, [n:2n]), g_o, [2n:3n])

Each increment copies the whole buffer. When the slices partition one axis
and every piece has exactly its region's shape, the chain is the
concatenation of the pieces in slice order::

    join(axis, g_i, g_f, g_o, g_c)

one output buffer and one copy of each piece, no zeros. The slices
partition the axis, whatever its run-time length, when their bounds are
non-negative and ordered: ``0 = a0 <= a1 <= ... <= ak = end`` with consecutive
slices sharing a bound (a slice clips both bounds to the length, which keeps
them ordered). Bounds are proven ordered as ``c * s`` with a constant ``c >= 0``
and one size ``s >= 0`` (``Shape_i``), as ``n``, ``2 * n``, ``3 * n`` above.
The values are the same, except that ``0.0 + (-0.0)`` is ``+0.0``: a negative
zero in a piece stays negative (the two compare equal).

Two view rewrites fold what save-mem leaves for a state's initial cotangent,
``shape_padleft(carry[-1])[::-1][0]``: ``x[::-1]`` is x when x's first axis has
static length 1 (`reverse_of_one_row`), and ``DimShuffle{x, 0, ..}(y)[0]`` (or
``[-1]``) is y (`row_of_new_axis`). Each view is a statement of the compiled
function, with numba compile time of its own.
"""
from __future__ import annotations

import numpy as np

from ...graph.basic import Constant
from ...graph.rewriting import can_replace, node_rewriter
from ..basic import Join
from ..elemwise import Elemwise
from ..scalar_ops import Cast, Mul
from ..shape import DimShuffle, Shape_i
from ..subtensor import FULL, IncSubtensor, SliceSpec, Subtensor
from .canonicalize import filled_with
from .sizes import assume_same_shape, shape_keys, size_facts, subtensor_keys


def _sliced_axis(idx_list, ndim):
    """(axis, start, stop) of an index that slices one axis with step 1 and keeps the
    others whole; None otherwise. start/stop are None, ints or ``"?"``."""
    found = None
    for d, entry in enumerate(idx_list):
        if not isinstance(entry, tuple):
            return None
        entry = SliceSpec(*entry)
        if entry == FULL:
            continue
        if found is not None or entry.step not in (None, 1):
            return None
        found = (d, entry.start, entry.stop)
    return found if found is not None and len(idx_list) <= ndim else None


def _bound(part, scalars):
    """A slice bound as ``(c, s)`` meaning ``c * s`` (s a size variable, or None for 1),
    ``"end"`` for an open stop, or None when it is not provably non-negative."""
    if part is None:
        return None
    if part == "?":
        return _linear(next(scalars))
    return (int(part), None) if part >= 0 else None


def _linear(v):
    if isinstance(v, Constant) and np.ndim(v.data) == 0:
        c = int(v.data)
        return (c, None) if c >= 0 else None
    node = v.owner
    if node is None:
        return None
    if isinstance(node.op, Shape_i):
        return (1, v)
    if isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, Cast) \
            and node.inputs[0].dtype.startswith("int"):
        return _linear(node.inputs[0])
    if isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, Mul) \
            and len(node.inputs) == 2:
        a, b = (_linear(x) for x in node.inputs)
        if a is not None and b is not None:
            if a[1] is None:
                return (a[0] * b[0], b[1])
            if b[1] is None:
                return (a[0] * b[0], a[1])
    return None


def _same(a, b):
    """Whether two bounds provably name the same value."""
    if a == "end" or b == "end":
        return a == b
    return a[0] == b[0] and (a[0] == 0 or a[1] is b[1])


def _ordered(a, b):
    """Whether ``a <= b`` for every value of the sizes they name."""
    if b == "end":
        return True
    if a == "end":
        return False
    return a[0] == 0 or (a[1] is b[1] and a[0] <= b[0])


def _piece(fgraph, v):
    """(base, y, axis, start, stop) when `v` is an increment of one slice, else None."""
    node = v.owner
    if node is None or type(node.op) is not IncSubtensor:
        return None
    x, y, *index = node.inputs
    sliced = _sliced_axis(node.op.idx_list, x.ndim)
    if sliced is None or y.ndim != x.ndim:
        return None
    axis, start, stop = sliced
    scalars = iter(index)
    lo = (0, None) if start is None else _bound(start, scalars)
    hi = "end" if stop is None else _bound(stop, scalars)
    if lo is None or hi is None or not _ordered(lo, hi):
        return None
    facts = size_facts(fgraph)
    region = subtensor_keys(facts, node.op.idx_list, shape_keys(fgraph, x), index)
    if None in region or list(shape_keys(fgraph, y)) != region:
        return None   # y broadcasts into its region (or cannot be shown not to)
    return x, y, axis, lo, hi


@node_rewriter([IncSubtensor])
def incs_into_zeros_to_join(fgraph, node):
    """A chain of increments of slices into zeros that covers one axis -> a Join."""
    out = node.outputs[0]
    pieces, v = [], out
    while True:
        found = _piece(fgraph, v)
        if found is None:
            return None
        base, y, axis, lo, hi = found
        pieces.append((lo, hi, y, axis))
        if filled_with(base) == 0:
            break
        if [c for c, _ in fgraph.clients.get(base, ())] != [v.owner]:
            return None   # an intermediate buffer someone else reads: it stays
        v = base
    if len(pieces) < 2 or len({p[3] for p in pieces}) != 1 or base.type != out.type:
        return None
    chain, at = [], (0, None)
    while at != "end":
        nxt = [p for p in pieces if _same(p[0], at)]
        if len(nxt) != 1 or len(chain) == len(pieces):
            return None   # a gap, an overlap, or an empty slice that starts where it ends
        chain.append(nxt[0][2])
        at = nxt[0][1]
    if len(chain) != len(pieces):
        return None
    new = Join(pieces[0][3])(*chain)
    if not can_replace(out, new):
        return None
    assume_same_shape(fgraph, new, out)   # the pieces fill `out` exactly
    return [new]


@node_rewriter([Subtensor])
def reverse_of_one_row(fgraph, node):
    """``x[::-1]`` -> x when x's first axis has static length 1 (a reversed row is the row:
    save-mem's ``shape_padleft(last row)`` read through a reversing view)."""
    x = node.inputs[0]
    if node.op.idx_list == (SliceSpec(None, None, -1),) and x.type.shape[:1] == (1,) \
            and can_replace(node.outputs[0], x):
        return [x]
    return None


@node_rewriter([Subtensor])
def row_of_new_axis(fgraph, node):
    """``DimShuffle{x, 0, .., n-1}(y)[0]`` (or ``[-1]``) -> y: the one row of a new axis."""
    ds = node.inputs[0].owner
    if node.op.idx_list not in ((0,), (-1,)) or ds is None or not isinstance(ds.op, DimShuffle):
        return None
    y = ds.inputs[0]
    if ds.op.new_order == ("x",) + tuple(range(y.ndim)) and can_replace(node.outputs[0], y):
        return [y]
    return None


def subtensor_rewriters():
    """The indexing rewrites, in the order they are tried on a node."""
    return [incs_into_zeros_to_join, reverse_of_one_row, row_of_new_axis]
