"""Symbolic size facts: which run-time sizes are provably equal.

`dim_key(fgraph, v, i)` names the run-time size of dimension `i` of `v` by
where it comes from, following ops whose output sizes are those of an input
or of a shape argument (and, as a fallback, the op's `infer_shape`):

* ``("const", n)``      a known size;
* ``("dim", w, j)``     the size of dimension `j` of variable `w` (nothing more known);
* ``("value", s)``      the value of the int scalar variable `s`;
* ``("bcast", ks)``     the broadcast of the sizes named by the keys in the
                        frozenset `ks` (an elementwise output's size where its
                        inputs' sizes are not provably equal).

A broadcast key is kept in a normal form: its members are roots, nested
broadcasts are flattened, 1s dropped, one member is that member, and a known
size other than 1 is that size (any other member is 1 or the run fails).
After two classes merge, broadcast keys whose normal forms become equal are
merged too (congruence: ``h == c`` makes ``bcast(x, h)`` and ``bcast(x, c)``
one size), and a broadcast known to equal one size ``r`` covers its parts:
``bcast(S) == r`` makes every size in S 1 or r, so ``bcast(T) == r`` for any T
within ``S | {r}`` that holds r. With the state facts of a scan step (an output row has its tap's
shape) this proves e.g. that the LSTM's gates, computed from ``x @ Wx + h @ Wh``,
have the state's batch size: ``bcast(x, h, c) == c`` and ``== h`` give ``h == c``,
so ``bcast(x, h) == bcast(x, h, c) == h``.

Two equal keys prove two sizes equal at run time (for any run that does not
fail a shape check). Ops that fail unless two sizes agree (the inner
dimensions of `Dot`) also make their keys equal (`_SizeFacts`). Like
PyTensor's "shape_unsafe" rewrites, this assumes the graph runs without a
shape error: a rewrite may remove the only node that would have reported
one. Keys are cached per graph; a key remains a true fact after rewrites
(replacements keep values), so the cache is never invalidated, only possibly
less useful.

A run-time `Check` is the exception, since it exists to report the user's
error. The static sizes of its output are facts about that output only (not
about its input, whose sizes its own condition reads), and a rewrite that
replaces a shape read by a constant resting on them keeps the check running:
`guarded` returns the constant behind a copy of every check upstream of the
read (`Check` on a scalar costs one comparison per call). The sizes a check's
condition and message read are folded with the *sure* facts only
(`sure_facts`, `read_by_check`): sizes derived from each variable's
ancestors, without the equalities an op's success implies (a Join after the
check needs the very sizes the check compares).
"""
from __future__ import annotations

import weakref

import numpy as np

from ...graph.basic import Constant
from ..assertion import Check
from ..basic import Alloc, Join, MakeVector
from ..elemwise import Elemwise
from ..math import Dot, Reduce
from ..scalar_ops import Cast
from ..shape import BroadcastTo, DimShuffle, Reshape, Shape, Shape_i, SumTo
from ..type import TensorConstant, TensorType

_infos = weakref.WeakKeyDictionary()


def const_int(n):
    """A (strong) int64 scalar constant: weak constants must not enter rewritten graphs."""
    return TensorConstant(TensorType("int64", ()), np.asarray(n, dtype="int64"))


