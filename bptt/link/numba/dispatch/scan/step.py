"""One step of the loop: the loop function's parameters, each inner input's source
(sequence rows, buffer taps, shared values, non-sequences), the step call, and where each
output goes (each feature's writes)."""
from __future__ import annotations

from . import buffers, nit_sot, products, sums


def params(info):
    """The loop function's parameters, in the Scan node's input order."""
    names = ["n"]
    names += [f"seq{k}" for k in range(info.n_seqs)]
    names += [f"init{k}" for k in range(info.n_states)]
    names += [f"shared{k}" for k in range(info.n_shared_outs)]
    names += [f"nitlen{k}" for k in range(info.n_nit_sot)]
    names += [f"ns{k}" for k in range(info.n_non_seqs)]
    return names


def step_arg_list(op, seq_row, buffer_row, shared, product_row=None):
    """Source of each inner input, in inner order, from per-category templates
    (`product_row`: a sequence read as ``seq[t] @ W``, `seq_products`; {w}: W's index)."""
    info = op.info
    args = [None] * info.n_inner_inputs
    for k, i in enumerate(info.inner_in_seqs):
        e = op.plan.seq_product(k)
        args[i] = seq_row.format(k=k) if e is None else product_row.format(k=k, w=e[0])
    for s, b in enumerate(info.buffers):
        for i, off in zip(b.inner_inputs, b.in_offsets):
            args[i] = buffer_row.format(s=s, off=off, row=buffers.buffer_row(op, s, off))
    for k, i in enumerate(info.inner_in_shared):
        args[i] = shared.format(k=k)
    for k, i in enumerate(info.inner_in_non_seqs):
        args[i] = f"ns{k}"
    return args


def emit_step(w, op, step_fn, depth, dims):
    """Step t: the step function called on its inputs, its outputs stored."""
    info = op.info
    products.emit_step(w, op, depth)
    args = ", ".join(step_arg_list(op, "seq{k}[t]", "buf{s}[{row}]", "state{k}",
                                   "pz{k}[pr{k}]"))
    w(depth, f"out = {step_fn}({args})")
    buffers.emit_writes(w, op, depth)
    sums.emit_step(w, op, depth, dims)
    nit_sot.emit_writes(w, op, depth, dims)
    for k, o in enumerate(info.inner_out_shared):   # a shared variable's update
        w(depth, f"state{k} = out[{o}]")
