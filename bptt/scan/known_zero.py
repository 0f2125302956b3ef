"""Whether the leading rows of a cotangent are provably zero.

A state's outer output keeps its initial rows in front of the rows the loop
computes, and `scan` hands the user only the computed rows
(``buffer[depth:]``). The cotangent of the buffer is then
``inc_subtensor(zeros[depth:], g)``: zero on the initial rows, though not a
constant. When the step never reads the state either, the initial value
does not reach the cost at all, and `grad` must say so (a disconnected
input) rather than return zeros. This module recognises that shape of graph;
it answers False whenever it cannot prove the rows are zero.
"""
from __future__ import annotations

from ..graph.basic import Constant


def leading_rows_zero(g, n):
    """True when rows [0, n) of `g` (along axis 0) are provably zero."""
    from ..tensor.basic import Alloc
    from ..tensor.elemwise import Elemwise
    from ..tensor.rewriting.canonicalize import filled_with
    from ..tensor.scalar_ops import Add
    from ..tensor.shape import SumTo
    from ..tensor.subtensor import IncSubtensor, SliceSpec
    from .grad_step import _has_cotangent

    if not _has_cotangent(g) or filled_with(g) == 0:
        return True
    node = g.owner
    if node is None or g.ndim == 0:
        return False
    op = node.op
    if isinstance(op, IncSubtensor):
        first = op.idx_list[0]
        if isinstance(first, SliceSpec):
            skips = (isinstance(first.start, int) and first.start >= n
                     and first.step in (None, 1))
        else:
            skips = isinstance(first, int) and first >= n
        return skips and leading_rows_zero(node.inputs[0], n)
    if isinstance(op, Elemwise) and isinstance(op.scalar_op, Add):
        # An input broadcast along axis 0 repeats one row over all of them.
        return all(i.ndim == g.ndim and i.type.shape[0] != 1 and leading_rows_zero(i, n)
                   for i in node.inputs)
    if isinstance(op, SumTo):
        # SumTo keeps the rows apart unless it sums axis 0 (target size 1, not g's).
        inner, dims = node.inputs[0], node.inputs[1:]
        return (len(dims) == inner.ndim and _same_size(dims[0], _rows(inner))
                and leading_rows_zero(inner, n))
    if isinstance(op, Alloc):
        return filled_with(node.inputs[0]) == 0
    return False


def _rows(v):
    """A variable or constant giving the number of rows of `v`, where the graph says it."""
    from ..tensor.basic import Alloc
    from ..tensor.subtensor import IncSubtensor

    if v.type.shape[0] is not None:
        return v.type.shape[0]
    node = v.owner
    if node is not None and isinstance(node.op, IncSubtensor):
        return _rows(node.inputs[0])
    if node is not None and isinstance(node.op, Alloc) and len(node.inputs) - 1 == v.ndim:
        return node.inputs[1]
    return None


def _same_size(a, b):
    """Whether sizes `a` and `b` (ints or int64 scalars) are provably equal."""
    from ..tensor.shape import Shape_i

    a, b = (_as_int(s) for s in (a, b))
    if a is None or b is None:
        return False
    if a is b or (isinstance(a, int) and a == b):
        return True
    nodes = [getattr(s, "owner", None) for s in (a, b)]
    return (all(n is not None and isinstance(n.op, Shape_i) for n in nodes)
            and nodes[0].op.i == nodes[1].op.i and nodes[0].inputs[0] is nodes[1].inputs[0])


def _as_int(s):
    if isinstance(s, Constant):
        return int(s.data)
    return s
