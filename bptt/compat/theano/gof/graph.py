"""``theano.gof.graph``: graph traversal in Theano's order, and graph comparison.

Theano's `ancestors` searches depth first from the *last* variable given,
each node's inputs in order; code relies on that order (Lasagne lists a
layer's parameters with ``inputs(reversed(params))``), so `ancestors` and
`inputs` here follow it, where bptt's traversal starts from the first.
"""
from __future__ import annotations

from bptt.graph.basic import Apply as Apply, Constant as Constant, Variable as Variable
from bptt.graph.replace import clone_replace as _clone_replace
from bptt.graph.traversal import ancestors as _ancestors


def ancestors(variable_list, blockers=None):
    """Every variable `variable_list` depends on, themselves included, in Theano's
    depth-first order; the search does not go past `blockers`."""
    return _ancestors(list(reversed(list(variable_list))), blockers or ())


def inputs(variable_list, blockers=None):
    """The ownerless variables `variable_list` depends on, in Theano's order."""
    return [v for v in ancestors(variable_list, blockers) if v.owner is None]


def equal_computations(xs, ys, in_xs=None, in_ys=None):
    """Whether each graph of `xs` computes what the graph at the same place in `ys`
    does: equal ops on pairwise equal inputs, equal constants, and the same input
    variables (or the pairs of `in_xs` and `in_ys`)."""
    if len(xs) != len(ys):
        raise ValueError(f"equal_computations: {len(xs)} graphs to compare with {len(ys)}")
    pairs = dict(zip(in_xs or (), in_ys or ()))
    return all(_same(x, y, pairs, {}) for x, y in zip(xs, ys))


def _same(x, y, pairs, memo):
    if x in pairs:
        return pairs[x] is y
    if (x, y) in memo:
        return memo[x, y]
    if isinstance(x, Constant) or isinstance(y, Constant):
        same = (isinstance(x, Constant) and isinstance(y, Constant)
                and x.signature() == y.signature())
    elif x.owner is None or y.owner is None:
        same = x is y
    else:
        a, b = x.owner, y.owner
        same = (x.type == y.type and a.op == b.op and len(a.inputs) == len(b.inputs)
                and a.outputs.index(x) == b.outputs.index(y)
                and all(_same(i, j, pairs, memo) for i, j in zip(a.inputs, b.inputs)))
    memo[x, y] = same
    return same


def is_same_graph(var1, var2, givens=None, debug=False):
    """Whether `var1` and `var2` compute the same thing once the substitutions of
    `givens` (a dict or pairs) are made in both; see `equal_computations`."""
    pairs = list(givens.items()) if isinstance(givens, dict) else list(givens or ())
    if pairs:
        var1, var2 = _clone_replace([var1, var2], dict(pairs))
    return equal_computations([var1], [var2])
