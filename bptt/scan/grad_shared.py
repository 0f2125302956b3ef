"""The gradient through shared variables a scan updates: they are differentiated as states.

A shared variable the step updates (``{s: f(s, x_t, ...)}``) is a sit_sot
whose rows the loop does not keep: the Scan returns only its value after the
last step. When a cotangent reaches one (the cost reads that final value, or
a value computed from the shared variable inside the step), the gradient is
the one of the same loop with the shared variable as a sit_sot::

    forward node                       differentiated node
    shared   s (outer input)     ->    sit_sot, initial buffer s[None]
             s_t / update (inner)      the same inner input / output
             final value (output)      buffer[-1]  (the buffer keeps 1 + E rows)

    cotangent of the final value  ->   zeros like the buffer, last row = it
    gradient of s[None]           ->   its row 0: the gradient of s

The differentiated node repeats the forward computation to keep the per-step
values (random draws included: it starts from the same generator states), as
the augmented scan of `grad._record_values` does. Shared variables no
cotangent reaches, and non-float ones (random generators), stay shared.
"""
from __future__ import annotations


def shared_states_carrying(node, output_grads):
    """Indices (into the shared outputs) of float shared states a cotangent reaches."""
    from .grad_step import _has_cotangent, _is_float

    info = node.op.info
    pattern = node.op.connection_pattern(node)
    with_cotangent = [j for j, g in enumerate(output_grads) if _has_cotangent(g)]
    out = []
    for k, (i, j) in enumerate(zip(info.outer_in_shared, info.outer_out_shared)):
        if _is_float(node.outputs[j]) and any(pattern[i][o] for o in with_cotangent):
            out.append(k)
    return out


def grad_with_shared_as_states(node, output_grads, carrying, differentiate):
    """One gradient per outer input of `node`, the shared states `carrying` made sit_sots.

    `differentiate(op, inputs, outputs, output_grads)` is the scan gradient
    (`grad.scan_grad`), called on the rebuilt node.
    """
    from ..tensor.basic import zeros_like
    from ..tensor.shape import shape_padleft
    from ..tensor.subtensor import set_subtensor
    from .args import ScanArgs
    from .grad_step import _has_cotangent

    info = node.op.info
    args = ScanArgs.from_node(node)
    old_in = _outer_input_order(info, carrying)
    old_out = _outer_output_order(info, carrying)
    moved = [(args.outer_in_shared[k], args.inner_in_shared[k], args.inner_out_shared[k])
             for k in carrying]
    for k in sorted(carrying, reverse=True):
        args.remove("shared", k)
    for outer, inner_in, inner_out in moved:
        args.outer_in_sit_sot.append(shape_padleft(outer))
        args.inner_in_sit_sot.append(inner_in)
        args.inner_out_sit_sot.append(inner_out)
        args.outer_out_sit_sot.append(None)
    new = args.make_node()
    new_grads = []
    for p, out in enumerate(new.outputs):
        j = old_out[p]
        g = output_grads[j] if j is not None else None
        if j in _converted_outputs(info, carrying) and _has_cotangent(g):
            g = set_subtensor(zeros_like(out)[-1], g)
        new_grads.append(g)
    grads = differentiate(new.op, list(new.inputs), list(new.outputs), new_grads)
    result = [None] * len(node.inputs)
    converted = set(_converted_inputs(info, carrying))
    for p, g in enumerate(grads):
        i = old_in[p]
        result[i] = g[0] if i in converted and _has_cotangent(g) else g
    return result


def _converted_inputs(info, carrying):
    return [info.outer_in_shared[k] for k in carrying]


def _converted_outputs(info, carrying):
    return [info.outer_out_shared[k] for k in carrying]


def _outer_input_order(info, carrying):
    """Old outer input index at each position of the rebuilt node's outer inputs."""
    kept = [i for k, i in enumerate(info.outer_in_shared) if k not in carrying]
    return ([0] + list(info.outer_in_seqs) + list(info.outer_in_mit_mot)
            + list(info.outer_in_mit_sot) + list(info.outer_in_sit_sot)
            + _converted_inputs(info, carrying) + kept + list(info.outer_in_nit_sot)
            + list(info.outer_in_non_seqs))


def _outer_output_order(info, carrying):
    """Old outer output index at each position of the rebuilt node's outer outputs."""
    kept = [j for k, j in enumerate(info.outer_out_shared) if k not in carrying]
    n_steps = [info.outer_out_n_steps] if info.as_while else []
    return (list(info.outer_out_mit_mot) + list(info.outer_out_mit_sot)
            + list(info.outer_out_sit_sot) + _converted_outputs(info, carrying)
            + list(info.outer_out_nit_sot) + kept + n_steps)
