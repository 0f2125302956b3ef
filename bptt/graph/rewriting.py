"""The rewrite engine: node rewriters, the drivers that apply them, graph passes.

A *node rewriter* is a small named function ``(fgraph, node) -> replacements``
declared with `node_rewriter`, which records the op classes (or op instances)
it tracks. It returns None when it does not apply, a list with one new
variable per output of `node`, or a dict old variable -> new variable.

Drivers (each a `GraphRewriter`, whose ``apply(fgraph)`` says whether it
changed anything):

* `InToOut` walks the nodes once in topological order and offers each node
  to the rewriters that track its op; nodes a rewrite creates are visited in
  the same walk, so a cascade (folding a chain of constants) needs one walk.
* `Fixpoint` repeats a list of graph rewriters until none changes the graph,
  and raises `RewriteLimitError` after `max_iterations` rounds, naming the
  rewrites that were still firing (usually two that undo each other).
* `GraphPass` wraps a whole-graph function ``fgraph -> bool`` (merge, dead
  code removal).

Every replacement goes through `replace_checked`: the new variable must have
the old one's type, or one that only knows more static sizes. Anything else
(another dtype, ndim or type class, a contradicting or forgotten static size)
is a `RewriteTypeError` naming the rewrite. Each replacement is recorded in
the graph's `rewrite_history`, which tests and debugging read.

A replacement must not be computed from a client of the variable it
replaces: that closes a cycle (`verify` reports it; the drivers' own
topological sort raises instead of looping).

Modelled on PyTensor's ``graph/rewriting/basic.py`` (``node_rewriter``,
``in2out``, ``EquilibriumGraphRewriter``), much reduced.
"""
from __future__ import annotations

import weakref
from collections import Counter, deque, namedtuple

from .verify import checked_toposort, type_conflict


class RewriteTypeError(TypeError):
    """A rewrite proposed a replacement of an incompatible type."""


class RewriteLimitError(RuntimeError):
    """A fixpoint driver did not converge within its iteration cap."""


#: One replacement made by a rewrite: which rewrite, in which driver, on what.
RewriteRecord = namedtuple("RewriteRecord", "rewrite driver node")

_histories = weakref.WeakKeyDictionary()


def rewrite_history(fgraph):
    """The list of `RewriteRecord` of every replacement made in `fgraph`, oldest first."""
    return _histories.setdefault(fgraph, [])


def fired(fgraph):
    """How many times each rewrite replaced something in `fgraph` (a Counter)."""
    return Counter(r.rewrite for r in rewrite_history(fgraph))


def record(fgraph, rewrite, node, driver=None):
    """Append a `RewriteRecord` to `fgraph`'s history (graph passes call this themselves)."""
    rewrite_history(fgraph).append(RewriteRecord(rewrite, driver, str(node)))


# -- checked replacement ---------------------------------------------------------

def replacement_error(old, new):
    """None if `new` may replace `old`, else the reason (see the module docstring)."""
    why = type_conflict(old.type, new.type)
    if why is not None:
        return why
    if hasattr(old.type, "shape"):
        lost = [i for i, (a, b) in enumerate(zip(old.type.shape, new.type.shape))
                if a is not None and b is None]
        if lost:
            return f"static size of dimension(s) {lost} would be forgotten"
    return None


def can_replace(old, new):
    """Whether `replace_checked` would accept `new` for `old`."""
    return replacement_error(old, new) is None


def replace_checked(fgraph, old, new, rewrite, node=None, driver=None):
    """Redirect every client of `old` to `new` after checking their types.

    Returns whether the graph changed. Raises `RewriteTypeError` naming
    `rewrite` when `new` cannot stand for `old`.
    """
    if old is new or old not in fgraph.variables:
        return False
    why = replacement_error(old, new)
    if why is not None:
        raise RewriteTypeError(f"rewrite {rewrite!r} replaced {old.describe()} by "
                               f"{new.describe()}: {why}")
    if old.type == new.type:
        fgraph.replace(old, new, reason=rewrite)
    else:   # more precise static shape: FunctionGraph.replace demands equal types
        for client, i in list(fgraph.clients[old]):
            fgraph.change_input(client, i, new)
    record(fgraph, rewrite, node if node is not None else old, driver)
    return True


# -- node rewriters ----------------------------------------------------------------

class NodeRewriter:
    """A named function ``(fgraph, node) -> list | dict | None`` and the ops it tracks."""

    def __init__(self, fn, tracks, name=None):
        self.fn = fn
        self.tracks = None if tracks is None else tuple(tracks)
        self.name = name or fn.__name__
        self.__doc__ = fn.__doc__

    def __call__(self, fgraph, node):
        return self.fn(fgraph, node)

    def applies_to(self, op):
        if self.tracks is None:
            return True
        return any(isinstance(op, t) if isinstance(t, type) else op == t for t in self.tracks)

    def __repr__(self):
        return f"<node rewriter {self.name}>"