class _SizeFacts:
    """Per graph: the keys of each variable's dimensions, and which keys name equal sizes.

    Equalities come from ops that fail unless two sizes agree (the inner
    dimensions of `Dot`, the non-joined dimensions of `Join`). They are kept
    in a union-find whose roots prefer constants, so ``find`` maps a key to
    the best-known name of its size.
    """

    def __init__(self, assume=True):
        self.assume = assume    # learn sizes from the ops that fail unless they agree
        self.sure = None        # without them (`sure_facts`), created on first use
        self.keys = {}
        self.parent = {}
        self.inferred = {}
        self.bcasts = set()     # every broadcast or slice key seen (for congruence)
        self.stale = False      # a union happened since broadcast keys were last closed
        self.covers = []        # see `_covers`
        self.checks = {}        # variable -> the Check nodes it depends on (`check_ancestors`)

    def find(self, key):
        self._close()
        if key[0] in _COMPOUND:
            key = self._normal(key)
        return self._root(key)

    def _root(self, key):
        root = key
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while key != root:
            key, self.parent[key] = self.parent[key], root
        return root

    def union(self, a, b):
        a, b = self.find(a), self.find(b)
        if a == b or (a[0] == "const" and b[0] == "const"):
            return   # two different constants: the run fails anyway; learn nothing
        if _RANK[a[0]] < _RANK[b[0]]:
            a, b = b, a      # the root prefers a constant, then a named size
        self.parent[a] = b
        self.stale = True

    def broadcast(self, keys):
        """The key of the broadcast of the sizes named by `keys` (normal form)."""
        return self.find(("bcast", frozenset(keys)))

    def _members(self, key):
        """(roots of the sizes `key` broadcasts, nested broadcasts flattened and 1s
        dropped; the known sizes other than 1 among them)."""
        members, known = set(), []
        todo = list(key[1])
        while todo:
            root = self._root(todo.pop())
            if root[0] == "bcast":
                todo.extend(root[1])
            elif root[0] == "const":
                if root[1] != 1:
                    known.append(root[1])
            else:
                members.add(root)
        return members, known

    def _normal(self, key):
        """The normal form of a broadcast or slice key under the current classes."""
        if key[0] == "slice":
            key = ("slice",) + tuple(k if k == ("none",) else self._canon(k) for k in key[1:])
            self.bcasts.add(key)
            return key
        members, known = self._members(key)
        if known:
            return ("const", min(known))
        if not members:
            return ("const", 1)
        if len(members) == 1:
            return members.pop()
        for cover, r in self.covers:
            if r in members and members <= cover:
                return r
        key = ("bcast", frozenset(members))
        self.bcasts.add(key)
        return key

    def _canon(self, key):
        return self._root(self._normal(key) if key[0] in _COMPOUND else key)

    def _covers(self):
        """``(S | {r}, r)`` for every broadcast ``bcast(S)`` known to be the size ``r``.

        Each size in S is then 1 or r (or the run fails), so the broadcast of any
        part of ``S | {r}`` that contains r is r.
        """
        covers = []
        for key in self.bcasts:
            r = self._root(key)
            if key[0] == "bcast" and r[0] in ("dim", "value"):
                members, known = self._members(key)
                if not known:
                    covers.append((frozenset(members | {r}), r))
        return covers

    def _close(self):
        """Merge each broadcast key with its current normal form, until nothing changes."""
        while self.stale:
            self.stale = False
            self.covers = self._covers()
            for key in list(self.bcasts):
                a, b = self._root(key), self._root(self._normal(key))
                if a != b:
                    if _RANK[a[0]] < _RANK[b[0]]:
                        a, b = b, a
                    self.parent[a] = b
                    self.stale = True


_RANK = {"const": 0, "dim": 1, "value": 1, "bcast": 2, "slice": 2}
_COMPOUND = ("bcast", "slice")


def size_facts(fgraph):
    return _infos.setdefault(fgraph, _SizeFacts())


def sure_facts(fgraph):
    """The facts that hold before any op of `fgraph` runs past its inputs: each size is
    derived from the variable's ancestors only, never equated from a consumer's need
    (a Join's, a Dot's, a static size of an op's output that its input lacks).

    A `Check` reads sizes in its condition and message; folding them with a fact
    from a consumer downstream of the check turns the check's error into the
    consumer's (or a wrong message), so reads by a check use these.
    """
    facts = size_facts(fgraph)
    if facts.sure is None:
        facts.sure = _SizeFacts(assume=False)
    return facts.sure


def assume_same_shape(fgraph, a, b):
    """Record that `a` and `b` have equal run-time shapes in `fgraph`: a fact the
    graph cannot show (a contract of the op whose inner graph it is). Register
    facts before rewriting: keys computed earlier may not benefit from them."""
    if not (isinstance(a.type, TensorType) and isinstance(b.type, TensorType)) \
            or a.ndim != b.ndim:
        return
    facts = size_facts(fgraph)
    for ka, kb in zip(shape_keys(fgraph, a), shape_keys(fgraph, b)):
        facts.union(ka, kb)


