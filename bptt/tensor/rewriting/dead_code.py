"""Dead code removal: drop nodes and variables that no output needs.

`FunctionGraph.replace` already prunes a node when its last client goes;
this pass is the safety net for whatever escaped (a node imported and then
bypassed, constants nobody reads), so the linker and the printer only see
live nodes.
"""
from __future__ import annotations

from ...graph.rewriting import graph_pass, record
from ...graph.verify import checked_toposort


@graph_pass()
def remove_dead_code(fgraph):
    """Remove the nodes the outputs do not depend on; True if any was removed."""
    live = set(checked_toposort(fgraph.outputs, blockers=fgraph.inputs))
    dead = [n for n in fgraph.apply_nodes if n not in live]
    for node in dead:
        fgraph.apply_nodes.discard(node)
        for i, inp in enumerate(node.inputs):
            clients = fgraph.clients.get(inp)
            if clients is not None and (node, i) in clients:
                clients.remove((node, i))
        for out in node.outputs:
            fgraph.variables.discard(out)
            fgraph.clients.pop(out, None)
        record(fgraph, "remove_dead_code", node)
    inputs = set(fgraph.inputs)
    for v in [v for v in fgraph.variables if not fgraph.clients.get(v) and v not in inputs]:
        if v.owner is None or v.owner not in fgraph.apply_nodes:
            fgraph.variables.discard(v)
            fgraph.clients.pop(v, None)
    return bool(dead)
