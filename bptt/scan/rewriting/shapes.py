"""Step graphs learn the sizes their loop proves: `scan_step_shapes`.

Inside a step graph every inner input is a fresh variable, so the size facts
of `bptt.tensor.rewriting.sizes` know nothing that relates them: the rows of
two sequences cut from the same forward trace, a non-sequence and a state
row, or an int non-sequence passed for a size and the dimension it sizes.
A gradient step then keeps a `SumTo` after every product whose sizes it
cannot relate to the target's, and each splits a fused loop.

Every inner input has a size the outer graph describes:

=================  ===================================================
inner input        its shape at every step
=================  ===================================================
sequence row       ``seq.shape[1:]`` of the outer sequence
state tap          ``buffer.shape[1:]``: the rows of the outer initial
                   value (mit_mot: of the outer buffer); the loop
                   allocates its buffer from them and checks that each
                   step's output row has that shape before storing it
non-sequence       the outer value's shape; an int 0-d non-sequence's
                   value is the outer value
shared variable    nothing (the step may change its shape)
=================  ===================================================

`scan_step_shapes` keys the outer variables with the outer graph's size
facts and, in a copy of the step graph, makes equal the inner sizes whose
outer keys are equal (`sizes.size_facts(...).union`). It then runs the shape
and canonical rewrites on the step (``useless_sum_to`` and friends now see
equal sizes) and rebuilds the node when that changed the step. It runs after
the push-outs, which give the backward step most of its sequences, and after
`scan_inner`, which has already rewritten each step without these facts.

These facts hold at every step, and also for the zero-step row-shape program
(`Scan.zero_step_row_shape` evaluates the step's shapes on rows of the outer
shapes); like every size fact they assume a run without a shape error
(`sizes`). Not used: that a state's output row has its taps' shape. The loop
checks it, but with zero steps it is never checked, and the row-shape program
would then see a step rewritten on a false fact.

What it cannot remove: a SumTo over sizes that may really differ, such as
``h @ W`` with W of one column added to ``x @ U``, or a gate sliced from a product
whose width only the run-time shape gives. Where the sizes share a source (an
initial state ``zeros((B, W.shape[1]))``) the SumTo goes.
"""
from __future__ import annotations

from ...graph.rewriting import Fixpoint, GraphRewriter, InToOut, can_replace, record
from ...graph.traversal import toposort
from ...tensor.rewriting.sizes import shape_keys, size_facts, value_key
from ...tensor.type import TensorType
from ..op import Scan
from .inner import rewrite_inner_op


def seed_step_facts(outer_fgraph, node, step):
    """Record in the size facts of `step` (a FunctionGraph of ``node.op``'s inner graph,
    inputs and outputs in the op's order) the equal sizes `outer_fgraph` proves."""
    info = node.op.info
    facts = size_facts(step)
    names = {}      # root of an outer key -> the first inner key that names that size

    def same(outer_key, inner_key):
        if outer_key[0] == "const":
            facts.union(inner_key, outer_key)
        elif outer_key in names:
            facts.union(names[outer_key], inner_key)
        else:
            names[outer_key] = inner_key

    for kind, o, inner_ins, _, _ in info.entities:
        if kind in ("shared", "nit_sot"):
            continue
        outer = node.inputs[o]
        if not isinstance(outer.type, TensorType):
            continue
        keys = shape_keys(outer_fgraph, outer)
        rows = keys if kind == "non_seq" else keys[1:]
        for i in inner_ins:
            inner = step.inputs[i]
            if inner.ndim == len(rows):
                for ok, ik in zip(rows, shape_keys(step, inner)):
                    same(ok, ik)
        if kind == "non_seq" and outer.ndim == 0 and _is_int(outer):
            outer_facts = size_facts(outer_fgraph)
            same(outer_facts.find(value_key(outer, outer_facts)), ("value", step.inputs[inner_ins[0]]))


def _is_int(v):
    return v.dtype.startswith(("int", "uint"))


def _simplify(step):
    from ...tensor.rewriting import (canonical_rewriters, constant_folding, merge,
                                     shape_rewriters)
    walk = InToOut(shape_rewriters() + canonical_rewriters() + [constant_folding],
                   name="scan_step_shapes_walk")
    Fixpoint([walk, merge], name="scan_step_shapes_simplify").apply(step)


def step_with_outer_shapes(outer_fgraph, node):
    """A Scan op equal to ``node.op`` whose step was rewritten knowing the sizes the outer
    graph proves, or None when that changed nothing."""
    def pipeline(step):
        seed_step_facts(outer_fgraph, node, step)
        _simplify(step)

    return rewrite_inner_op(node.op, pipeline)


class ScanStepShapes(GraphRewriter):
    """Graph rewriter: rewrite every Scan's step with the sizes its outer inputs prove."""

    name = "scan_step_shapes"

    def apply(self, fgraph):
        changed = False
        for node in toposort(fgraph.outputs, blockers=fgraph.inputs):
            if not isinstance(node.op, Scan) or node not in fgraph.apply_nodes:
                continue
            op = step_with_outer_shapes(fgraph, node)
            if op is None:
                continue
            new = op.make_node(*node.inputs)
            pairs = list(zip(node.outputs, new.outputs))
            if not all(can_replace(old, out) and old.type == out.type for old, out in pairs):
                continue
            for old, out in pairs:
                fgraph.replace(old, out, reason=self.name)
            record(fgraph, self.name, node, self.name)
            changed = True
        return changed


scan_step_shapes = ScanStepShapes()
