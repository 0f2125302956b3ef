"""The reference loop of the `Scan` op (`Scan.perform`, PY mode): Theano's semantics,
PyTensor's structure.

`perform` checks n_steps against the sequences and the buffers against the taps before
the first step, allocates every output once (where the op's `StoragePlan` puts its rows:
a sequence's rows for a nit_sot home, the initial value's memory for a state home),
runs the inner graph with the op's `PerformProgram` at each step, writes the step's
outputs in place, and with ``as_while`` stops after the step whose condition is true,
trimming the outputs to the executed steps. Every position comes from `ScanInfo`; the
layout, with a diagram, is in ``bptt/scan/info.py`` and docs/scan-internals.md.
"""
from __future__ import annotations

import time

import numpy as np

from .plan import ROW_SUM
from .step_errors import STEP_ERRORS, check_time_budget, step_error


def perform(op, inputs, output_storage):
    """Run `op`'s loop on `inputs` and store its outputs (`Scan.perform`)."""
    info = op.info
    n = int(inputs[0])
    op.check_before_loop(n, inputs)
    bufs = [_alloc_buffer(op, s, inputs[b.outer_input], n, _held_seq(op, s, inputs))
            for s, b in enumerate(info.buffers)]
    lengths = [min(int(inputs[i]), n) for i in info.outer_in_nit_sot]
    nits = [None] * info.n_nit_sot
    shared = [inputs[i] for i in info.outer_in_shared]
    start = time.perf_counter()
    executed = _loop(op, inputs, n, bufs, nits, lengths, shared)
    if op.profile is not None:
        op.profile.record(executed, time.perf_counter() - start)
    outs = []
    for b, buf in zip(info.buffers, bufs):
        outs.append(buf if b.kind == "mit_mot" else _in_time_order(buf, b.extent + executed))
    for k in range(info.n_nit_sot):
        outs.append(_finish_nit(op, k, nits[k], lengths[k], executed, inputs))
    outs += [_unaliased(v, bufs) for v in shared]
    if info.as_while:
        outs.append(np.asarray(executed, dtype="int64"))
    for cell, value in zip(output_storage, outs):
        cell[0] = value


def _loop(op, inputs, n, bufs, nits, lengths, shared):
    """Run up to `n` steps, writing into `bufs`, `nits` and `shared`; return the steps run."""
    info, program = op.info, op.program
    args = [None] * info.n_inner_inputs
    for i, j in zip(info.inner_in_non_seqs, info.outer_in_non_seqs):
        args[i] = inputs[j]
    factor = {k: inputs[info.outer_in_non_seqs[wk]] for k, wk, _ in op.plan.product_seqs}
    seqs = [(i, inputs[j], factor.get(k))
            for k, (i, j) in enumerate(zip(info.inner_in_seqs, info.outer_in_seqs))]
    # (buffer, state, whether it is a ring (`buffer_rows`): row r in slot r % its length)
    states = [(b, buf, op.plan.buffer_ring(s) is not None)
              for s, (b, buf) in enumerate(zip(info.buffers, bufs))]
    for t in range(n):
        for i, seq, w in seqs:
            # `seq_products`: one product per step here; the numba loop chunks.
            args[i] = seq[t] if w is None else np.dot(seq[t], w)
        for b, buf, ring in states:
            for i, off in zip(b.inner_inputs, b.in_offsets):
                args[i] = buf[(t + off) % len(buf) if ring else t + off]
        for k, i in enumerate(info.inner_in_shared):
            args[i] = shared[k]
        if not t & 255:
            check_time_budget()    # a re-run that words a compiled call's error (linker)
        try:
            values = program(*args)
        except STEP_ERRORS as exc:
            raise step_error(op, exc, t) from None
        for b, buf, ring in states:
            for o, off in zip(b.inner_outputs, b.out_offsets):
                _write(op, buf, (t + off) % len(buf) if ring else t + off, values[o], t, o)
        # Summed nit_sots first: a step value may be a view of a sequence row that a
        # nit_sot stored in that sequence (`nit_sot_into_seq`) overwrites below.
        for k, o in enumerate(info.inner_out_nit_sot):
            if op.plan.nit_sot_sum(k) is not None:
                nits[k] = _add_product(op, k, nits[k], inputs, t, values[o])
        for k, o in enumerate(info.inner_out_nit_sot):
            if op.plan.nit_sot_sum(k) is not None:
                continue
            if nits[k] is None:
                nits[k] = _nit_rows(op, k, lengths[k], np.shape(values[o]), inputs)
            if lengths[k]:
                _write(op, nits[k], t % lengths[k], values[o], t, o)
        for k, o in enumerate(info.inner_out_shared):
            shared[k] = values[o]
        if info.as_while and values[info.inner_out_until]:
            return t + 1
    return n


