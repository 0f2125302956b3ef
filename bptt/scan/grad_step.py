"""Stages 1-3 of the Scan gradient: which steps, which states, and one step's VJP.

`bptt.scan.grad` builds the backward loop from what this module gives it:
the window of forward steps to undo (`_window`), the states that carry a
cotangent (`_active_states`), and the step graph's vector-Jacobian product,
simplified with the shapes the loop guarantees (`_differentiate_step`,
`_simplify_step`). Nothing here knows the backward loop's layout.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..graph.basic import Variable
from ..graph.traversal import graph_inputs


def _is_float(v):
    return getattr(v.type, "dtype", None) in ("float32", "float64")


def _has_cotangent(g):
    from ..graph.gradient_types import is_disconnected

    return g is not None and not is_disconnected(g) and _is_float(g)


def _int64(k):
    from ..tensor.type import as_tensor_variable

    return as_tensor_variable(np.int64(k))


def _placeholder(type_, name):
    return type_.make_variable(name)



# -- stage 1: the window of steps -------------------------------------------------------
@dataclass
class _Window:
    """Which forward steps the backward loop undoes.

    ::

        forward steps   0 ......... start ........... E-1     E = executed steps
                                    |<---- B steps ---->|     B = E, or min(E, k)
        backward step s undoes forward step t = E-1-s         (truncate_gradient = k)
    """

    executed: Variable
    steps: Variable
    start: Variable
    truncated: bool


def _window(node):
    from ..tensor.math import minimum

    info = node.op.info
    executed = node.outputs[info.outer_out_n_steps] if info.as_while else node.inputs[0]
    k = info.truncate_gradient
    if k == -1:
        return _Window(executed, executed, _int64(0), False)
    steps = minimum(executed, _int64(k))
    return _Window(executed, steps, executed - steps, True)


# -- stage 2: which states carry a cotangent ----------------------------------------------
def _active_states(node, output_grads):
    """Forward states (indices into ``info.buffers``) whose cotangent may be nonzero.

    ::

        carrying = nit_sot inner outputs with an outer cotangent
        repeat:  state b becomes active when its outer output has a cotangent, or
                 one of its taps feeds an inner output in `carrying` (within a step);
                 an active state's inner outputs join `carrying`

    Returns (active state indices, carrying inner output indices).
    """
    op, info = node.op, node.op.info
    conn = op.inner_connection_pattern()
    carrying = {o for k, o in enumerate(info.inner_out_nit_sot)
                if _has_cotangent(output_grads[info.outer_out_nit_sot[k]])}
    active, changed = set(), True
    while changed:
        changed = False
        for s, b in enumerate(info.buffers):
            if s in active or not _is_float(node.outputs[b.outer_output]):
                continue
            fed = any(conn[i][o] for i in b.inner_inputs for o in carrying)
            if fed or _has_cotangent(output_grads[b.outer_output]):
                active.add(s)
                carrying.update(b.inner_outputs)
                changed = True
    return active, carrying


# -- stage 3: the step's vector-Jacobian product ------------------------------------------
@dataclass
class _Step:
    """The differentiated step, on its own copy of the step graph.

    ::

        inputs  x_i    copies of the forward inner inputs (same layout)
        outputs y_o    copies of the forward inner outputs (same layout)
        cotangent[o]   placeholder g_y for y_o (o in carrying)
        contrib[i]     (dy/dx_i)^T g_y, summed over o   (absent: disconnected)
        undefined[i]   why x_i has no gradient
    """

    inputs: list
    outputs: list
    cotangent: dict
    contrib: dict
    undefined: dict


def _differentiate_step(op, active, carrying):
    from ..grad.reverse import _sweep, _total

    info = op.info
    cotangent, seeds = {}, {}
    for o in sorted(carrying):
        y = op.inner_outputs[o]
        if not _is_float(y):
            continue
        g = _placeholder(y.type, f"g_{op.label_of_output(o)}")
        cotangent[o] = g
        seeds[y] = g if y not in seeds else seeds[y] + g
    taps = {i for s in active for i in info.buffers[s].inner_inputs}
    wanted = (set(info.inner_in_seqs) | taps | set(info.inner_in_shared)
              | set(info.inner_in_non_seqs))
    wrt = [v for i, v in enumerate(op.inner_inputs) if i in wanted and _is_float(v)]
    step = _Step(list(op.inner_inputs), list(op.inner_outputs), cotangent, {}, {})
    if not seeds or not wrt:
        return step
    store, undefined = _sweep(seeds, wrt, [])
    position = {v: i for i, v in enumerate(op.inner_inputs)}
    step.contrib = {position[v]: _total(store[v]) for v in wrt if v in store}
    # The sweep marks only the direct input of a rule without gradient; every inner
    # input upstream of it loses part of its gradient, so its gradient is undefined.
    for u, why in undefined.items():
        for v in graph_inputs([u]):
            if v in position and _is_float(v):
                step.undefined.setdefault(position[v], why)
    return _simplify_step(step, info)


def _simplify_step(step, info):
    """Rewrite a copy of the step graph and its derivative with the tensor rewrites.

    ::

        before: contrib = SumTo(g_a, *shape(a)) ... with a = W @ h + x, y = tanh(a)
        after:  contrib = g_a ...                (shapes proven equal: y has a's shape)

    Inner graphs are not rewritten at compile time, and the derivative is
    full of run-time unbroadcasts (`SumTo`) whose target sizes (``Shape_i`` of
    forward values) would make the backward step recompute forward values
    just to read their shapes. The forward outputs ride along so later stages
    still find them. The rewrites may use two shape facts of the loop that the
    graph cannot show: a cotangent has the shape of its output, and a state's
    output has its taps' shape (the loop checks it at every step).
    """
    keys, cots = list(step.contrib), list(step.cotangent)
    n_in, n_c = len(step.inputs), len(keys)
    same = [(step.cotangent[o], step.outputs[o]) for o in cots]
    same += [(step.outputs[o], step.inputs[i]) for b in info.buffers
             for o in b.inner_outputs for i in b.inner_inputs]
    ins, outs = _simplify(step.inputs + [step.cotangent[o] for o in cots],
                          [step.contrib[k] for k in keys] + step.outputs, clone=True,
                          same_shapes=same)
    return _Step(ins[:n_in], outs[n_c:], dict(zip(cots, ins[n_in:])),
                 dict(zip(keys, outs[:n_c])), step.undefined)


def _simplify(inputs, outputs, clone, same_shapes=()):
    """(inputs, outputs) of the graph rewritten by the shape and canonical rewrites.

    With `clone` the graph is copied first; without, it is rewritten in place
    (only for nodes this module created). `same_shapes` lists pairs of
    variables among `inputs` and `outputs` known to have equal run-time shapes.
    """
    from ..graph.fg import FunctionGraph
    from ..graph.rewriting import Fixpoint, InToOut
    from ..tensor.rewriting import canonical_rewriters, constant_folding, merge, shape_rewriters
    from ..tensor.rewriting.sizes import assume_same_shape

    fg = FunctionGraph(inputs, outputs, clone=clone)
    where = {v: k for k, v in enumerate(list(inputs) + list(outputs))}
    ends = list(fg.inputs) + list(fg.outputs)
    for a, b in same_shapes:
        assume_same_shape(fg, ends[where[a]], ends[where[b]])
    walk = InToOut(shape_rewriters() + canonical_rewriters() + [constant_folding],
                   name="scan_grad_walk")
    Fixpoint([walk, merge], name="scan_grad_simplify").apply(fg)
    return list(fg.inputs), list(fg.outputs)


def _shift(v, k):
    """The step index `v` moved by the constant `k` (no node when `k` is 0)."""
    return v if k == 0 else v + k
