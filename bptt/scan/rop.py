"""Forward mode through a Scan: one scan carrying the states and their tangents.

``Scan.R_op`` calls `scan_rop`. The Jacobian-vector product of a loop is a
loop: each state carries its tangent as a second state of the same kind and
taps, each sequence and non-sequence with an eval point gets a tangent
sequence / non-sequence, and the step computes its outputs and, by the
forward sweep (`bptt.grad.forward`), their tangents::

    forward scan                      tangent scan (same n_steps, same until)
    ------------                      ---------------------------------------
    sequences  x                      x,  then dx                (dx: eval point)
    state      h  (taps T, init h0)   h,  then dh (taps T, init dh0 or zeros)
    nit_sot    y                      y,  then dy
    shared     s                      s                          (no tangent)
    non-seqs   w                      w,  then dw
    step       y = f(x, h, w)         y, dy = f(...), R{f}(... ; dx, dh, dw)

A state carries a tangent when its initial value has an eval point or its
step output depends on something that does (a fixed point over the loop).
The forward values are recomputed by the tangent scan; only its tangent
outputs are used.

Reference: Pearlmutter (1994), the R{.} operator; JAX ``lax.scan`` JVP (the
tangent loop carries primal and tangent together).
"""
from __future__ import annotations


def _is_float(v):
    return getattr(v.type, "dtype", None) in ("float32", "float64")


def scan_rop(op, inputs, eval_points):
    """One tangent per outer output of ``op(*inputs)`` for the input tangents `eval_points`."""
    from .args import ScanArgs

    node = op.make_node(*inputs)
    info = op.info
    evs = {i: e for i, e in enumerate(eval_points) if e is not None and _is_float(inputs[i])}
    carrying = _tangent_states(op, evs)
    _check_shared(op, evs, carrying)
    args = ScanArgs.from_node(node)
    tangent = _tangent_inner_inputs(op, evs, carrying)
    step_tangents = _step_tangents(op, tangent)
    where = {}
    _add_sequences_and_non_sequences(args, op, evs, tangent)
    _add_states(args, op, inputs, evs, carrying, tangent, step_tangents, where)
    _add_nit_sots(args, op, inputs, step_tangents, where)
    new = args.make_node()
    new_info = new.op.info
    results = [None] * info.n_outer_outputs
    for j, (kind, k) in where.items():
        results[j] = new.outputs[getattr(new_info, f"outer_out_{kind}")[k]]
    return results


def _tangent_states(op, evs):
    """Indices into ``info.buffers`` of the states whose tangent may be nonzero.

    ::

        with tangent: inner inputs of sequences / non-sequences with an eval point
        repeat: a float state gets a tangent if its initial buffer has an eval point,
                or one of its inner outputs depends on an inner input with a tangent;
                its taps then have tangents too
    """
    info = op.info
    conn = op.inner_connection_pattern()
    moving = {i for ent in info.entities if ent[0] in ("seq", "non_seq") and ent[1] in evs
              for i in ent[2]}
    carrying, changed = set(), True
    while changed:
        changed = False
        for s, b in enumerate(info.buffers):
            if s in carrying or not _is_float(op.inner_outputs[b.inner_outputs[0]]):
                continue
            fed = any(conn[i][o] for i in moving for o in b.inner_outputs)
            if b.outer_input in evs or fed:
                carrying.add(s)
                moving.update(b.inner_inputs)
                changed = True
    return carrying


def _check_shared(op, evs, carrying):
    """A tangent reaching a float shared state cannot be carried (its values are not kept)."""
    info = op.info
    conn = op.inner_connection_pattern()
    moving = {i for ent in info.entities if ent[0] in ("seq", "non_seq") and ent[1] in evs
              for i in ent[2]}
    moving |= {i for s in carrying for i in info.buffers[s].inner_inputs}
    for k, o in enumerate(info.inner_out_shared):
        if not _is_float(op.inner_outputs[o]):
            continue
        if info.outer_in_shared[k] in evs or any(conn[i][o] for i in moving):
            raise NotImplementedError(
                f"Rop: {info.label} updates a float shared variable (outer input "
                f"{info.outer_in_shared[k]}) that depends on the tangent direction; pass the "
                f"state through outputs_info to differentiate through it")


