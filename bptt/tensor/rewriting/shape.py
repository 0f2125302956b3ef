"""Shape rewrites, and the symbolic size facts they rest on.

`dim_key(fgraph, v, i)` names the run-time size of dimension `i` of `v` by
where it comes from, following ops whose output sizes are those of an input
or of a shape argument:

* ``("const", n)``      a known size;
* ``("dim", w, j)``     the size of dimension `j` of variable `w` (nothing more known);
* ``("value", s)``      the value of the int scalar variable `s`.

Two equal keys prove two sizes equal at run time (for any run that does not
fail a shape check), which is how useless `SumTo`, `BroadcastTo` and `Alloc`
nodes are found, and how ``Shape_i`` of a computed tensor is lifted to the
tensor (or scalar) its size comes from. Keys are cached per graph; a key
remains a true fact after rewrites (replacements keep values), so the cache
is never invalidated, only possibly less useful.

The rewrites:

* ``Shape_i(x)``  -> a constant when x's size is static, else the source of
  the size (``Shape_i(Alloc(v, n, m))`` is ``n``; ``Shape_i(tanh(W @ x))`` is
  ``Shape_i(W)``);
* ``Shape(x)``    -> a constant vector when x's shape is static;
* ``Shape(x)[i]`` (a `Subtensor` with a constant index) -> ``Shape_i(x)``;
* ``SumTo(g, ref)``, ``BroadcastTo(x, shp)``, ``Alloc(v, *dims)`` -> their
  first input when its shape provably equals the output's already.
"""
from __future__ import annotations

import weakref

import numpy as np

from ...graph.basic import Constant
from ...graph.rewriting import can_replace, node_rewriter
from ..basic import Alloc, Join, MakeVector
from ..elemwise import Elemwise
from ..math import Dot, Reduce
from ..scalar_ops import Cast
from ..shape import BroadcastTo, DimShuffle, Reshape, Shape, Shape_i, SumTo
from ..type import TensorConstant, TensorType

_caches = weakref.WeakKeyDictionary()


def const_int(n):
    """A (strong) int64 scalar constant: weak constants must not enter rewritten graphs."""
    return TensorConstant(TensorType("int64", ()), np.asarray(n, dtype="int64"))


# -- size keys -----------------------------------------------------------------------

def dim_key(fgraph, v, i):
    """The key of the size of dimension `i` of `v` (see the module docstring)."""
    return shape_keys(fgraph, v)[i]


def shape_keys(fgraph, v):
    """Keys of every dimension of `v`, computed for its unknown ancestors, inputs first."""
    cache = _caches.setdefault(fgraph, {})
    if v in cache:
        return cache[v]
    for w in _uncached_ancestors(v, cache):
        cache[w] = _keys_of(w, cache)
    return cache[v]


def _uncached_ancestors(v, cache):
    """Tensor variables `v` depends on (itself last) whose keys are not cached yet."""
    order, seen, stack = [], set(), [(v, False)]
    while stack:
        w, expanded = stack.pop()
        if expanded:
            order.append(w)
            continue
        if w in cache or w in seen or not isinstance(w.type, TensorType):
            continue
        seen.add(w)
        stack.append((w, True))
        if w.owner is not None:
            stack.extend((i, False) for i in w.owner.inputs)
    return order


def _keys_of(v, cache):
    static = v.type.shape
    derived = _derived_keys(v, cache) if v.owner is not None else None
    keys = []
    for i, s in enumerate(static):
        if s is not None:
            keys.append(("const", s))
        elif derived is not None and derived[i] is not None:
            keys.append(derived[i])
        else:
            keys.append(("dim", v, i))
    return tuple(keys)


def value_key(s, cache):
    """Key of the value of an integer scalar `s` used as a size."""
    if isinstance(s, Constant):
        return ("const", int(s.data))
    node = s.owner
    if node is not None and isinstance(node.op, Shape_i):
        return cache[node.inputs[0]][node.op.i]
    if node is not None and _is_int_cast(node):
        return value_key(node.inputs[0], cache)
    if node is not None and _is_shape_entry(node):
        return cache[node.inputs[0].owner.inputs[0]][_index_of(node)]
    return ("value", s)


def entry_key(vec, i, cache):
    """Key of entry `i` of an integer vector used as a shape."""
    if isinstance(vec, Constant):
        return ("const", int(vec.data[i]))
    node = vec.owner
    if node is not None and isinstance(node.op, MakeVector):
        return value_key(node.inputs[i], cache)
    if node is not None and isinstance(node.op, Shape):
        return cache[node.inputs[0]][i]
    return None


def _is_int_cast(node):
    return (isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, Cast)
            and node.outputs[0].dtype.startswith("int")
            and node.inputs[0].dtype.startswith(("int", "uint")))


def _derived_keys(v, cache):
    """Keys that `v`'s op passes on from its inputs (None where it passes nothing)."""
    node, op = v.owner, v.owner.op
    ins = node.inputs
    if isinstance(op, Elemwise):
        return _elemwise_keys(v, ins, cache)
    if isinstance(op, DimShuffle):
        src = cache[ins[0]]
        return [("const", 1) if o == "x" else src[o] for o in op.new_order]
    if isinstance(op, Alloc):
        return [value_key(d, cache) for d in ins[1:]]
    if isinstance(op, BroadcastTo):
        return [entry_key(ins[1], i, cache) for i in range(v.ndim)]
    if isinstance(op, SumTo):
        g, ref = cache[ins[0]], cache[ins[1]]
        return [a if a == b else None for a, b in zip(g[len(g) - len(ref):], ref)]
    if isinstance(op, Dot):
        a, b = cache[ins[0]], cache[ins[1]]
        return list(a[:-1]) + list(b[1:])
    if isinstance(op, Reduce):
        src = cache[ins[0]]
        return [k for d, k in enumerate(src) if d not in op.axis]
    if isinstance(op, Reshape):
        keys = [entry_key(ins[1], i, cache) for i in range(v.ndim)]
        return [k if k is not None and k[0] in ("const", "dim") and k != ("const", -1)
                else None for k in keys]
    if isinstance(op, Join):
        first = cache[ins[0]]
        return [None if d == op.axis else k for d, k in enumerate(first)]
    return None


