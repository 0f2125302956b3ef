"""Rewrites that keep whole sequences from living longer than they must.

The gradient of a scan builds T-long arrays outside the loop (the loss
cotangent of every step, the stacked cotangent the weight gradients are
summed from). Three spellings of the reverse sweep keep such an array alive,
or copy one, for nothing:

* ``join_drop_empty``: ``Join(axis, a, x[n:])`` where ``x`` has exactly ``n``
  rows along the axis. The scan gradient joins the backward loop's states with
  the rest of the cotangent sequence, which for a full-length loop is empty;
  the empty view still holds the whole cotangent buffer until the join runs,
  after every weight gradient. Inputs of provable length 0 are dropped (when
  the result's type stays the same); a join of one input is that input.
* ``inc_of_zeros_as_join``: ``IncSubtensor{k:n}(Alloc(0, n, *rest), y)`` (or Set) with
  ``len(y) == n - k`` is ``Join(0, zeros(k, *rest), y)``: one T-long array
  (the join) instead of three alive at once (the zeros, ``y``, and the
  incremented copy the indexing kernel makes of the zeros). Values are equal
  (``0 + y == y``; a ``-0.0`` in ``y`` stays ``-0.0`` instead of becoming
  ``+0.0``, which compares equal).
* ``sum_over_steps_in_order``: a weight gradient ``dot(reshape(A[::-1])^T,
  reshape(G))`` sums over steps, so reversing both operands' steps changes
  nothing but summation order; the reversal leaves the loop input `A` (whose
  reshape copy was made before the backward loop and held across it) for the
  loop output `G`, or both go when both are reversed.

All three need lengths proven equal, not just the same size class: a length is a
*linear form* ``base + offset`` (`lin_length`), where ``base`` is a size key of
`sizes.py` (or None for a constant). It follows Alloc shapes, basic slices,
elementwise ops with one non-broadcast input along the axis, and any op's
``infer_shape`` (a scan's buffer is ``n_steps + 1`` rows), so ``x[n+1:]`` of a
buffer of ``n + 1`` rows is provably empty. Like the other shape rewrites, it
assumes the graph runs without a shape error.
"""
from __future__ import annotations

import weakref

import numpy as np

from ...graph.basic import Constant
from ...graph.rewriting import InToOut, can_replace, node_rewriter
from ..basic import Alloc, Join, MakeVector
from ..elemwise import Elemwise
from ..math import Dot
from ..scalar_ops import Add, Cast, Minimum, Mul
from ..shape import DimShuffle, Reshape, Shape_i, SumTo
from ..subtensor import IncSubtensor, SliceSpec, Subtensor
from ..type import TensorType, constant
from .sizes import const_int, dim_key, size_facts, value_key

SIZE_KINDS = ("const", "dim", "slice", "bcast")   # keys that name a size (>= 0)
_DEPTH = 40


# -- linear forms of lengths -------------------------------------------------------

def lin_add(a, b):
    """The sum of two linear forms, or None (two bases, or an unknown operand)."""
    if a is None or b is None:
        return None
    if a[0] is not None and b[0] is not None:
        return None
    return (a[0] if a[0] is not None else b[0], a[1] + b[1])


def lin_sub(a, b):
    """The difference of two linear forms (not clamped at 0), or None (two bases, or an
    unknown operand)."""
    if a is None or b is None:
        return None
    if a[0] == b[0]:
        return (None, a[1] - b[1])
    return (a[0], a[1] - b[1]) if b[0] is None else None


def _nonneg(form):
    base, off = form
    return off >= 0 and (base is None or base[0] in SIZE_KINDS)


def _min(a, b):
    """min(a, b) when decidable: same base, or a constant no larger than a size's offset."""
    if a is None or b is None:
        return None
    if a[0] == b[0]:
        return (a[0], min(a[1], b[1]))
    for c, v in ((a, b), (b, a)):
        if c[0] is None and _nonneg(v) and c[1] <= v[1]:
            return c
    return None


def _sub_clamped(hi, lo):
    """max(0, hi - lo) when decidable."""
    if hi[0] == lo[0]:
        return (None, max(0, hi[1] - lo[1]))
    if lo[0] is None and _nonneg(hi) and hi[1] >= lo[1]:
        return (hi[0], hi[1] - lo[1])
    return None


