"""Stage 10 of the scan gradient (`grad.py`): the backward loop's results as
the gradients of the forward Scan's outer inputs, in the forward layout.

A sequence's gradient is its backward nit_sot reversed into the executed
rows; a state's initial buffer gets the rows of its reversed mit_mot result,
with the rows the forward loop overwrote before reading zeroed; a
non-sequence gets the last row of its running-sum sit_sot. Inputs the cost
cannot reach are disconnected, and the ones without a gradient (integer
inputs, the step count) undefined with the reason.
"""
from __future__ import annotations

from .grad_step import _has_cotangent, _shift
from .known_zero import leading_rows_zero


def _outer_gradients(node, output_grads, w, step, bw, results):
    """One gradient per forward outer input, in the forward layout.

    ::

        n_steps, nit_sot lengths      disconnected
        sequence x_k                  zeros, rows [start, E) <- g_x_k[::-1]
        state initial buffer          rows of the reversed mit_mot result (see below);
                                      disconnected when nothing reads it
        shared initial value          disconnected (`grad_shared` turned the
                                      ones a cotangent reaches into sit_sots)
        non-sequence w                last row of its sit_sot
    """
    from ..graph.gradient_types import disconnected_grad, undefined_grad
    from ..tensor.basic import zeros_like
    from ..tensor.subtensor import set_subtensor

    info = node.op.info
    grads = [disconnected_grad() for _ in node.inputs]
    undefined = _undefined_inputs(node, output_grads, step)
    if bw is not None:
        a = bw.args
        for (kind, key), j in bw.outputs.items():
            if kind == "seq":
                i = info.outer_in_seqs[key]
                rows = results[_backward_out(a, "nit_sot", j)][::-1]
                x = node.inputs[i]
                grads[i] = set_subtensor(zeros_like(x)[w.start:w.executed], rows)
            elif kind == "non_seq":
                grads[info.outer_in_non_seqs[key]] = results[_backward_out(a, "sit_sot", j)][-1]
            else:
                b = info.buffers[key]
                if _initial_state_unread(b, output_grads, step):
                    continue
                res = results[_backward_out(a, "mit_mot", j)][::-1]
                grads[b.outer_input] = _initial_state_gradient(node, b, output_grads, w, res)
    for i, why in undefined.items():
        grads[i] = undefined_grad(why)
    return grads


def _backward_out(args, kind, j):
    """Outer output index of entry `j` of `kind` in the backward node built from `args`."""
    info = args.info
    return getattr(info, f"outer_out_{kind}")[j]


def _initial_state_unread(b, output_grads, step):
    """Whether state `b`'s initial value reaches nothing the cost reads (disconnected).

    True when no step reads the state (no contribution to its taps) and the
    cotangent of its initial rows is provably zero, as when the user reads
    only the rows `scan` returns. A mit_mot's outer output is its whole
    buffer, initial rows included, so it is never unread this way.
    """
    if b.kind == "mit_mot" or any(i in step.contrib for i in b.inner_inputs):
        return False
    return leading_rows_zero(output_grads[b.outer_output], b.extent)


def _initial_state_gradient(node, b, output_grads, w, rows):
    """The gradient of state `b`'s initial buffer from its backward mit_mot result.

    ::

        rows = reversed mit_mot result = gradient of forward buffer rows [start, E+X)
        mit_sot / sit_sot (depth X): initial rows [0, X) take rows [0, X) of
            G[:start] ++ rows      (rows before the window keep their direct
                                    cotangent); rows of the initial buffer past X: 0
        mit_mot: G with rows [start, E+X) replaced; truncated loops also zero the
            rows that steps before the window overwrote
    """
    from ..tensor.basic import concatenate, zeros_like
    from ..tensor.subtensor import set_subtensor

    G = output_grads[b.outer_output]
    out, init = node.outputs[b.outer_output], node.inputs[b.outer_input]
    full = G if _has_cotangent(G) else zeros_like(out)
    if b.kind == "mit_mot":
        grad = set_subtensor(full[w.start:_shift(w.executed, b.extent)], rows)
        return _zero_overwritten_before(node, b, w, grad) if w.truncated else grad
    head = rows if not w.truncated else concatenate([full[:w.start], rows])
    return set_subtensor(zeros_like(init)[:b.extent], head[:b.extent])


def _zero_overwritten_before(node, b, w, grad):
    """Zero the rows of a mit_mot buffer that steps before a truncation window wrote.

    Out-tap k of steps 0..start-1 writes rows [k-lo, start+k-lo): their initial
    values never reach the output, so their gradient is zero.
    """
    from ..tensor.basic import zeros_like
    from ..tensor.subtensor import set_subtensor

    info = node.op.info
    lo = info.mit_mot_bounds(b.index)[0]
    for k in info.mit_mot_out_slices[b.index]:
        region = grad[k - lo:w.start + (k - lo)]
        grad = set_subtensor(region, zeros_like(region))
    return grad


def _undefined_inputs(node, output_grads, step):
    """Outer inputs whose gradient does not exist: {index: reason}.

    An inner input with an undefined contribution makes its outer input
    undefined; one that is a state or shared tap also makes every input
    connected to that state undefined (the gradient would flow through it).
    A cotangent reaching a shared state (through the step or from outside)
    does the same, since the loop does not keep the state's per-step values;
    `grad_shared` rebuilds every node where that would happen for a float
    state, so this guards the layout `scan_grad` is given directly.
    """
    op, info = node.op, node.op.info
    maps = info.var_mappings
    pattern = op.connection_pattern(node)
    out = {}

    def poison(outer_out, why):
        for i in range(info.n_outer_inputs):
            if pattern[i][outer_out]:
                out.setdefault(i, why)

    for i, why in step.undefined.items():
        out.setdefault(maps["outer_inp_from_inner_inp"][i], why)
        j = maps["outer_out_from_inner_inp"][i]
        if j >= 0:
            poison(j, why)
    for k, i in enumerate(info.inner_in_shared):
        j = info.outer_out_shared[k]
        if i in step.contrib or _has_cotangent(output_grads[j]):
            why = (f"{info.label} updates a shared variable (outer input "
                   f"{info.outer_in_shared[k]}) at every step and the gradient would flow "
                   f"through its per-step values, which the loop does not keep; pass the "
                   f"state through outputs_info instead")
            out.setdefault(info.outer_in_shared[k], why)
            poison(j, why)
    return out
