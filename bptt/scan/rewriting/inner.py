"""Rewrite every Scan's step graph with the same pipeline as the outer graph.

`ScanInnerRewrite(pipeline)` visits the Scan nodes of a graph; for each it
puts a copy of the step graph in a `FunctionGraph` (inner inputs -> inner
outputs), runs ``pipeline(fgraph)`` on it (the compile pipeline, which
contains this pass: nested scans are rewritten recursively) and replaces
the node by one of an equal `Scan` op built on the rewritten step. The
pipeline is an argument because `bptt.scan` must not import
`bptt.compile`. The new op has the same `ScanInfo`, sequence origins and
output labels; its identity (`graph_signature`) is that of the rewritten
graph, so equal loops still merge afterwards.
"""
from __future__ import annotations

from ...graph.fg import FunctionGraph
from ...graph.rewriting import GraphRewriter, can_replace, record
from ...graph.traversal import toposort
from ..op import Scan


def rewrite_inner_op(op, pipeline):
    """A `Scan` op equal to `op` whose step graph went through `pipeline`, or None if unchanged."""
    fg = FunctionGraph(op.inner_inputs, op.inner_outputs, clone=True)
    pipeline(fg)
    new = Scan(fg.inputs, fg.outputs, op.info, seq_origins=op.seq_origins,
               output_labels=op.output_labels, profile=op.profile, plan=op.plan)
    return None if new == op else new


class ScanInnerRewrite(GraphRewriter):
    """Graph rewriter: run `pipeline` (``fgraph -> anything``) on every Scan's step graph."""

    name = "scan_inner"

    def __init__(self, pipeline, name="scan_inner"):
        self.pipeline = pipeline
        self.name = name

    def apply(self, fgraph):
        changed = False
        for node in toposort(fgraph.outputs, blockers=fgraph.inputs):
            if not isinstance(node.op, Scan) or node not in fgraph.apply_nodes:
                continue
            op = rewrite_inner_op(node.op, self.pipeline)
            if op is None:
                continue
            new = op.make_node(*node.inputs)
            pairs = list(zip(node.outputs, new.outputs))
            if not all(can_replace(old, out) for old, out in pairs):
                continue   # a less precise output type: keep the old loop
            for old, out in pairs:
                if old.type == out.type:
                    fgraph.replace(old, out, reason=self.name)
                else:
                    for client, i in list(fgraph.clients.get(old, ())):
                        fgraph.change_input(client, i, out)
            record(fgraph, self.name, node, self.name)
            changed = True
        return changed