def lin_value(fgraph, s, depth=_DEPTH):
    """``(base, offset)``: the value of the int scalar `s` as a size key plus a constant."""
    if isinstance(s, Constant):
        data = np.asarray(s.data)
        return (None, int(data)) if data.ndim == 0 and data.dtype.kind in "iu" else None
    node = s.owner
    if node is not None and depth > 0:
        op = node.op
        if isinstance(op, Shape_i):
            return lin_length(fgraph, node.inputs[0], op.i, depth - 1)
        if isinstance(op, Elemwise) and isinstance(op.scalar_op, Add):
            total = (None, 0)
            for i in node.inputs:
                total = lin_add(total, lin_value(fgraph, i, depth - 1))
            if total is not None:
                return total
        if isinstance(op, Elemwise) and isinstance(op.scalar_op, Minimum):
            found = _min(lin_value(fgraph, node.inputs[0], depth - 1),
                         lin_value(fgraph, node.inputs[1], depth - 1))
            if found is not None:
                return found
        if isinstance(op, Elemwise) and isinstance(op.scalar_op, Cast) \
                and node.inputs[0].dtype.startswith("int") and s.dtype == "int64":
            return lin_value(fgraph, node.inputs[0], depth - 1)
    if s not in fgraph.variables:
        return None
    return (size_facts(fgraph).find(value_key(s, size_facts(fgraph))), 0)


def lin_length(fgraph, x, axis, depth=_DEPTH):
    """``(base, offset)``: the run-time length of `x` along `axis`, or None."""
    static = x.type.shape[axis]
    if static is not None:
        return (None, int(static))
    node = x.owner
    found = None
    if node is not None and depth > 0:
        op = node.op
        if isinstance(op, Alloc) and len(node.inputs) - 1 == x.ndim:
            found = lin_value(fgraph, node.inputs[1 + axis], depth - 1)
        elif isinstance(op, Subtensor):
            found = _subtensor_length(fgraph, node, axis, depth - 1)
        elif isinstance(op, Elemwise):
            found = _elemwise_length(fgraph, node, axis, depth - 1)
        elif getattr(op, "infer_shape", None) is not None:
            found = _inferred_length(fgraph, x, axis, depth - 1)
    if found is not None:
        return found
    if x not in fgraph.variables:
        return None
    return (size_facts(fgraph).find(dim_key(fgraph, x, axis)), 0)


def _subtensor_length(fgraph, node, axis, depth):
    idx = node.op.idx_list
    if not all(isinstance(e, SliceSpec) for e in idx):
        return None                      # integers, new axes or ellipses: not followed
    x, scalars = node.inputs[0], iter(node.inputs[1:])
    parts = []
    for e in idx:
        parts.append([next(scalars) if p == "?" else p for p in e])
    n = lin_length(fgraph, x, axis, depth)
    if axis >= len(idx):
        return n
    start, stop, step = parts[axis]
    if start is None and stop is None and step in (None, 1, -1):
        return n
    if step not in (None, 1) or n is None:
        return None
    lo = (None, 0) if start is None else _part(fgraph, start, depth)
    hi = n if stop is None else _part(fgraph, stop, depth)
    if lo is None or hi is None or not (_nonneg(lo) and _nonneg(hi)):
        return None
    lo, hi = _min(lo, n), _min(hi, n)
    if lo is None or hi is None:
        return None
    return _sub_clamped(hi, lo)


def _part(fgraph, p, depth):
    if isinstance(p, (int, np.integer)):
        return (None, int(p))
    return lin_value(fgraph, p, depth)


def _elemwise_length(fgraph, node, axis, depth):
    """An elementwise output is as long as its one input that is not broadcast there."""
    out = node.outputs[0]
    full = [i for i in node.inputs
            if i.ndim - out.ndim + axis >= 0 and i.type.shape[i.ndim - out.ndim + axis] != 1]
    if len(full) != 1:
        return None
    i = full[0]
    return lin_length(fgraph, i, i.ndim - out.ndim + axis, depth)


# infer_shape of a node, computed once: a Scan's builds shape graphs of its whole step, and
# the rewrites here ask for the same node's lengths again and again (a test graph spent
# most of its compile time there). Sizes are values, so they stay true when the node's
# inputs are later replaced by equal ones.
_INFERRED = weakref.WeakKeyDictionary()
_FAILED = object()


