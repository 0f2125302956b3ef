"""Shape rewrites: sizes from their sources, and shape plumbing that changes nothing.

They rest on the size facts of `sizes` (``dim_key``, ``shape_keys``).

* ``Shape_i(x)``  -> a constant when x's size is static, else the source of
  the size (``Shape_i(Alloc(v, n, m))`` is ``n``; ``Shape_i(tanh(W @ x))`` is
  ``Shape_i(W)``);
* ``Shape(x)``    -> a constant vector when x's shape is static;
* a constant standing for a read of x's shape goes behind the run-time checks x
  depends on (`sizes.guarded`): a static size may rest on one, and the read
  was what kept it running.
* a size a `Check`'s condition or message reads comes from the sure facts only
  (`sizes.sure_facts`): a consumer's need must not decide the check;
* ``Shape(x)[i]`` (a `Subtensor` with a constant index) -> ``Shape_i(x)``;
* ``SumTo(g, *dims)``, ``BroadcastTo(x, shp)``, ``Alloc(v, *dims)`` -> their
  first input when its shape provably equals the output's already;
* ``SumTo(SumTo(g, *d1), *d2)`` -> ``SumTo(g, *d2)``;
* ``x[0:n]`` where every slice provably covers its whole dimension -> x;
* a DimShuffle or basic index of ``Alloc(v, *dims)`` with a 0-d v, read by
  nothing else -> ``Alloc(v, *new_dims)`` (``alloc(0, n, m)[None][0]`` is
  ``alloc(0, n, m)``, which `canonicalize.add_zero` then recognizes).
"""
from __future__ import annotations

import numpy as np

from ...graph.rewriting import can_replace, node_rewriter
from ...graph.traversal import depends_on
from ..basic import Alloc
from ..shape import BroadcastTo, DimShuffle, Shape, Shape_i, SumTo
from ..type import TensorConstant, TensorType
from .sizes import (const_int, dim_key, guarded, is_shape_entry, key_variable, read_by_check,
                    shape_entry_index, shape_keys, size_facts, subtensor_class, sure_facts,
                    value_key)


# -- rewrites ------------------------------------------------------------------------

@node_rewriter([Shape_i])
def shape_i_of_static_dim(fgraph, node):
    """``Shape_i(x)`` of a dimension whose size the type knows -> that constant."""
    x = node.inputs[0]
    size = x.type.shape[node.op.i]
    if size is not None:
        return [guarded(fgraph, x, const_int(size))]
    return None


@node_rewriter([Shape_i])
def shape_i_from_source(fgraph, node):
    """``Shape_i(x)`` -> the variable x's size comes from (an Alloc dim, an input's Shape_i)."""
    x, i = node.inputs[0], node.op.i
    key = dim_key(fgraph, x, i, sure_facts(fgraph) if read_by_check(fgraph, node.outputs[0])
                  else None)
    if key == ("dim", x, i):
        return None
    new = key_variable(fgraph, key)
    if new is None or depends_on(new, node.outputs[0], fgraph.inputs):
        return None   # a size known only through a value computed from this very Shape_i
    return [guarded(fgraph, x, new) if isinstance(new, TensorConstant) else new]


@node_rewriter([Shape])
def shape_of_static(fgraph, node):
    """``Shape(x)`` of a fully static shape -> a constant vector."""
    shape = node.inputs[0].type.shape
    if None in shape:
        return None
    data = np.asarray(shape, dtype="int64")
    return [guarded(fgraph, node.inputs[0], TensorConstant(TensorType("int64", data.shape), data))]


def _shape_entry_rewriter():
    cls = subtensor_class()
    if cls is None:
        return None

    @node_rewriter([cls])
    def subtensor_of_shape(fgraph, node):
        """``Shape(x)[i]`` with a constant i -> ``Shape_i(x)`` (then lifted like any Shape_i)."""
        if not is_shape_entry(node):
            return None
        x = node.inputs[0].owner.inputs[0]
        out = Shape_i(shape_entry_index(node))(x)
        return [out] if out.type == node.outputs[0].type else None

    return subtensor_of_shape


def _same_shape(fgraph, x, out):
    """Whether `x` provably has `out`'s run-time shape and may stand for it."""
    if x.ndim != out.ndim or not can_replace(out, x):
        return False
    return shape_keys(fgraph, x) == shape_keys(fgraph, out)


@node_rewriter([SumTo])
def useless_sum_to(fgraph, node):
    """``SumTo(g, *dims)`` -> g when g provably has shape dims already."""
    g = node.inputs[0]
    return [g] if _same_shape(fgraph, g, node.outputs[0]) else None


@node_rewriter([SumTo])
def sum_to_of_sum_to(fgraph, node):
    """``SumTo(SumTo(g, *d1), *d2)`` -> ``SumTo(g, *d2)`` when every client of the inner
    SumTo is a SumTo (so it dies). Equal when both succeed: d2 broadcasts to d1 and d1
    to g's shape, so d2 broadcasts to g's shape and the sums compose."""
    inner = node.inputs[0].owner
    if inner is None or not isinstance(inner.op, SumTo):
        return None
    if any(c == "output" or not isinstance(getattr(c, "op", None), SumTo)
           for c, _ in fgraph.clients[node.inputs[0]]):
        return None
    new = SumTo()(inner.inputs[0], *node.inputs[1:])
    return [new] if can_replace(node.outputs[0], new) else None


