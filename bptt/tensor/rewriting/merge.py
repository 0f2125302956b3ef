"""Merging: one variable per value.

Equal constants (same type and data, see `Constant.signature`) become one;
then, inputs first, nodes with equal ops (equality of ``__props__``) and
identical inputs become one. Since the walk is in topological order, merging
two nodes makes their clients' inputs identical, so whole repeated
subexpressions merge in a single walk. Stateful nodes (random draws) are
never merged: two draws are two values.

When two merged outputs have different static shapes (one node was built
before an input's shape was known), the more precise one is kept.
"""
from __future__ import annotations

from ...graph.basic import Constant
from ...graph.rewriting import can_replace, graph_pass, replace_checked
from ...graph.verify import checked_toposort
from .constant_folding import is_stateful


def _merge_constants(fgraph, nodes):
    changed, seen = False, {}
    users = [(n, n.inputs) for n in nodes] + [("output", fgraph.outputs)]
    for _, inputs in users:
        for c in list(inputs):
            if not isinstance(c, Constant):
                continue
            try:
                sig = c.signature()
                first = seen.setdefault(sig, c)
            except TypeError:    # unhashable data: leave it alone
                continue
            if first is not c:
                changed |= replace_checked(fgraph, c, first, "merge_constants", c)
    return changed


def _merge_nodes(fgraph, nodes):
    changed, table = False, {}
    for node in nodes:
        if node not in fgraph.apply_nodes or is_stateful(node):
            continue
        try:
            key = (node.op, tuple(node.inputs))
            kept = table.setdefault(key, node)
        except TypeError:        # an op with unhashable props
            continue
        if kept is node:
            continue
        if all(can_replace(a, b) for a, b in zip(node.outputs, kept.outputs)):
            old, new = node, kept
        elif all(can_replace(b, a) for a, b in zip(node.outputs, kept.outputs)):
            old, new = kept, node
            table[key] = node
        else:
            continue
        for a, b in zip(old.outputs, new.outputs):
            changed |= replace_checked(fgraph, a, b, "merge", old)
    return changed


@graph_pass()
def merge(fgraph):
    """Merge equal constants, then nodes with equal ops and inputs."""
    nodes = checked_toposort(fgraph.outputs, blockers=fgraph.inputs)
    changed = _merge_constants(fgraph, nodes)
    return _merge_nodes(fgraph, nodes) or changed
