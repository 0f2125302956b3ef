"""The IR spec: invariants every `FunctionGraph` keeps, checked by `verify`.

Tests run `verify` after every rewrite pass and every `grad` (the
``check_ir`` config flag), so a rewrite that breaks the graph fails where it
happens instead of several passes later in the linker. The invariants:

1. every node's outputs point back at it (``owner`` and ``index``);
2. the client lists and the nodes' inputs agree, both ways;
3. the graph is acyclic;
4. every ownerless variable that is not a graph input is a `Constant`;
5. re-running ``op.make_node`` on a node's inputs gives outputs of
   compatible types (same class, dtype and ndim; static sizes that do not
   contradict each other);
6. every constant's type accepts its data.
"""
from __future__ import annotations

import weakref

from .basic import Constant

# node -> (op, inputs, output types) it had when `_check_make_node` last passed.
# Rewrites edit few nodes per pass, and rebuilding every node after every pass was
# most of the check's cost; a node made of the same objects as then builds the same.
_built_ok = weakref.WeakKeyDictionary()


class IRError(RuntimeError):
    """A graph breaks an invariant of the IR (a bug in whatever built or rewrote it)."""


def checked_toposort(outputs, blockers=()):
    """Apply nodes computing `outputs` in topological order; IRError on a cycle.

    Iterative three-colour depth-first search: a node met again while it is
    still on the stack closes a cycle.
    """
    blockers = set(blockers)
    order, state, stack = [], {}, []   # state: 1 = on the stack, 2 = done
    for out in outputs:
        if out.owner is None or out in blockers:
            continue
        stack.append((out.owner, False))
        while stack:
            node, expanded = stack.pop()
            if expanded:
                state[node] = 2
                order.append(node)
                continue
            if state.get(node) == 2:
                continue
            if state.get(node) == 1:   # met again inside its own subtree
                raise IRError(f"the graph has a cycle through {node.op} "
                              f"(node computing {node.outputs[0].describe()})")
            state[node] = 1
            stack.append((node, True))
            for inp in reversed(node.inputs):
                if inp.owner is not None and inp not in blockers and state.get(inp.owner) != 2:
                    stack.append((inp.owner, False))
    return order


def shapes_contradict(a, b):
    """Whether two static shapes of equal length disagree on a known size."""
    return any(x is not None and y is not None and x != y for x, y in zip(a, b))


def type_conflict(expected, got):
    """None if `got` may describe the same values as `expected`, else a reason."""
    if expected == got:
        return None
    if type(expected) is not type(got):
        return f"type {got} is not a {type(expected).__name__}"
    if not hasattr(expected, "dtype"):
        return f"type {got} differs from {expected}"
    if expected.dtype != got.dtype:
        return f"dtype {got.dtype} differs from {expected.dtype}"
    if expected.ndim != got.ndim:
        return f"{got.ndim} dimension(s) instead of {expected.ndim}"
    if shapes_contradict(expected.shape, got.shape):
        return f"static shape {got.shape} contradicts {expected.shape}"
    return None


def verify(fgraph, where=None):
    """Check the invariants of the module docstring; raise `IRError` naming the broken node.

    Parameters
    ----------
    fgraph : FunctionGraph
    where : str, optional
        Added to the message (e.g. "after pass 'canonicalize'").
    """
    try:
        nodes = checked_toposort(fgraph.outputs, blockers=fgraph.inputs)
        _check_nodes(fgraph, nodes)
        _check_clients(fgraph)
        _check_variables(fgraph, nodes)
        for node in nodes:
            _check_make_node(node)
    except IRError as exc:
        if where:
            raise IRError(f"{exc} [{where}]") from None
        raise


def verify_variables(outputs, where=None):
    """`verify` the graph computing `outputs` from the free variables it reads."""
    from .fg import FunctionGraph
    from .traversal import graph_inputs

    outputs = [v for v in outputs if v is not None]
    inputs = [v for v in graph_inputs(outputs) if not isinstance(v, Constant)]
    verify(FunctionGraph(inputs, outputs, clone=False), where)


def _name(node):
    return f"{node.op} (inputs: {', '.join(v.describe() for v in node.inputs)})"


def _check_nodes(fgraph, nodes):
    for node in nodes:
        if node not in fgraph.apply_nodes:
            raise IRError(f"node {_name(node)} computes an output but is not in the graph")
        for i, out in enumerate(node.outputs):
            if out.owner is not node or out.index != i:
                raise IRError(f"output {i} of node {_name(node)} does not point back at it "
                              f"(owner {out.owner and out.owner.op}, index {out.index})")


def _check_clients(fgraph):
    for node in fgraph.apply_nodes:
        for i, inp in enumerate(node.inputs):
            if fgraph.clients.get(inp, []).count((node, i)) != 1:
                raise IRError(f"input {i} ({inp.describe()}) of node {_name(node)} does not "
                              "list the node exactly once among its clients")
    for var, clients in fgraph.clients.items():
        for client, i in clients:
            if client == "output":
                ok = i < len(fgraph.outputs) and fgraph.outputs[i] is var
                what = f"graph output {i}"
            else:
                ok = client in fgraph.apply_nodes and i < len(client.inputs) \
                    and client.inputs[i] is var
                if not ok:   # named only on failure: naming every client is slow
                    what = f"input {i} of node {_name(client)}"
            if not ok:
                raise IRError(f"{var.describe()} lists {what} as a client, which reads "
                              "another variable")
    for i, out in enumerate(fgraph.outputs):
        if ("output", i) not in fgraph.clients.get(out, []):
            raise IRError(f"graph output {i} ({out.describe()}) is not in its client list")


def _check_variables(fgraph, nodes):
    inputs = set(fgraph.inputs)
    for node in nodes:
        for v in node.inputs:
            if v.owner is None and v not in inputs and not isinstance(v, Constant):
                raise IRError(f"node {_name(node)} reads {v.describe()}, which is neither a "
                              "graph input nor a constant")
            if isinstance(v, Constant):
                _check_constant(v, node)
    for v in fgraph.outputs:
        if v.owner is None and v not in inputs and not isinstance(v, Constant):
            raise IRError(f"graph output {v.describe()} is neither computed, an input "
                          "nor a constant")
        if isinstance(v, Constant):
            _check_constant(v, None)


def _check_constant(c, node):
    try:
        c.type.filter(c.data, strict=True)
    except (TypeError, ValueError) as exc:
        user = f" read by node {_name(node)}" if node is not None else ""
        raise IRError(f"constant {c!r}{user}: its type {c.type} rejects its data ({exc})") \
            from None


def _check_make_node(node):
    now = (node.op, *node.inputs, *(out.type for out in node.outputs))
    seen = _built_ok.get(node)
    if seen is not None and len(seen) == len(now) and all(a is b for a, b in zip(seen, now)):
        return
    try:
        fresh = node.op.make_node(*node.inputs)
    except Exception as exc:  # any failure means the node could not be built today
        raise IRError(f"node {_name(node)}: make_node rejects its current inputs "
                      f"({type(exc).__name__}: {exc})") from None
    if len(fresh.outputs) != len(node.outputs):
        raise IRError(f"node {_name(node)}: make_node gives {len(fresh.outputs)} outputs, "
                      f"the node has {len(node.outputs)}")
    for i, (have, want) in enumerate(zip(node.outputs, fresh.outputs)):
        why = type_conflict(want.type, have.type)
        if why is not None:
            raise IRError(f"node {_name(node)}: output {i} is {have.type}, but make_node "
                          f"gives {want.type}: {why}")
    _built_ok[node] = now