def _tangent_inner_inputs(op, evs, carrying):
    """A placeholder tangent for every inner input that moves (inner input index -> variable)."""
    info = op.info
    moving = set()
    for ent in info.entities:
        if ent[0] in ("seq", "non_seq") and ent[1] in evs:
            moving.update(ent[2])
    for s in carrying:
        moving.update(info.buffers[s].inner_inputs)
    return {i: op.inner_inputs[i].type.make_variable(f"d{op.inner_inputs[i]}")
            for i in sorted(moving)}


def _step_tangents(op, tangent):
    """Tangents of the inner outputs (inner output index -> variable or None).

    ::

        inner inputs x_i with tangents dx_i  ->  forward sweep  ->  dy_o = R{y_o}
    """
    from ..grad.forward import _forward_sweep

    wrt = [op.inner_inputs[i] for i in tangent]
    found = _forward_sweep(list(op.inner_outputs), wrt, list(tangent.values()))
    out = {}
    for o, y in enumerate(op.inner_outputs):
        t = found.get(y)
        if t is not None and t.type.dtype != y.type.dtype:
            from ..tensor.basic import cast

            t = cast(t, y.type.dtype)
        out[o] = t
    return out


def _add_sequences_and_non_sequences(args, op, evs, tangent):
    """Tangent sequences and non-sequences after the originals.

    ::

        seqs     x_0 .. x_n   ->  x_0 .. x_n, dx_k (for each x_k with an eval point)
        non_seqs w_0 .. w_m   ->  w_0 .. w_m, dw_k
    """
    info = op.info
    for k, i in enumerate(info.outer_in_seqs):
        if i in evs:
            args.outer_in_seqs.append(evs[i])
            args.inner_in_seqs.append(tangent[info.inner_in_seqs[k]])
            args.seq_origins.append(None)
    for k, i in enumerate(info.outer_in_non_seqs):
        if i in evs:
            args.outer_in_non_seqs.append(evs[i])
            args.inner_in_non_seqs.append(tangent[info.inner_in_non_seqs[k]])


def _add_states(args, op, inputs, evs, carrying, tangent, step_tangents, where):
    """A tangent state of the same kind and taps after the originals, per carrying state.

    ::

        mit_mot / mit_sot / sit_sot  h (taps T)  ->  h, dh (taps T, initial dh0 or zeros)
        inner:  dh's taps are the tangents of h's taps; dh's outputs R{h's outputs}
    """
    from ..tensor.basic import zeros_like

    info = op.info
    for s in sorted(carrying):
        b = info.buffers[s]
        init = evs.get(b.outer_input)
        init = init if init is not None else zeros_like(inputs[b.outer_input])
        ins = [tangent[i] for i in b.inner_inputs]
        outs = []
        for o in b.inner_outputs:
            t = step_tangents[o]
            outs.append(t if t is not None else zeros_like(op.inner_outputs[o]))
        args.add_buffer(info, b, init, None, ins, outs)
        where[b.outer_output] = (b.kind, len(getattr(args, f"outer_in_{b.kind}")) - 1)


def _add_nit_sots(args, op, inputs, step_tangents, where):
    """A tangent nit_sot (same length) after the originals, per nit_sot with a tangent."""
    info = op.info
    for k, o in enumerate(info.inner_out_nit_sot):
        t = step_tangents[o]
        if t is None:
            continue
        args.outer_in_nit_sot.append(inputs[info.outer_in_nit_sot[k]])
        args.inner_out_nit_sot.append(t)
        args.outer_out_nit_sot.append(None)
        where[info.outer_out_nit_sot[k]] = ("nit_sot", len(args.outer_in_nit_sot) - 1)
