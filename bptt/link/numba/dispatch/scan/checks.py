"""The checks before the loop: n_steps against every sequence, initial buffer and nit_sot
length, with the messages of `Scan.check_before_loop` (raised before any step, so that no
step reads out of bounds)."""
from __future__ import annotations

from .....scan.op import negative_steps, origin_too_short, sequence_too_short, taps_too_short
from .....scan.utils import checked_origins
from .writer import fail, fail_format


def emit_checks(w, op, node):
    """The checks of Scan.check_before_loop, with the same messages."""
    info, label = op.info, op.info.label
    _emit_seq_checks(w, op)
    w(1, "if n < 0:")
    w(2, fail_format(negative_steps(label), "n"))
    for s, b in enumerate(info.buffers):
        need = f"{b.extent} + imax(n, 0)" if b.kind == "mit_mot" else f"{b.extent}"
        w(1, f"if init{s}.shape[0] < {need}:")
        w(2, fail(f"{label}: the initial value of {op.label_of_output(b.inner_outputs[0])} "
                  f"({b.kind}) has ", f"init{s}.shape[0]",
                  " rows along its first axis, but its taps need ", need, ""))
    for k in range(info.n_nit_sot):
        if node.inputs[info.outer_in_nit_sot[k]] is node.inputs[0]:
            continue    # the length is n_steps, checked above: no check to compile
        w(1, f"if nitlen{k} < 0:")
        w(2, fail(f"{label}: nit_sot {k} has a negative length ", f"nitlen{k}", ""))


def _emit_seq_checks(w, op):
    """Each sequence long enough for n steps of its taps (`Scan.seq_origins`: the taps'
    span and the rows cut off its front), then at least n rows long."""
    info, label = op.info, op.info.label
    for k, o in checked_origins(op.seq_origins):
        need, rows = f"imax(n, 0) + {o.span}", f"seq{k}.shape[0]" + (f" + {o.offset}" if o.offset
                                                                        else "")
        w(1, f"if {rows} < {need}:")
        if o.offset:
            w(2, f"if seq{k}.shape[0] == 0:")
            w(3, fail_format(taps_too_short(label, o, f"at most {o.offset}"), "imax(n, 0)", need))
        w(2, fail_format(taps_too_short(label, o), rows, "imax(n, 0)", need))
    for k in range(info.n_seqs):
        o = op.seq_origins[k] if op.seq_origins is not None else None
        w(1, f"if seq{k}.shape[0] < n:")
        if o is not None:
            w(2, fail_format(origin_too_short(label, o), "n"))
        else:
            w(2, fail_format(sequence_too_short(label, k), f"seq{k}.shape[0]", "n"))
