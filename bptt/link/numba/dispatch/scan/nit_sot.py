"""Nit_sot rows: each nit_sot's output array, a row per step (summed nit_sots are sums.py's).

Allocated before the loop where the row shape is known there (`static_dims`,
row_shapes.py), else at the first step. Two storage decisions of the rewrites change the
rows:

* a ring (a length below n_steps, save-mem): the last rows, in slots modulo the length;
* a home (``nit_sot_into_seq``, inplace.py): a sequence's own rows, when the arrays agree
  at run time.
"""
from __future__ import annotations

from ...registry import np_dtype
from .....scan.rewriting.inplace import nit_sot_aliases_row
from .buffers import emit_in_time_order
from .writer import write_row


def static_dims(op):
    """{nit_sot: [its row sizes as source]} for the nit_sots whose type knows their row shape."""
    dims = {}
    for k, o in enumerate(op.info.inner_out_nit_sot):
        shape = op.inner_outputs[o].type.shape
        if None not in shape:
            dims[k] = [str(d) for d in shape]
    return dims


def ring_from_offset(op, k):
    """Whether nit_sot k's rows are written from an offset (buffers.py's rings; a nit_sot
    stored in its sequence has n rows: never a ring)."""
    return not op.info.as_while and op.plan.nit_sot_seq(k) is None


def emit_alloc(w, op, dims):
    """Nit_sot rows: before the loop where `dims` has their row shape, else at the first step."""
    info = op.info
    for k in range(info.n_nit_sot):
        if op.plan.nit_sot_sum(k) is not None:
            continue    # sums.emit_alloc
        o = info.inner_out_nit_sot[k]
        t = op.inner_outputs[o].type
        w(1, f"rows{k} = imin(nitlen{k}, n)")
        if ring_from_offset(op, k):   # row t in slot (t + nro) % rows: the last in the last
            w(1, f"nro{k} = (rows{k} - n % rows{k}) % rows{k} if rows{k} > 0 else 0")
        if k in dims:
            row = "".join(f"{d}, " for d in dims[k])
            _emit_rows(w, op, k, 1, f"({row})",
                       f"nit{k} = alloc_empty((rows{k}, {row}), {np_dtype(t.dtype)})")
        else:
            # The row shape is known only after the first step: allocate then.
            w(1, f"nit{k} = alloc_empty((0,) * {t.ndim + 1}, {np_dtype(t.dtype)})")
            w(1, f"nit{k}_ready = False")


def _emit_rows(w, op, k, depth, row_shape, alloc):
    """Nit_sot `k`'s rows: fresh (`alloc`), or its sequence's (`StoragePlan.nit_sot_into_seq`)."""
    j = op.plan.nit_sot_seq(k)
    if j is None:
        w(depth, alloc)
        return
    # The rewrite proved nothing reads row t after step t, and the dtype and ndim agree.
    # Rows of another shape stay fresh, and so do rows that are not C-contiguous: copy_into
    # would write them correctly, but a view with zero or overlapping strides would not
    # hold one value per row (checked once per call, not per step).
    contiguous = f" and (rows{k} == 0 or is_c_contiguous(seq{j}[0]))" if \
        op.inner_outputs[op.info.inner_out_nit_sot[k]].type.ndim else ""
    w(depth, f"if seq{j}.shape[1:] == {row_shape}{contiguous}:")
    w(depth + 1, f"nit{k} = seq{j}[:rows{k}]")
    w(depth, "else:")
    w(depth + 1, alloc)


def emit_writes(w, op, depth, dims):
    """Step t's nit_sot rows written (allocated first, at step 0, where `dims` lacks them)."""
    info = op.info
    for k, o in enumerate(info.inner_out_nit_sot):
        if op.plan.nit_sot_sum(k) is not None:
            continue
        w(depth, f"if rows{k} > 0:")
        if k not in dims:
            w(depth + 1, f"if not nit{k}_ready:")
            _emit_rows(w, op, k, depth + 2, f"out[{o}].shape",
                       f"nit{k} = alloc_empty((rows{k},) + out[{o}].shape, nit{k}.dtype)")
            w(depth + 2, f"nit{k}_ready = True")
        row = f"(t + nro{k}) % rows{k}" if ring_from_offset(op, k) else f"t % rows{k}"
        write_row(w, op, depth + 1, f"nit{k}", row, o, copy=nit_sot_aliases_row(op, k))


def emit_results(w, op):
    """[each nit_sot's result as source], in nit_sot order (a summed one's is its sum)."""
    info = op.info
    outs = []
    for k in range(info.n_nit_sot):
        if op.plan.nit_sot_sum(k) is not None:
            outs.append(f"sum{k}")
            continue
        if op.plan.nit_sot_seq(k) is None:
            if info.as_while:
                emit_in_time_order(w, f"nit{k}", "executed", f"rows{k}")
        else:
            # Stored in its sequence: n rows (the rewrite proved length == n), never a ring.
            w(1, f"nit{k} = nit{k}[:executed]")
        outs.append(f"nit{k}")
    return outs