def _write(op, buf, row, value, step, o):
    value = np.asarray(value)
    if value.shape != buf.shape[1:]:
        raise ValueError(
            f"{op.info.label}: at step {step}, {op.label_of_output(o)} has shape "
            f"{value.shape}, but {_row_origin(buf)} {buf.shape[1:]}; the step function "
            f"must return the same shape at every step")
    buf[row] = value


def _add_product(op, k, acc, inputs, t, y):
    """``acc + seq_j[t].T @ y`` (or ``+ y.sum(axis=0)``): one step of a summed nit_sot."""
    if op.plan.nit_sot_row_sum(k):
        term = np.asarray(y).sum(axis=0)
        return term if acc is None else acc + term
    x = np.asarray(inputs[op.info.outer_in_seqs[op.plan.nit_sot_sum(k)[0]]][t])
    term = np.dot(x.T, np.asarray(y))
    return term if acc is None else acc + term


def _nit_rows(op, k, length, row_shape, inputs):
    """Where nit_sot `k` is stored: fresh rows, or its sequence's (`nit_sot_into_seq`)."""
    dtype = op.inner_outputs[op.info.inner_out_nit_sot[k]].type.dtype
    j = op.plan.nit_sot_seq(k)
    if j is not None:
        # The rewrite proved row t is read by step t only; a row shape that differs at
        # run time keeps fresh rows (the write then names the step).
        seq = inputs[op.info.outer_in_seqs[j]]
        if (isinstance(seq, np.ndarray) and seq.shape[1:] == row_shape
                and seq.dtype == dtype and seq.flags.writeable):
            return seq[:length]
    return np.empty((length,) + row_shape, dtype=dtype)


def _held_seq(op, s, inputs):
    j = op.plan.buffer_seq(s)
    return None if j is None else inputs[op.info.outer_in_seqs[j]]


def _alloc_buffer(op, s, init, n, seq=None):
    b, ring = op.info.buffers[s], op.plan.buffer_ring(s)
    init = np.asarray(init)
    if b.kind == "mit_mot":
        return init.copy()
    if seq is not None and _rows_after(init, seq, b.extent, n):
        # `seq_into_buffer`: the rewrite proved this memory is the loop's alone.
        return init[: b.extent + n]
    # A ring (save-mem) never holds more rows than the loop writes.
    rows = b.extent + n if ring is None else min(ring, b.extent + n)
    buf = np.empty((rows,) + init.shape[1:], dtype=init.dtype)
    buf[: b.extent] = init[: b.extent]
    return buf


def _finish_nit(op, k, ring, length, executed, inputs):
    summed = op.plan.nit_sot_sum(k)
    if summed is not None:
        if ring is not None:
            return ring
        o = op.info.inner_out_nit_sot[k]
        cols = op.zero_step_row_shape(o, inputs)[-1]
        if summed[0] == ROW_SUM:
            return np.zeros((cols,), dtype=op.inner_outputs[o].type.dtype)
        seq = np.asarray(inputs[op.info.outer_in_seqs[summed[0]]])
        return np.zeros((seq.shape[-1], cols), dtype=op.inner_outputs[o].type.dtype)
    if ring is None:
        o = op.info.inner_out_nit_sot[k]
        row = op.zero_step_row_shape(o, inputs)
        return np.empty((0,) + row, dtype=op.inner_outputs[o].type.dtype)
    if executed < length:
        return ring[:executed]
    if executed % length:
        return np.roll(ring, -(executed % length), axis=0)
    return ring


def _row_origin(buf):
    return "the rows it is stored in have shape" if buf.ndim else "its buffer has shape"


def _in_time_order(buf, total):
    """The last rows of a buffer that received `total` full rows (a ring wraps around)."""
    if total <= len(buf):
        return buf[:total]
    r = total % len(buf)
    return np.concatenate((buf[r:], buf[:r])) if r else buf


def _rows_after(init, seq, extent, n):
    """Whether `seq` is exactly the rows of C-contiguous `init` after its first `extent`
    (so the loop may keep its buffer in `init`: `StoragePlan.seq_into_buffer`)."""
    if not (isinstance(seq, np.ndarray) and init.flags.c_contiguous and init.flags.writeable
            and seq.dtype == init.dtype and seq.shape[1:] == init.shape[1:]
            and seq.strides == init.strides and len(init) >= extent + n and len(seq) >= n):
        return False
    address = init.__array_interface__["data"][0] + extent * init.strides[0]
    return seq.__array_interface__["data"][0] == address


def _unaliased(value, bufs):
    if isinstance(value, np.ndarray) and any(np.may_share_memory(value, b) for b in bufs):
        return value.copy()
    return value