def dim_key(fgraph, v, i, facts=None):
    """The key of the size of dimension `i` of `v` (see the module docstring)."""
    return shape_keys(fgraph, v, facts)[i]


def shape_keys(fgraph, v, facts=None):
    """Keys of every dimension of `v` (each the root of its class of equal sizes),
    in `facts` (by default `size_facts`)."""
    facts = size_facts(fgraph) if facts is None else facts
    if v not in facts.keys:
        for w in _uncached_ancestors(v, facts.keys):
            facts.keys[w] = _keys_of(w, facts)
    return tuple(facts.find(k) for k in facts.keys[v])


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


def _keys_of(v, facts):
    static = v.type.shape
    derived = _derived_keys(v, facts) if v.owner is not None else None
    keys = []
    for i, s in enumerate(static):
        if s is not None:
            keys.append(("const", s))
        elif derived is not None and derived[i] is not None:
            keys.append(derived[i])
        else:
            keys.append(("dim", v, i))
    if derived is not None and facts.assume:
        for k, d in zip(keys, derived):
            if d is not None and k != d:
                facts.union(k, d)      # a static size names the derived source too
    return tuple(keys)


def guarded(fgraph, v, new):
    """`new` (a constant replacing a read of `v`'s shape) after every `Check` that `v`
    depends on: the static sizes of `v` may rest on one, which must still run."""
    for node in check_ancestors(fgraph, v):
        new = Check(node.op.message, error=node.op.error)(new, *node.inputs[1:])
    return new


def read_by_check(fgraph, s):
    """Whether the scalar `s` reaches a `Check`'s condition or message values through
    scalar operations (the check decides on it, or reports it)."""
    seen, todo = {s}, [s]
    while todo:
        for client, i in fgraph.clients.get(todo.pop(), ()):
            if client == "output":
                continue
            if isinstance(client.op, Check) and i > 0:
                return True
            for out in client.outputs:
                if out not in seen and getattr(out.type, "ndim", None) == 0:
                    seen.add(out)
                    todo.append(out)
    return False


def check_ancestors(fgraph, v):
    """The `Check` nodes `v` depends on through tensors, one per condition and message."""
    facts = size_facts(fgraph)
    if v not in facts.checks:
        for w in _uncached_ancestors(v, facts.checks):
            facts.checks[w] = _checks_of(w, facts.checks)
    return facts.checks[v]


def _checks_of(w, cache):
    node = w.owner
    if node is None:
        return ()
    found = {}
    for x in node.inputs:
        for c in cache.get(x, ()):
            found.setdefault(_check_id(c), c)
    if isinstance(node.op, Check):
        found.setdefault(_check_id(node), node)
    return tuple(found.values())


def _check_id(node):
    """Checks with one message and condition raise the same error: one guard serves."""
    return (node.op.message, *node.inputs[1:])


def value_key(s, facts):
    """Key of the value of an integer scalar `s` used as a size."""
    if isinstance(s, Constant):
        return ("const", int(s.data))
    node = s.owner
    known = None
    if node is not None and isinstance(node.op, Shape_i):
        known = _key_of_dim(facts, node.inputs[0], node.op.i)
    elif node is not None and (_is_int_cast(node) or isinstance(node.op, Check)):
        return value_key(node.inputs[0], facts)   # a Check returns its input unchanged
    elif node is not None and is_shape_entry(node):
        known = _key_of_dim(facts, node.inputs[0].owner.inputs[0], shape_entry_index(node))
    elif node is not None and isinstance(node.op, Elemwise) and len(node.inputs) == 2 and \
            node.op.scalar_op.name in ("minimum", "maximum"):
        a, b = (facts.find(value_key(i, facts)) for i in node.inputs)
        known = a if a == b else None     # min(n, n) is n
    return known if known is not None else ("value", s)


def _key_of_dim(facts, x, i):
    """The cached key of dimension i of x; None if x has none yet (it is being computed)."""
    keys = facts.keys.get(x)
    return None if keys is None else keys[i]