def _inferred_shapes(node):
    out = _INFERRED.get(node)
    if out is None:
        shapes = [tuple(const_int(s) if s is not None else Shape_i(j)(i)
                        for j, s in enumerate(i.type.shape))
                  if isinstance(i.type, TensorType) else None for i in node.inputs]
        try:
            out = node.op.infer_shape(None, node, shapes)    # as sizes.py: no graph features
        except Exception:   # noqa: BLE001  (an op that cannot say: nothing is known)
            out = _FAILED
        _INFERRED[node] = out
    return None if out is _FAILED else out


def _inferred_length(fgraph, x, axis, depth):
    out = _inferred_shapes(x.owner)
    size = out[x.index][axis] if out is not None and out[x.index] is not None else None
    if isinstance(size, (int, np.integer)):
        return (None, int(size))
    if size is None or not hasattr(size, "owner"):
        return None
    return lin_value(fgraph, size, depth)


def provably_empty(fgraph, x, axis):
    return lin_length(fgraph, x, axis) == (None, 0)


# -- the rewrites ------------------------------------------------------------------

@node_rewriter([Join])
def join_drop_empty(fgraph, node):
    """``Join(axis, a, x[n:])`` with ``len(x) == n`` -> `a`: the empty view no longer
    keeps `x` alive until the join."""
    axis = node.op.axis
    keep = [x for x in node.inputs if not provably_empty(fgraph, x, axis)]
    if len(keep) == len(node.inputs) or not keep:
        return None
    new = keep[0] if len(keep) == 1 else Join(axis)(*keep)
    return [new] if can_replace(node.outputs[0], new) else None


def _zero_constant(v):
    return isinstance(v, Constant) and np.asarray(v.data).size > 0 \
        and not np.any(np.asarray(v.data))


@node_rewriter([IncSubtensor])
def inc_of_zeros_as_join(fgraph, node):
    """``IncSubtensor{k:n}(Alloc(0, n, *rest), y)`` (inc or set) with ``len(y) == n - k``
    -> ``Join(0, Alloc(0, k, *rest), y)``, or `y` when k == 0: one sequence-long array,
    not three alive at once."""
    x, y, *index = node.inputs
    idx = node.op.idx_list
    if len(idx) != 1 or not isinstance(idx[0], SliceSpec):
        return None
    scalars = iter(index)
    k, stop, step = (next(scalars) if p == "?" else p for p in idx[0])
    k = 0 if k is None else k
    if not isinstance(k, (int, np.integer)) or k < 0 or step not in (None, 1):
        return None
    alloc = x.owner
    if alloc is None or not isinstance(alloc.op, Alloc) or not _zero_constant(alloc.inputs[0]) \
            or len(alloc.inputs) - 1 != x.ndim or y.ndim != x.ndim or y.dtype != x.dtype:
        return None
    dims = alloc.inputs[1:]
    rows = lin_value(fgraph, dims[0])
    if rows is None or lin_add(lin_length(fgraph, y, 0), (None, int(k))) != rows:
        return None
    if stop is not None and _part(fgraph, stop, _DEPTH) != rows:
        return None                       # the region must run to the end
    for d in range(1, x.ndim):
        size = lin_value(fgraph, dims[d])
        if size is None or lin_length(fgraph, y, d) != size:
            return None
    if k == 0:
        new = y
    else:
        head = Alloc()(constant(np.zeros((), x.dtype)), const_int(int(k)), *dims[1:])
        new = Join(0)(head, y)
    return [new] if can_replace(node.outputs[0], new) else None



# -- sums over steps do not depend on the order of the steps ----------------------

_REVERSE = SliceSpec(None, None, -1)


def _reversed_source(fgraph, v):
    """`A` when `v` is ``A[::-1]`` along axis 0 (through whole-range prefix slices), else None."""
    while v.owner is not None and isinstance(v.owner.op, Subtensor):
        node = v.owner
        idx = node.op.idx_list
        if len(idx) != 1 or not isinstance(idx[0], SliceSpec):
            return None
        if idx[0] == _REVERSE:
            return node.inputs[0]
        start, stop, step = idx[0]
        whole = lin_length(fgraph, node.inputs[0], 0)
        if start not in (None, 0) or step not in (None, 1) or whole is None \
                or lin_length(fgraph, v, 0) != whole:
            return None
        v = node.inputs[0]                # x[:n] with n >= len(x) is x
    return None


