"""Cloning graphs and substituting variables in them."""
from __future__ import annotations

from .basic import Constant
from .traversal import toposort


def clone_get_equiv(inputs, outputs, copy_inputs=True, memo=None):
    """Clone the subgraph between `inputs` and `outputs`.

    Returns the map from every old variable and node to its copy. Constants
    are shared (they are immutable); inputs are copied unless `copy_inputs`
    is False; variables already in `memo` are used as given.
    """
    equiv = {} if memo is None else memo
    for v in inputs:
        if v not in equiv:
            equiv[v] = v.clone() if copy_inputs else v
    for node in toposort(outputs, blockers=inputs):
        new_inputs = []
        for v in node.inputs:
            if v not in equiv:
                equiv[v] = v if (isinstance(v, Constant) or v.owner is None) else v
            new_inputs.append(equiv[v])
        new_node = node.clone_with_new_inputs(new_inputs, strict=False) \
            if any(a.type != b.type for a, b in zip(node.inputs, new_inputs)) \
            else node.clone_with_new_inputs(new_inputs)
        equiv[node] = new_node
        for old, new in zip(node.outputs, new_node.outputs):
            new.name = old.name
            equiv[old] = new
    for v in outputs:
        equiv.setdefault(v, v)
    return equiv


def clone(outputs, inputs=None, copy_inputs=True):
    """Copies of `outputs` computed from copies (or, without copy_inputs, the originals) of `inputs`."""
    from .traversal import graph_inputs

    inputs = graph_inputs(outputs) if inputs is None else list(inputs)
    equiv = clone_get_equiv(inputs, outputs, copy_inputs=copy_inputs)
    return [equiv[v] for v in outputs]


def clone_replace(outputs, replace=None):
    """Copies of `outputs` where each key of `replace` is computed by its value.

    Parameters
    ----------
    outputs : Variable or list of Variable
    replace : dict or list of pairs
        Old variable -> new variable. The new variable must have the old
        one's type unless the nodes above can re-derive their types.
    """
    single = not isinstance(outputs, (list, tuple))
    outs = [outputs] if single else list(outputs)
    pairs = list(replace.items()) if isinstance(replace, dict) else list(replace or [])
    memo = {old: new for old, new in pairs}
    equiv = clone_get_equiv(list(memo), outs, copy_inputs=False, memo=memo)
    result = [equiv[v] for v in outs]
    return result[0] if single else result
