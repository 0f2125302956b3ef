"""Elementwise fusion: a connected group of Elemwise nodes becomes one ``Elemwise(Composite)``.

The numba lowering turns every Elemwise into one loop that allocates its
output; fusing ``tanh(a * b + c)`` into one node means one loop, one
allocation and no temporaries.

Grouping, from the outputs back (reverse topological order): an ungrouped
Elemwise node with an output of ndim >= 1 starts a group (its *root*); the
producer ``p`` of an input of a group node joins the group when

* ``p`` is an Elemwise node not in another group;
* every client of ``p``'s output is in the group and it is not a graph output:
  a value read elsewhere would have to be stored anyway, and fusing it into
  several groups would compute it several times. Nothing is recomputed;
* ``p``'s output has the root's ndim and the same static size-1 dimensions,
  so the fused loop does the work of ``p`` once per element of ``p``: a
  vector op broadcast over a matrix stays a separate (cheaper) loop.

A group is convex (no path leaves it and comes back), because only the root
has clients outside. Groups of one node are left alone; 0-d graphs are not
fused (scalars have no temporaries to save). Sums of terms (``acc + (dot +
dot)``) are what the scan push-outs read, but fusion runs after them, on step
graphs too (`compile/passes.py`), so sums fuse like anything else: the
LSTM's recomputed pre-activations ``xW + hU + b`` are one loop over the T x B
x 4H rows, not two with a temporary. The composite records every
dtype of the nodes it replaces (`Composite.from_graph`), so values and dtypes
are unchanged.
"""
from __future__ import annotations

from ...graph.rewriting import can_replace, graph_pass, replace_checked
from ...graph.verify import checked_toposort
from ..composite import Composite
from ..elemwise import Elemwise


def _pattern(var):
    return tuple(s == 1 for s in var.type.shape)


def _is_elemwise(node):
    return node is not None and isinstance(node.op, Elemwise)


def fusion_group(fgraph, root, taken=frozenset()):
    """The set of nodes fused with `root` (see the module docstring)."""
    pattern = _pattern(root.outputs[0])
    outputs = set(fgraph.outputs)
    group, stack = {root}, [root]
    while stack:
        for var in stack.pop().inputs:
            p = var.owner
            if (not _is_elemwise(p) or p in group or p in taken or var in outputs
                    or _pattern(var) != pattern
                    or not all(c in group for c, _ in fgraph.clients.get(var, ()))):
                continue
            group.add(p)
            stack.append(p)
    return group


def _external_inputs(nodes):
    """Inputs of `nodes` (topologically sorted) read from outside them, first use first."""
    inside = {o for n in nodes for o in n.outputs}
    order = []
    for node in nodes:
        for v in node.inputs:
            if v not in inside and v not in order:
                order.append(v)
    return order


def fused_node_output(nodes):
    """The output of one ``Elemwise(Composite)`` computing what `nodes` (topologically
    sorted, the last one the root) compute."""
    inputs = _external_inputs(nodes)
    comp = Composite.from_graph(inputs, nodes[-1].outputs[0])
    return Elemwise(comp)(*inputs)


@graph_pass()
def fuse_elemwise(fgraph):
    """Fuse groups of Elemwise nodes into ``Elemwise(Composite)``; True if any was fused."""
    order = checked_toposort(fgraph.outputs, blockers=fgraph.inputs)
    position = {n: k for k, n in enumerate(order)}
    taken, changed = set(), False
    for root in reversed(order):
        if root in taken or not _is_elemwise(root) or root.outputs[0].ndim == 0:
            continue
        group = fusion_group(fgraph, root, taken)
        taken |= group
        if len(group) < 2:
            continue
        old = root.outputs[0]
        new = fused_node_output(sorted(group, key=position.__getitem__))
        if can_replace(old, new):
            changed |= replace_checked(fgraph, old, new, "fuse_elemwise", root)
    return changed