@node_rewriter([BroadcastTo])
def useless_broadcast_to(fgraph, node):
    """``BroadcastTo(x, shp)`` -> x when x already has shape shp."""
    x, out = node.inputs[0], node.outputs[0]
    return [x] if _same_shape(fgraph, x, out) else None


@node_rewriter([Alloc])
def useless_alloc(fgraph, node):
    """``Alloc(v, *dims)`` -> v when v already has shape dims."""
    v, out = node.inputs[0], node.outputs[0]
    return [v] if _same_shape(fgraph, v, out) else None


def _useless_subtensor_rewriter():
    cls = subtensor_class()
    if cls is None:
        return None

    @node_rewriter([cls])
    def useless_subtensor(fgraph, node):
        """``x[0:n]`` (every entry a slice over a whole dimension) -> x."""
        x, *index = node.inputs
        if not node.op.idx_list or not can_replace(node.outputs[0], x):
            return None
        scalars = iter(index)
        for d, entry in enumerate(node.op.idx_list):
            if isinstance(entry, (int, np.integer)) or not isinstance(entry, tuple):
                return None
            parts = [next(scalars) if p == "?" else p for p in entry]
            if not whole_slice(fgraph, x, d, *parts):
                return None
        return [x]

    return useless_subtensor


def whole_slice(fgraph, x, d, start, stop, step):
    """Whether ``slice(start, stop, step)`` provably selects all of dimension `d` of `x`."""
    if step not in (None, 1) or start not in (None, 0):
        return False
    if stop is None:
        return True
    key = ("const", int(stop)) if isinstance(stop, (int, np.integer)) \
        else value_key(stop, size_facts(fgraph))
    shape_keys(fgraph, x)
    return size_facts(fgraph).find(key) == dim_key(fgraph, x, d)


def _alloc_of_scalar(fgraph, x, reader):
    """(v, dims) when `x` is ``Alloc(v, *dims)`` with a 0-d v read only by `reader`."""
    node = x.owner
    if node is None or not isinstance(node.op, Alloc) or node.inputs[0].ndim != 0:
        return None
    if [c for c, _ in fgraph.clients.get(x, ())] != [reader] or x in fgraph.outputs:
        return None
    return node.inputs[0], list(node.inputs[1:])


@node_rewriter([DimShuffle])
def dimshuffle_of_alloc(fgraph, node):
    """``Alloc(v, *dims).dimshuffle(order)`` -> ``Alloc(v, *dims in order, 1 for "x")``."""
    found = _alloc_of_scalar(fgraph, node.inputs[0], node)
    if found is None:
        return None
    v, dims = found
    new = Alloc()(v, *[const_int(1) if o == "x" else dims[o] for o in node.op.new_order])
    return [new] if new.type == node.outputs[0].type else None


def _indexed_dims(idx_list, dims):
    """The sizes of ``alloc(v, *dims)[idx]`` for an index of constant ints (in range of a
    constant size), constant slices of constant sizes and whole slices; else None."""
    out, d = [], 0
    for entry in idx_list:
        size = int(dims[d].data) if isinstance(dims[d], TensorConstant) else None
        if isinstance(entry, (int, np.integer)) and not isinstance(entry, bool):
            if size is None or not -size <= entry < size:
                return None         # the index may be out of bounds: keep its check
        elif isinstance(entry, tuple) and "?" not in entry:
            if tuple(entry) in ((None, None, None), (None, None, -1)):
                out.append(dims[d])
            elif size is not None:
                out.append(const_int(len(range(*slice(*entry).indices(size)))))
            else:
                return None
        else:
            return None
        d += 1
    return out + dims[d:]


def _subtensor_of_alloc_rewriter():
    cls = subtensor_class()
    if cls is None:
        return None

    @node_rewriter([cls])
    def subtensor_of_alloc(fgraph, node):
        """``Alloc(v, *dims)[idx]`` (constant basic index) -> ``Alloc(v, *sizes of the result)``."""
        found = _alloc_of_scalar(fgraph, node.inputs[0], node)
        if found is None or len(node.inputs) != 1:
            return None
        v, dims = found
        sizes = _indexed_dims(node.op.idx_list, dims)
        if sizes is None:
            return None
        new = Alloc()(v, *sizes)
        return [new] if can_replace(node.outputs[0], new) else None

    return subtensor_of_alloc


def shape_rewriters():
    """The shape rewrites, in the order they are tried on a node."""
    rws = [shape_i_of_static_dim, shape_i_from_source, shape_of_static,
           useless_sum_to, sum_to_of_sum_to, useless_broadcast_to, useless_alloc,
           dimshuffle_of_alloc]
    extra = [_shape_entry_rewriter(), _useless_subtensor_rewriter(),
             _subtensor_of_alloc_rewriter()]
    return rws + [rw for rw in extra if rw is not None]
