"""A loop reads fill rows and another array's rows without their join: `scan_read_through_join`.

The gradient of a scan builds the loss cotangent of a state's buffer ``P`` as::

    J = Join(0, alloc(v, k, *row), P[k:])      # v = 0: the loss does not read the k
                                               # initial rows; for 0.5 * sum(h ** 2)
                                               # the cotangent of h is h itself

and the backward scan reads J through first-axis slices, as a sequence (its
``g_output`` row) and outside the loop (the initial state's cotangent). J is a
copy of the whole trace made to put k rows of zeros in front. Two variants:

* ``P[k:]`` inside an elementwise expression whose other operands are 0-d
  (``2 * P[k:]`` for ``sum(h ** 2)``): a T-long array and its copy in J. The step
  computes the expression on P's rows (the 0-d operands become non-sequences).
* ``IncSubtensor{k:}(alloc(0, len(P), *row), P[k:])``, when `inc_of_zeros_as_join`
  could not prove the lengths (a symbolic n_steps): the same rows, a ``-0.0`` of P
  read as itself instead of ``+0.0``.

``len(J) == len(P)`` (proved: ``len(P) >= k``), so a chain C of first-axis
slices picks the same row positions of J and of P. Which rows it picks is a span
``lo <= r < hi`` of linear forms (`_Forms.picked`, lengths as `reorder.lin_value`
gives them, a symbolic n_steps bounded below by ``len(J) >= k``):

* all at or after row k (the usual case since save-mem's pre-add form, which
  reads the rows of the states the forward steps wrote): ``C(J) = f(C(P))``, the
  step reads P's rows, a view of the forward trace;
* all before row k (the initial state's cotangent row, outside the loop): the
  fill value, an ``alloc(v, ...)`` of those rows;
* both, or unproved: a one-byte-per-row mask
  ``M = Join(0, alloc(False, k), alloc(True, len(P) - k))`` and
  ``switch(C(M), f(C(P)), v)``::

    outer:  seqs [..., C(J), ...]             init [..., C'(J), ...]
    inner:  row
      -->
    outer:  seqs [..., C(P), ..., C(M)]       init [..., switch(C'(M), C'(P), v)]
    inner:  switch(m, prow, v)

J is not built. The rewrite fires when the scan reads J, at sequences or initial
states (an initial state has as many rows as the state's taps, so its switch is
small); readers outside the loop may read P's rows, fill rows (also one row, ``C(J)[i]``)
or, at most one of them, both through a switch (no more rows than J); a row's size
``Shape_i{d}(C(J))`` (d > 0) is P's. Two mixed readers (truncate_gradient) keep J.
As the other shape rewrites, it assumes the graph runs without a shape error
(the join would have checked that v's rows have P's row shape).

Runs after `scan_chunk_accumulators` (so a weight-gradient cotangent summed in
chunks is known not to need T rows: `nit_sot_homes` skips summed nit_sots) and
before the gemm and fusion passes, which fuse a switch into the step's
elementwise loop. A join is left alone when `scan_nit_sot_into_seq` may store an
unsummed nit_sot in its rows (`nit_sot_homes`; whether the row shapes agree is
checked at run time), such as the cotangent of a sequence ``x`` read as ``x_t @ U``.
Without J it would need T rows of its own, written in backward order; where it can
live in another sequence's rows (a pre-activation's), J's T rows are saved.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...graph.basic import Constant
from ...graph.rewriting import InToOut, can_replace, node_rewriter
from ...tensor.basic import Alloc, Join
from ...tensor.elemwise import Elemwise
from ...tensor.math import sub, switch
from ...tensor.rewriting.reorder import SIZE_KINDS, lin_add, lin_length, lin_sub, lin_value
from ...tensor.shape import Shape_i, shape_i, shape_padright
from ...tensor.subtensor import SCALAR, IncSubtensor, SliceSpec, Subtensor
from ...tensor.type import TensorConstant, TensorType
from ..args import ScanArgs
from ..op import Scan
from .basic import rebuild
from .fill import _inner_value
from .inplace import nit_sot_homes


def _row_slice(node):
    """Whether `node` is a Subtensor of first-axis slices only (every row kept whole)."""
    return (isinstance(node.op, Subtensor) and len(node.op.idx_list) == 1
            and isinstance(node.op.idx_list[0], SliceSpec))


def _row_index(node):
    """Whether `node` is a Subtensor taking one row (a scalar index on the first axis only)."""
    return (isinstance(node.op, Subtensor) and len(node.op.idx_list) == 1
            and (node.op.idx_list[0] == SCALAR or isinstance(node.op.idx_list[0], int)))


def _chain_root(var):
    """(root, slice nodes from the root out) with `var` = the slices applied to root."""
    nodes = []
    while var.owner is not None and _row_slice(var.owner):
        nodes.append(var.owner)
        var = var.owner.inputs[0]
    return var, nodes[::-1]


def _apply(nodes, base):
    for n in nodes:
        base = n.op(base, *n.inputs[1:])
    return base


def _slice_parts(node):
    values = iter(node.inputs[1:])
    return [next(values) if p == SCALAR else p for p in node.op.idx_list[0]]


def _lin(fgraph, part):
    if isinstance(part, (int, np.integer)):
        return (None, int(part))
    return lin_value(fgraph, part)


class _Source(NamedTuple):
    """J's make-up (`_zeros_then_rows`): k rows of the fill value `v` (the Alloc `fill`),
    then the elementwise `expr` of the views ``P[k:]`` (`views`: view -> P)."""
    v: object
    k: int
    expr: object
    views: dict
    fill: object

    @property
    def p(self):
        """One of the arrays P (all have J's length and row shape)."""
        return next(iter(self.views.values()))


def _zeros_then_rows(fgraph, j):
    """``(v, k, P)`` when row r of `j` is v for r < k and ``P[r]`` after, with
    ``len(j) == len(P) >= k`` (k a constant): `j` is ``Join(0, alloc(v, k, *row), P[k:])``,
    or ``IncSubtensor{k:}(alloc(v, len(P), *row), P[k:])`` with v zero (set: any v)."""
    node = j.owner
    if node is None:
        return None
    if isinstance(node.op, Join) and node.op.axis == 0 and len(node.inputs) == 2:
        fill, rest = node.inputs
        k = _alloc_length(fgraph, fill, j.ndim)
    elif isinstance(node.op, IncSubtensor) and len(node.op.idx_list) == 1 \
            and isinstance(node.op.idx_list[0], SliceSpec):
        fill, rest = node.inputs[:2]
        start, stop, step = _slice_parts(node)
        k = _lin(fgraph, start) if stop is None and step in (None, 1) else None
        if _alloc_length(fgraph, fill, j.ndim) is None or not (
                node.op.set_instead_of_inc or _zero(fill.owner.inputs[0])):
            return None
    else:
        return None
    if k is None or k[0] is not None or rest.dtype != j.dtype:
        return None
    views = _row_views(fgraph, rest, k)
    if views is None:
        return None
    for p in set(views.values()):
        if isinstance(node.op, IncSubtensor) and \
                _lin(fgraph, fill.owner.inputs[1]) != lin_length(fgraph, p, 0):
            return None
        if not _at_least(fgraph, p, k[1]):
            return None
        # P's rows have the fill's shape (an inc would broadcast a row of ones)
        rows = fill.owner.inputs[2:]
        if any(lin_length(fgraph, p, i + 1) != _lin(fgraph, r) or _lin(fgraph, r) is None
               for i, r in enumerate(rows)):
            return None
    return _Source(fill.owner.inputs[0], k[1], rest, views, fill)


def _row_views(fgraph, rest, k):
    """``{P[k:]: P}`` for the views `rest` is an elementwise expression of (its other
    leaves 0-d), or None."""
    views, todo, seen = {}, [rest], set()
    while todo:
        v = todo.pop()
        if v in seen or v.ndim == 0:
            continue
        seen.add(v)
        p = _rows_from(fgraph, v, k) if v.ndim == rest.ndim else None
        if p is not None:
            views[v] = p
            continue
        node = v.owner
        if node is None or not isinstance(node.op, Elemwise) or v.ndim != rest.ndim \
                or len(node.outputs) != 1:
            return None
        todo.extend(node.inputs)
    return views or None


def _scalars(expr, views):
    """The 0-d leaves of the elementwise `expr` (whose other leaves are `views`)."""
    from ...graph.traversal import graph_inputs

    return [v for v in graph_inputs([expr], blockers=list(views)) if v.ndim == 0] \
        if expr not in views else []


def _at_least(fgraph, p, k):
    """Whether ``len(p) >= k`` is proved: by its linear form, or `p` is a scan state's
    buffer (not a ring) with k rows of initial taps in front."""
    length = lin_length(fgraph, p, 0)
    if length is not None and length[1] >= k \
            and (length[0] is None or length[0][0] in SIZE_KINDS):
        return True
    node = p.owner
    if node is None or not isinstance(node.op, Scan):
        return False
    return any(b.outer_output == node.outputs.index(p) and b.kind != "mit_mot"
               and node.op.plan.buffer_ring(s) is None and b.extent >= k
               for s, b in enumerate(node.op.info.buffers))


def _alloc_length(fgraph, fill, ndim):
    f = fill.owner
    if f is None or not isinstance(f.op, Alloc) or len(f.inputs) != 1 + ndim \
            or f.inputs[0].ndim != 0:
        return None
    return _lin(fgraph, f.inputs[1])


def _zero(v):
    return isinstance(v, Constant) and not np.any(np.asarray(v.data))


def _rows_from(fgraph, rest, k):
    """P when `rest` is ``P[k:]``."""
    r = rest.owner
    if r is None or not _row_slice(r):
        return None
    start, stop, step = _slice_parts(r)
    if stop is not None or step not in (None, 1) or _lin(fgraph, start) != k:
        return None
    return r.inputs[0]


def _readers(fgraph, j, node):
    """``(scan, other, sizes)``: the variables through which `node` reads `j` (slices of it)
    and those anything else reads, each with its slice nodes, and the ``Shape_i{d}`` (d > 0)
    of such slices (a row's size, P's); None for a graph output."""
    scan, other, sizes, todo = [], [], [], [(j, [])]
    while todo:
        var, nodes = todo.pop()
        for client, i in fgraph.clients.get(var, ()):
            if client == "output":
                return None
            reader, path = var, nodes
            if client is node:
                found = scan
            elif _row_slice(client) and i == 0:
                todo.append((client.outputs[0], nodes + [client]))
                continue
            elif isinstance(client.op, Shape_i) and client.op.i > 0:
                sizes.append(client)
                continue
            else:
                found = other
                if _row_index(client) and i == 0:   # one row: C(J)[i]
                    reader, path = client.outputs[0], nodes + [client]
            if all(reader is not v for v, _ in found):
                found.append((reader, path))
    return scan, other, sizes


def _outside_rows(var, nodes, src, which):
    """``switch(C(M), f(C(P)...), v)`` for ``var = C(J)``: J's rows made from P's (outside a
    loop), with ``f`` the elementwise expression of J's rows after the fill; without the
    switch when `which` says the rows are all P's ("rows") or all fill ("fill", n rows)."""
    if which[0] == "fill":
        rows = [] if nodes and _row_index(nodes[-1]) else \
            [TensorConstant(TensorType("int64", ()), np.int64(which[1]))]
        return Alloc()(src.v, *rows, *src.fill.owner.inputs[2:])
    rows = _expr_on(src.expr, {view: _apply(nodes, p) for view, p in src.views.items()})
    if which[0] == "rows":
        return rows
    m_rows = _apply(nodes, _mask(src.k, src.p))
    return switch(shape_padright(m_rows, var.ndim - 1), rows, src.v)


def _expr_on(expr, mapping):
    """`expr` with its leaves replaced by `mapping`'s values."""
    from ...graph.replace import clone_replace

    return mapping[expr] if expr in mapping else clone_replace([expr], mapping)[0]


def _mask(k, p):
    """True for the rows of P that J holds, False for the k fill rows (one byte each)."""
    false = TensorConstant(TensorType("bool", ()), np.bool_(False))
    true = TensorConstant(TensorType("bool", ()), np.bool_(True))
    k = TensorConstant(TensorType("int64", ()), np.int64(k))
    return Join(0)(Alloc()(false, k), Alloc()(true, sub(shape_i(p, 0), k)))


# -- which rows of J a chain of slices picks ------------------------------------------------
def _which_rows(fgraph, nodes, src):
    """("rows",) when the slices `nodes` pick only rows of J at or after the fill (P's rows),
    ("fill", n) when they pick n (a constant) fill rows only, ("mixed",) when unproved."""
    k = src.k
    length = lin_length(fgraph, src.p, 0)
    if length is None:
        return ("mixed",)
    forms = _Forms(length, k)
    span = forms.picked(fgraph, nodes)
    if span is None:
        return ("mixed",)
    lo, hi = span
    if forms.ge(lo, (None, k)) or forms.ge(lo, hi):
        return ("rows",)
    n = lin_sub(hi, lo)
    if forms.ge((None, k), hi) and n is not None and n[0] is None:
        return ("fill", n[1])
    return ("mixed",)


class _Forms:
    """Comparisons of linear forms ``(base, offset)`` (`reorder.lin_value`) of row positions
    in J, whose length ``(K, c)`` is at least k (`_zeros_then_rows` proved it): so
    ``K >= k - c`` also when K is a value not known to be a size (a symbolic n_steps)."""

    def __init__(self, length, k):
        self.length = length
        base, off = length
        self.floor = {base: k - off} if base is not None else {}

    def ge(self, a, b):
        """Whether ``a >= b`` is proved."""
        if a is None or b is None:
            return False
        if a[0] == b[0]:
            return a[1] >= b[1]
        if b[0] is not None:
            return False
        low = 0 if a[0][0] in SIZE_KINDS else None
        if a[0] in self.floor:
            low = self.floor[a[0]] if low is None else max(low, self.floor[a[0]])
        return low is not None and low + a[1] >= b[1]

    def picked(self, fgraph, nodes):
        """``(lo, hi)``: the rows ``lo <= r < hi`` of J that the first-axis slices `nodes`
        keep (the last may take one row), or None when unproved."""
        zero, one = (None, 0), (None, 1)
        lo, hi, backwards = zero, self.length, False
        for node in nodes:
            size = lin_sub(hi, lo)
            if _row_index(node):   # the last of the chain: one row
                index = node.op.idx_list[0]
                i = _lin(fgraph, node.inputs[1] if index == SCALAR else index)
                after = lin_add(i, one) if self.ge(i, zero) else None
                if after is None or not self.ge(size, after):
                    return None
                span = ((lin_add(lo, i), lin_add(lo, after)) if not backwards
                        else (lin_sub(hi, after), lin_sub(hi, i)))
                return None if None in span else span
            start, stop, step = _slice_parts(node)
            if step is not None and not isinstance(step, int):
                return None
            if step == -1:
                if start is not None or stop is not None:
                    return None
                backwards = not backwards
                continue
            if step not in (None, 1):
                return None
            a = zero if start is None else _lin(fgraph, start)
            b = size if stop is None else _lin(fgraph, stop)
            if not (self.ge(a, zero) and self.ge(b, zero)):
                return None
            a, b = self._min(a, size), self._min(b, size)   # slices clip at the end
            if a is None or b is None:
                return None
            if self.ge(a, b):
                b = a                       # empty
            elif not self.ge(b, a):
                return None
            lo, hi = ((lin_add(lo, a), lin_add(lo, b)) if not backwards
                      else (lin_sub(hi, b), lin_sub(hi, a)))
            if lo is None or hi is None:
                return None
        return lo, hi

    def _min(self, a, b):
        return a if self.ge(b, a) else b if self.ge(a, b) else None


def _rewrite_seq(args, k, nodes, src, which):
    """Sequence `k` (J seen through `nodes`) becomes the sequences of P's rows (the first in
    its place) and of the mask (none when `which` proves the rows all P's); returns (old
    inner row, its value in the step) or None."""
    v, kk, expr, views = src.v, src.k, src.expr, src.views
    old = args.inner_in_seqs[k]
    inner, first = {}, True
    for p in dict.fromkeys(views.values()):
        outer = _apply(nodes, p)
        row = outer.type.clone(shape=outer.type.shape[1:])()
        if first:
            args.outer_in_seqs[k], args.inner_in_seqs[k], first = outer, row, False
        else:
            row = args.add_seq(outer, inner_type=row.type)
        inner[p] = row
    mapping = {view: inner[p] for view, p in views.items()}
    mapping.update({s: _inner_value(args, s) for s in _scalars(expr, views)})
    if which[0] == "rows":
        new = _expr_on(expr, mapping)
    else:
        mask = args.add_seq(_apply(nodes, _mask(kk, src.p)))
        new = switch(mask, _expr_on(expr, mapping), _inner_value(args, v))
    return (old, new) if can_replace(old, new) else None


def _rewrite_reader(fgraph, args, var, nodes, src, mapping):
    """Swap `var` (J seen through `nodes`) wherever the scan reads it; False if impossible."""
    hit = False
    which = _which_rows(fgraph, nodes, src)
    for j, outer in enumerate(list(args.outer_in_seqs)):
        if outer is var:
            pair = _rewrite_seq(args, j, nodes, src, which)
            if pair is None:
                return False
            mapping[pair[0]] = pair[1]
            hit = True
    for cat in ("mit_sot", "sit_sot"):
        outers = getattr(args, f"outer_in_{cat}")
        for j, outer in enumerate(outers):
            if outer is var:
                new = _outside_rows(var, nodes, src, which)
                if not can_replace(var, new):
                    return False
                outers[j] = new
                hit = True
    return hit


@node_rewriter([Scan])
def scan_read_through_join(fgraph, node):
    """Read ``Join(0, alloc(v, k, ...), P[k:])`` as P's rows and a mask (module docstring)."""
    args = ScanArgs.from_node(node)
    roots = [_chain_root(outer)[0] for outer in args.outer_in_seqs]
    # A join whose rows may hold a nit_sot (a step cotangent) costs nothing: without
    # it the nit_sot would need T rows of its own, stored reversed (a copy for the weight
    # products). Whether the rows fit is known at run time only: such a join stays.
    homes = [roots[j] for j in nit_sot_homes(fgraph, node) if j is not None]
    joins = []
    for root in roots:
        if root not in joins and root not in homes:
            joins.append(root)
    mapping, outside, done = {}, {}, False
    for join in joins:
        src = _zeros_then_rows(fgraph, join)
        readers = _readers(fgraph, join, node) if src is not None else None
        if not readers or not readers[0]:
            continue
        # Readers outside the loop (the initial state's cotangent reads the rows the loop
        # does not) get P's rows, fill rows, or (at most one) their rows made by a switch:
        # never more than J's rows
        which = [_which_rows(fgraph, nodes, src) for _, nodes in readers[1]]
        if sum(w[0] == "mixed" for w in which) > 1:
            continue
        if not all(_rewrite_reader(fgraph, args, var, nodes, src, mapping)
                   for var, nodes in readers[0]):
            return None
        for (var, nodes), w in zip(readers[1], which):
            outside[var] = _outside_rows(var, nodes, src, w)
            if not can_replace(var, outside[var]):
                return None
        for size in readers[2]:   # J's rows have P's shape (_zeros_then_rows proved it)
            outside[size.outputs[0]] = shape_i(src.p, size.op.i)
        done = True
    if not done:
        return None
    args.replace_inner(mapping)
    return {**rebuild(node, args)[0], **outside}


scan_read_through_join_pass = InToOut([scan_read_through_join], name="scan_read_through_join")