def _loop_output(v):
    """Whether `v` is (a SumTo of) an output of a scan: it exists only after its loop."""
    while v.owner is not None and isinstance(v.owner.op, SumTo):
        v = v.owner.inputs[0]
    return v.owner is not None and type(v.owner.op).__name__ == "Scan"


def _folds_leading_axes(fgraph, x, shp):
    """Whether ``Reshape{2}(x, shp)`` makes rows of all axes of `x` but the last (C order)."""
    if shp.owner is None or not isinstance(shp.owner.op, MakeVector) or len(shp.owner.inputs) != 2:
        return False
    rows, cols = shp.owner.inputs
    if lin_value(fgraph, cols) != lin_length(fgraph, x, x.ndim - 1) \
            or lin_length(fgraph, x, x.ndim - 1) is None:
        return False
    want = sorted((lin_length(fgraph, x, d) for d in range(x.ndim - 1)), key=repr)
    if None in want:
        return False
    factors = [rows]
    if x.ndim > 2:
        if rows.owner is None or not isinstance(rows.owner.op, Elemwise) \
                or not isinstance(rows.owner.op.scalar_op, Mul):
            return False
        factors = list(rows.owner.inputs)
    got = sorted((lin_value(fgraph, f) for f in factors), key=repr)
    return got == want


def _reversal_free_operands(fgraph, a, b):
    """``(a2, b2)`` with ``a2, b2`` as `a`, `b` read in the opposite step order, or None."""
    ra, rb = _reversed_source(fgraph, a), _reversed_source(fgraph, b)
    if ra is not None and rb is not None:
        return ra, rb                     # both reversed: drop both
    if ra is not None and _loop_output(b):
        return ra, Subtensor((_REVERSE,))(b)
    if rb is not None and _loop_output(a):
        return Subtensor((_REVERSE,))(a), rb
    return None


@node_rewriter([Dot])
def sum_over_steps_in_order(fgraph, node):
    """``dot(reshape(A[::-1])^T, reshape(G))`` -> ``dot(reshape(A)^T, reshape(G[::-1]))``.

    Both reshapes fold the step axis (axis 0) with the other leading axes into the
    contracted dimension, so reversing the steps of both operands permutes the terms
    of each sum and nothing else (float results change only by summation order
    inside BLAS). When both operands are reversed both reversals go. When only
    `A` is (a loop's reversed input) and `G` is a scan output, the reversal moves to
    `G`: reshaping a reversed view copies it, and a copy of `A` (available before
    the loop) is scheduled before the loop and held across it, while `G`'s copy can
    only be made after the loop, when it is needed.
    """
    left, right = node.inputs
    if left.ndim != 2 or right.ndim != 2 or left.owner is None or right.owner is None:
        return None
    if not isinstance(left.owner.op, DimShuffle) or left.owner.op.new_order != (1, 0):
        return None
    ra, rb = left.owner.inputs[0], right
    if ra.owner is None or rb.owner is None or not isinstance(ra.owner.op, Reshape) \
            or not isinstance(rb.owner.op, Reshape) or ra.owner.op.ndim != 2 \
            or rb.owner.op.ndim != 2:
        return None
    (a, shp_a), (b, shp_b) = ra.owner.inputs, rb.owner.inputs
    if a.ndim != b.ndim or a.ndim < 2:
        return None
    if not (_folds_leading_axes(fgraph, a, shp_a) and _folds_leading_axes(fgraph, b, shp_b)):
        return None
    # Rows of a and b pair up step by step when their step axes are equal: the dot itself
    # checks that both fold as many rows, so each step then folds as many in both.
    la = lin_length(fgraph, a, 0)
    if la is None or la != lin_length(fgraph, b, 0):
        return None
    operands = _reversal_free_operands(fgraph, a, b)
    if operands is None:
        return None
    a2, b2 = operands
    new = Dot()(DimShuffle(2, (1, 0))(Reshape(2)(a2, shp_a)), Reshape(2)(b2, shp_b))
    return [new] if can_replace(node.outputs[0], new) else None


sequence_memory_pass = InToOut([join_drop_empty, inc_of_zeros_as_join, sum_over_steps_in_order],
                               name="sequence_memory")
