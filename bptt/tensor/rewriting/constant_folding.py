"""Constant folding: compute at compile time the nodes whose inputs are all constants.

The node's own `perform` computes the value, so folding can never disagree
with the PY mode. Not folded:

* ops that are stateful (``op.stateful``, e.g. random draws: folding would
  freeze one draw) or that read or produce non-tensor values (a generator);
* nodes with a shared variable among their inputs (a shared variable is
  never a `Constant`, so the all-constant test already excludes them);
* results larger than `MAX_ELEMENTS`, which would bloat the compiled code;
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


def is_stateful(node):
    """Whether running `node` has effects beyond its outputs (random draws, in-place updates)."""
    op = node.op
    if getattr(op, "stateful", False) or getattr(op, "destroy_map", None):
        return True
    return not all(isinstance(v.type, TensorType) for v in (*node.inputs, *node.outputs))


def _foldable(node):
    if not all(isinstance(v, Constant) for v in node.inputs) or is_stateful(node):
        return False
    for out in node.outputs:
        if None not in out.type.shape and np.prod(out.type.shape, dtype=np.int64) > MAX_ELEMENTS:
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
