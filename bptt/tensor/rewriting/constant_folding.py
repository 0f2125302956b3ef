"""Constant folding: compute at compile time the nodes whose inputs are all constants.

The node's own `perform` computes the value, so folding can never disagree
with the PY mode. Not folded:

* ops that are stateful (``op.stateful``, e.g. random draws: folding would
  freeze one draw) or that read or produce non-tensor values (a generator);
* nodes with a shared variable among their inputs (a shared variable is
  never a `Constant`, so the all-constant test already excludes them);
* results larger than `MAX_ELEMENTS`, which would bloat the compiled code;
* nodes whose work is not bounded by `MAX_WORK` elements: an op with an
  inner graph (a Scan) says how much it computes with ``work_bound(node)``,
  and is folded only when that bound is known (constant ``n_steps``, static
  shapes in the step) and small, so a build never runs a long loop;
* nodes whose `perform` raises: the error is left for run time, where it
  names the call that caused it.

A folded graph output is safe to return: both linkers hand the caller
arrays that share memory with no constant.
"""
from __future__ import annotations

import numpy as np

from ...graph.basic import Constant
from ...graph.rewriting import node_rewriter
from ..type import TensorConstant, TensorType

#: Results with more elements than this stay computed at run time.
MAX_ELEMENTS = 10_000
#: Elements a folded node may compute in all (a loop: summed over its steps).
MAX_WORK = 1_000_000
#: What one run of a node's `perform` counts for at least, in elements: a Python call
#: costs as much as hundreds of elements' work, so a folded loop runs at most
#: MAX_WORK / NODE_COST = 2000 nodes.
NODE_COST = 500


def is_stateful(node):
    """Whether running `node` has effects beyond its outputs (random draws, in-place updates)."""
    op = node.op
    if getattr(op, "stateful", False) or getattr(op, "destroy_map", None):
        return True
    return not all(isinstance(v.type, TensorType) for v in (*node.inputs, *node.outputs))


def work_bound(node):
    """An upper bound on the elements evaluating `node` computes, or None if unknown.

    An op with an inner graph provides ``op.work_bound(node)``; any other
    node computes its outputs, whose sizes its static shapes give, and
    counts for at least `NODE_COST`.
    """
    own = getattr(node.op, "work_bound", None)
    if own is not None:
        return own(node)
    total = NODE_COST
    for out in node.outputs:
        shape = getattr(out.type, "shape", None)
        if shape is None or None in shape:
            return None
        total += _size(shape)
    return total


def _size(shape):
    n = 1
    for s in shape:
        n *= int(s)   # Python ints: a product of large sizes must not wrap around
    return n


def _foldable(node):
    if not all(isinstance(v, Constant) for v in node.inputs) or is_stateful(node):
        return False
    if getattr(node.op, "work_bound", None) is not None:
        bound = work_bound(node)
        return bound is not None and bound <= MAX_WORK
    for out in node.outputs:
        if None not in out.type.shape and _size(out.type.shape) > MAX_ELEMENTS:
            return False
    return True


@node_rewriter(None)
def constant_folding(fgraph, node):
    """A node of constants -> the constants `perform` computes."""
    if not _foldable(node):
        return None
    storage = [[None] for _ in node.outputs]
    try:
        with np.errstate(all="ignore"):
            node.op.perform(node, [c.data for c in node.inputs], storage)
    except Exception:   # noqa: BLE001  (left for run time; see the module docstring)
        return None
    values = [np.asarray(cell[0]) for cell in storage]
    results = []
    for out, value in zip(node.outputs, values):
        if value.size > MAX_ELEMENTS or value.dtype.name != out.type.dtype \
                or value.ndim != out.type.ndim:
            return None
        value = np.array(value, copy=True, order="C")
        results.append(TensorConstant(TensorType(value.dtype, value.shape), value))
    return results