def entry_key(vec, i, facts):
    """Key of entry `i` of an integer vector used as a shape (None if unknown)."""
    if isinstance(vec, Constant):
        return ("const", int(vec.data[i]))
    node = vec.owner
    if node is not None and isinstance(node.op, MakeVector):
        return value_key(node.inputs[i], facts)
    if node is not None and isinstance(node.op, Shape):
        return _key_of_dim(facts, node.inputs[0], i)
    return None


def _is_int_cast(node):
    return (isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, Cast)
            and node.outputs[0].dtype.startswith("int")
            and node.inputs[0].dtype.startswith(("int", "uint")))


def _derived_keys(v, facts):
    """Keys that `v`'s op passes on from its inputs (None where it passes nothing)."""
    node, op = v.owner, v.owner.op
    ins = node.inputs
    keys = facts.keys
    if isinstance(op, Elemwise):
        return _elemwise_keys(v, ins, facts)
    if isinstance(op, DimShuffle):
        return [("const", 1) if o == "x" else keys[ins[0]][o] for o in op.new_order]
    if isinstance(op, Alloc):
        return [value_key(d, facts) for d in ins[1:]]
    if isinstance(op, BroadcastTo):
        return [entry_key(ins[1], i, facts) for i in range(v.ndim)]
    if isinstance(op, SumTo):      # by contract: the target sizes
        return [value_key(d, facts) for d in ins[1:]]
    if isinstance(op, Dot):
        a, b = keys[ins[0]], keys[ins[1]]
        if facts.assume:
            facts.union(a[-1], b[0])   # the product fails unless the inner sizes agree
        return list(a[:-1]) + list(b[1:])
    if isinstance(op, Reduce):
        return [k for d, k in enumerate(keys[ins[0]]) if d not in op.axis]
    if isinstance(op, Reshape):
        out = [entry_key(ins[1], i, facts) for i in range(v.ndim)]
        return [k if k is not None and k[0] in ("const", "dim", "bcast", "slice")
                and k != ("const", -1)
                else None for k in out]
    if isinstance(op, Join):
        for x in ins[1:] if facts.assume else ():
            for d, (a, b) in enumerate(zip(keys[ins[0]], keys[x])):
                if d != op.axis:
                    facts.union(a, b)
        return [None if d == op.axis else k for d, k in enumerate(keys[ins[0]])]
    if _is_basic_subtensor(op):
        return subtensor_keys(facts, op.idx_list, keys[ins[0]], ins[1:])
    if isinstance(op, Check):
        # A size the check proves is not a fact about its input: its condition reads it.
        given = op.shape or (None,) * v.ndim
        return [k if s is None else None for k, s in zip(keys[ins[0]], given)]
    return _inferred_keys(v, facts)


def _is_basic_subtensor(op):
    cls = subtensor_class()
    return cls is not None and isinstance(op, cls)


def subtensor_keys(facts, idx_list, x_keys, index):
    """Keys of the region ``x[idx]`` for basic indexing: an integer drops a dimension,
    a whole slice (``:`` or ``::-1``) keeps its size, and any other slice has the
    size of a slice key: the length of ``range(*slice(start, stop, step).indices(n))``
    is a function of those four sizes, so equal keys name equal lengths."""
    scalars = iter(index)
    out = []
    for d, key in enumerate(x_keys):
        entry = idx_list[d] if d < len(idx_list) else (None, None, None)
        if not isinstance(entry, tuple):        # an int or a scalar input: dropped
            if entry == "?":
                next(scalars, None)
            continue
        parts = [_part_key(p, scalars, facts) for p in entry]
        start, stop, step = entry
        if start is None and stop is None and step in (None, 1, -1):
            out.append(key)
        elif parts[0] in (("none",), ("const", 0)) and step in (None, 1) and \
                parts[1] is not None and facts.find(parts[1]) == facts.find(key):
            out.append(key)             # x[0:n] where n is x's length
        elif None in parts:
            out.append(None)
        else:
            out.append(facts.find(("slice", key, *parts)))
    return out


def _part_key(p, scalars, facts):
    if p is None:
        return ("none",)
    if p == "?":
        s = next(scalars, None)
        return None if s is None else value_key(s, facts)
    if isinstance(p, (int, np.integer)):
        return ("const", int(p))
    return None