def node_rewriter(tracks, name=None):
    """Declare a node rewriter tracking `tracks` (op classes or op instances; None: all ops).

    Examples
    --------
    >>> @node_rewriter([Elemwise])
    ... def local_neg_neg(fgraph, node):
    ...     ...
    """
    def deco(fn):
        return NodeRewriter(fn, tracks, name)

    return deco


def _as_pairs(result, node, rewriter):
    if isinstance(result, dict):
        return list(result.items())
    result = list(result)
    if len(result) != len(node.outputs):
        raise RewriteTypeError(f"rewrite {rewriter.name!r} returned {len(result)} "
                               f"replacements for the {len(node.outputs)} outputs of {node.op}")
    return [(old, new) for old, new in zip(node.outputs, result) if new is not None]


# -- drivers -----------------------------------------------------------------------

class GraphRewriter:
    """Base of everything `run_passes` can run: ``apply(fgraph) -> bool`` (changed?)."""

    name = "graph_rewriter"

    def apply(self, fgraph):
        raise NotImplementedError

    def __repr__(self):
        return f"<{type(self).__name__} {self.name}>"


class GraphPass(GraphRewriter):
    """A whole-graph rewrite given as a function ``fgraph -> bool``."""

    def __init__(self, fn, name=None):
        self.fn = fn
        self.name = name or fn.__name__
        self.__doc__ = fn.__doc__

    def apply(self, fgraph):
        return bool(self.fn(fgraph))


def graph_pass(name=None):
    """Decorator turning ``fn(fgraph) -> bool`` into a `GraphPass`."""
    def deco(fn):
        return GraphPass(fn, name)

    return deco


class InToOut(GraphRewriter):
    """Offer every node, inputs first, to the node rewriters that track its op.

    The first rewriter whose result changes the graph wins for that node; the
    nodes it created are visited next. `max_replacements` (default: ten per
    node plus 1000) stops a rewriter that keeps rewriting its own output.
    """

    def __init__(self, rewriters, name=None, max_replacements=None):
        self.rewriters = list(rewriters)
        self.name = name or "in_to_out(" + ", ".join(r.name for r in self.rewriters) + ")"
        self.max_replacements = max_replacements
        self._by_class = {}

    def _candidates(self, op):
        """The rewriters tracking `op` (the class-level part of the answer is cached)."""
        cls = type(op)
        if cls not in self._by_class:
            self._by_class[cls] = [r for r in self.rewriters if r.tracks is None or any(
                issubclass(cls, t) if isinstance(t, type) else type(t) is cls
                for t in r.tracks)]
        return [r for r in self._by_class[cls] if r.applies_to(op)]

    def apply(self, fgraph):
        order = checked_toposort(fgraph.outputs, blockers=fgraph.inputs)
        known = set(order)
        queue = deque(order)
        cap = self.max_replacements or 10 * len(order) + 1000
        count = 0
        while queue:
            node = queue.popleft()
            if node not in fgraph.apply_nodes:
                continue
            new_vars = self._rewrite_node(fgraph, node)
            if new_vars is None:
                continue
            count += 1
            if count > cap:
                raise RewriteLimitError(
                    f"{self.name}: more than {cap} replacements in one walk; the last was "
                    f"{rewrite_history(fgraph)[-1].rewrite!r} on {node.op}")
            fresh = [n for n in _new_nodes(new_vars, known) if n in fgraph.apply_nodes]
            known.update(fresh)
            queue.extendleft(reversed(fresh))
        return count > 0

    def _rewrite_node(self, fgraph, node):
        """Try the rewriters on `node`; the new variables of the first that changes the graph."""
        for rw in self._candidates(node.op):
            result = rw(fgraph, node)
            if not result:
                continue
            changed = False
            pairs = _as_pairs(result, node, rw)
            for old, new in pairs:
                changed |= replace_checked(fgraph, old, new, rw.name, node, self.name)
            if changed:
                return [new for _, new in pairs]
        return None


def _new_nodes(variables, known):
    """Nodes computing `variables` that are not in `known`, inputs first.

    Walks only the new part of the graph (it stops at known nodes), so a
    walk with many small replacements stays linear.
    """
    order, seen = [], set()
    stack = [(v.owner, False) for v in variables if v.owner is not None]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node in known or node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        stack.extend((i.owner, False) for i in node.inputs if i.owner is not None)
    return order


class Fixpoint(GraphRewriter):
    """Repeat `rewriters` (graph rewriters) until a whole round changes nothing."""

    def __init__(self, rewriters, name="fixpoint", max_iterations=50):
        self.rewriters = list(rewriters)
        self.name = name
        self.max_iterations = max_iterations

    def apply(self, fgraph):
        history = rewrite_history(fgraph)
        changed_any = False
        for _ in range(self.max_iterations):
            start = len(history)
            changed = False
            for rw in self.rewriters:
                changed |= rw.apply(fgraph)
            if not changed:
                return changed_any
            changed_any = True
        busy = Counter(r.rewrite for r in history[start:])
        raise RewriteLimitError(
            f"{self.name}: no fixpoint after {self.max_iterations} iterations; still firing "
            f"in the last one: {dict(busy.most_common(5))}. Two rewrites probably undo "
            "each other")
