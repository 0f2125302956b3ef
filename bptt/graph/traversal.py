"""Walking graphs: ancestors, inputs and topological order."""
from __future__ import annotations

from .basic import Constant


def ancestors(outputs, blockers=()):
    """Every variable `outputs` depend on (themselves included), stopping at `blockers`."""
    blockers = set(blockers)
    seen, order, stack = set(), [], list(reversed(list(outputs)))
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        order.append(v)
        if v.owner is not None and v not in blockers:
            stack.extend(reversed(v.owner.inputs))
    return order


def graph_inputs(outputs, blockers=()):
    """The ownerless variables (and reached blockers) that `outputs` depend on."""
    blockers = set(blockers)
    return [v for v in ancestors(outputs, blockers) if v.owner is None or v in blockers]


def toposort(outputs, blockers=()):
    """Apply nodes computing `outputs`, each after the nodes computing its inputs.

    Iterative depth-first post-order, so long chains (unrolled loops) do not
    hit Python's recursion limit. A set of blockers is used as it is (not copied).
    """
    blockers = blockers if isinstance(blockers, (set, frozenset)) else set(blockers)
    order, done, stack = [], set(), []
    for out in outputs:
        if out.owner is not None and out not in blockers:
            stack.append((out.owner, False))
        while stack:
            node, expanded = stack.pop()
            if node in done:
                continue
            if expanded:
                done.add(node)
                order.append(node)
                continue
            stack.append((node, True))
            for inp in reversed(node.inputs):
                if inp.owner is not None and inp not in blockers and inp.owner not in done:
                    stack.append((inp.owner, False))
    return order


def free_variables(outputs, inputs):
    """Non-constant ownerless variables that `outputs` need besides `inputs`."""
    given = set(inputs)
    return [v for v in graph_inputs(outputs, given)
            if v not in given and not isinstance(v, Constant)]


def depends_on(var, target, blockers=()):
    """Whether `var` is `target` or is computed from it (the walk stops at `blockers`
    and at the first sight of `target`)."""
    blockers = set(blockers)
    seen, stack = set(), [var]
    while stack:
        v = stack.pop()
        if v is target:
            return True
        if v in seen or v.owner is None or v in blockers:
            continue
        seen.add(v)
        stack.extend(v.owner.inputs)
    return False