def _elemwise_keys(v, ins, cache):
    """Broadcasting: a dimension's size is that of every input not statically 1 there."""
    out = []
    for d in range(v.ndim):
        keys = set()
        for x in ins:
            k = d - (v.ndim - x.ndim)
            if k >= 0 and x.type.shape[k] != 1:
                keys.add(cache[x][k])
        out.append(("const", 1) if not keys else (keys.pop() if len(keys) == 1 else None))
    return out


def key_variable(fgraph, key):
    """An int64 scalar holding the size a key names, built only from variables
    still in `fgraph` (a cached key may name one a rewrite has removed); or None."""
    kind, var = key[0], key[1]
    if kind == "const":
        return const_int(var)
    if var not in fgraph.variables:
        return None
    if kind == "dim":
        return Shape_i(key[2])(var)
    if var.type == TensorType("int64", ()) and not getattr(var, "weak", False):
        return var
    return None


# -- Subtensor of Shape (the indexing ops live in tensor/subtensor.py) -----------------

def _subtensor_class():
    try:
        from ..subtensor import Subtensor
    except ImportError:   # indexing not written yet: the rewrite never matches
        return None
    return Subtensor


def _is_shape_entry(node):
    """Whether `node` is ``Shape(x)[i]`` with a constant scalar index."""
    cls = _subtensor_class()
    return (cls is not None and isinstance(node.op, cls) and node.outputs[0].ndim == 0
            and node.inputs[0].owner is not None and isinstance(node.inputs[0].owner.op, Shape)
            and _index_of(node) is not None)


def _index_of(node):
    """The constant integer index of a scalar-indexing Subtensor node, or None."""
    idx = getattr(node.op, "idx_list", None)
    if idx is None or len(idx) != 1 or isinstance(idx[0], slice):
        return None
    entry = idx[0]
    if isinstance(entry, (int, np.integer)):
        value = int(entry)
    elif len(node.inputs) == 2 and isinstance(node.inputs[1], Constant):
        value = int(node.inputs[1].data)
    else:
        return None
    n = node.inputs[0].type.shape[0]
    if value < 0:
        value = value + n if n is not None else None
    return value


# -- rewrites ------------------------------------------------------------------------

@node_rewriter([Shape_i])
def shape_i_of_static_dim(fgraph, node):
    """``Shape_i(x)`` of a dimension whose size the type knows -> that constant."""
    size = node.inputs[0].type.shape[node.op.i]
    if size is not None:
        return [const_int(size)]
    return None


@node_rewriter([Shape_i])
def shape_i_from_source(fgraph, node):
    """``Shape_i(x)`` -> the variable x's size comes from (an Alloc dim, an input's Shape_i)."""
    x, i = node.inputs[0], node.op.i
    key = dim_key(fgraph, x, i)
    if key == ("dim", x, i):
        return None
    new = key_variable(fgraph, key)
    return [new] if new is not None else None


@node_rewriter([Shape])
def shape_of_static(fgraph, node):
    """``Shape(x)`` of a fully static shape -> a constant vector."""
    shape = node.inputs[0].type.shape
    if None in shape:
        return None
    data = np.asarray(shape, dtype="int64")
    return [TensorConstant(TensorType("int64", data.shape), data)]


def _shape_entry_rewriter():
    cls = _subtensor_class()
    if cls is None:
        return None

    @node_rewriter([cls])
    def subtensor_of_shape(fgraph, node):
        """``Shape(x)[i]`` with a constant i -> ``Shape_i(x)`` (then lifted like any Shape_i)."""
        if not _is_shape_entry(node):
            return None
        x = node.inputs[0].owner.inputs[0]
        out = Shape_i(_index_of(node))(x)
        return [out] if out.type == node.outputs[0].type else None

    return subtensor_of_shape


def _same_shape(fgraph, x, out):
    """Whether `x` provably has `out`'s run-time shape and may stand for it."""
    if x.ndim != out.ndim or not can_replace(out, x):
        return False
    return shape_keys(fgraph, x) == shape_keys(fgraph, out)


@node_rewriter([SumTo])
def useless_sum_to(fgraph, node):
    """``SumTo(g, ref)`` -> g when g already has ref's shape."""
    g, ref = node.inputs
    out = node.outputs[0]
    if g.ndim == ref.ndim and g.dtype == out.dtype and can_replace(out, g) \
            and shape_keys(fgraph, g) == shape_keys(fgraph, ref):
        return [g]
    return None


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


def shape_rewriters():
    """The shape rewrites, in the order they are tried on a node."""
    rws = [shape_i_of_static_dim, shape_i_from_source, shape_of_static,
           useless_sum_to, useless_broadcast_to, useless_alloc]
    entry = _shape_entry_rewriter()
    return rws + ([entry] if entry is not None else [])