def _inferred_keys(v, facts):
    """Keys from the op's `infer_shape`, fed with the inputs' sizes (once per node).

    The fallback for ops without a rule above (indexing, Scan): an output size
    that `infer_shape` gives as an input's size or a constant gets that key.
    """
    node = v.owner
    if node not in facts.inferred:
        facts.inferred[node] = _run_infer_shape(node, facts)
    shapes = facts.inferred[node]
    return None if shapes is None else shapes[v.index]


def _run_infer_shape(node, facts):
    infer = getattr(node.op, "infer_shape", None)
    if infer is None:
        return None
    in_shapes = [tuple(const_int(s) if s is not None else Shape_i(j)(x)
                       for j, s in enumerate(x.type.shape))
                 if isinstance(x.type, TensorType) else None for x in node.inputs]
    try:
        out_shapes = infer(None, node, in_shapes)
    except Exception:   # noqa: BLE001  (an op that cannot say: nothing is known)
        return None
    result = []
    for out, shape in zip(node.outputs, out_shapes):
        if not isinstance(out.type, TensorType) or shape is None or len(shape) != out.ndim:
            result.append(None)
            continue
        keys = []
        for size in shape:
            key = ("const", int(size)) if isinstance(size, (int, np.integer)) \
                else value_key(size, facts) if hasattr(size, "owner") else None
            keys.append(None if key is None or key[0] == "value" else key)
        result.append(keys)
    return result


def _elemwise_keys(v, ins, facts):
    """Broadcasting: a dimension's size is the broadcast of the inputs' sizes there."""
    return broadcast_keys(facts, [facts.keys[x] for x in ins], v.ndim)


def broadcast_keys(facts, shapes, ndim):
    """Keys of the broadcast of shapes given as key tuples (right-aligned, NumPy rules)."""
    out = []
    for d in range(ndim):
        members = [keys[k] for keys in shapes for k in [d - (ndim - len(keys))] if k >= 0]
        out.append(facts.broadcast(members))
    return out


def key_variable(fgraph, key):
    """An int64 scalar holding the size a key names, built only from variables
    still in `fgraph` (a cached key may name one a rewrite has removed); or None."""
    kind, var = key[0], key[1]
    if kind in _COMPOUND:
        return None
    if kind == "const":
        if var < 0:
            return None
        return const_int(var)
    if var not in fgraph.variables:
        return None
    if kind == "dim":
        return Shape_i(key[2])(var)
    if var.type == TensorType("int64", ()) and not getattr(var, "weak", False):
        return var
    return None


# -- Subtensor of Shape (the indexing ops live in tensor/subtensor.py) -----------------

def subtensor_class():
    try:
        from ..subtensor import Subtensor
    except ImportError:   # indexing not written yet: the rewrite never matches
        return None
    return Subtensor


def is_shape_entry(node):
    """Whether `node` is ``Shape(x)[i]`` with a constant scalar index."""
    cls = subtensor_class()
    return (cls is not None and isinstance(node.op, cls) and node.outputs[0].ndim == 0
            and node.inputs[0].owner is not None and isinstance(node.inputs[0].owner.op, Shape)
            and shape_entry_index(node) is not None)


def shape_entry_index(node):
    """The constant index of a Subtensor taking one entry of a vector, or None.

    Subtensor keeps a constant index in its ``idx_list`` (an int) and reads a
    symbolic one from its second input (entry ``"?"``), which constant folding
    may have turned into a constant.
    """
    idx = getattr(node.op, "idx_list", None)
    if idx is None or len(idx) != 1:
        return None
    entry = idx[0]
    if isinstance(entry, (int, np.integer)) and not isinstance(entry, bool):
        value = int(entry)
    elif entry == "?" and len(node.inputs) == 2 and isinstance(node.inputs[1], Constant):
        value = int(node.inputs[1].data)
    else:
        return None
    n = node.inputs[0].type.shape[0]
    if value < 0:
        value = value + n if n is not None else -1
    return value if 0 <= value and (n is None or value < n) else None
