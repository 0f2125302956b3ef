"""State buffers (mit_mot, mit_sot, sit_sot): their allocation, the row each tap reads and
each output writes, and their trimmed or rotated results.

A state's buffer holds its initial rows, then a row per step. Two fields of the op's
`StoragePlan`, decided by the rewrites, change that:

* a ring (``buffer_rows``, save-mem): only the last rows, in slots modulo its length;
* a home (``seq_into_buffer``, seq_buffer.py): the initial value's own memory, whose rows
  after the first hold a sequence, used when the arrays agree at run time.

Mit_mot buffers are the initial value's copy, read and written at fixed offsets.
"""
from __future__ import annotations

from .....scan.rewriting.seq_buffer import buffer_aliases_row
from .writer import write_row


# A ring buffer (save-mem) or nit_sot ring holds the last rows written, in slots modulo its
# length. A for loop knows its last step, so it writes row j into slot (j + offset) % rows
# with the offset that puts the last row in the last slot: the ring is in time order when
# the loop ends. A while loop (until) rotates its rings after the loop
# (`ring_in_time_order_call`), and so does a state ring with several initial rows. (A
# ring is never a home: `StoragePlan.seq_into_buffer` holds whole buffers only.)
def ring_from_offset(op, s):
    return (op.plan.buffer_ring(s) is not None and op.info.buffers[s].extent == 1
            and not op.info.as_while)


def buffer_row(op, s, off):
    """The source of the row of buffer `s` that step t's tap `off` reads or writes."""
    if ring_from_offset(op, s):
        return f"(t + {off} + ro{s}) % buf{s}.shape[0]"
    row = f"t + {off}"
    return f"({row}) % buf{s}.shape[0]" if op.plan.buffer_ring(s) is not None else row


def emit_alloc(w, op):
    """Each state's buffer, its initial rows copied in."""
    for s, b in enumerate(op.info.buffers):
        ring = op.plan.buffer_ring(s)
        if b.kind == "mit_mot":
            w(1, f"buf{s} = c_copy(init{s})")
        elif ring_from_offset(op, s):
            w(1, f"buf{s} = alloc_empty((imin({ring}, 1 + n),) + init{s}.shape[1:], "
                 f"init{s}.dtype)")
            # row j in slot (j + ro) % rows: row n, the last, in the last slot
            w(1, f"ro{s} = (buf{s}.shape[0] - 1 - n % buf{s}.shape[0]) % buf{s}.shape[0]")
            w(1, f"copy_into(buf{s}[ro{s}:ro{s} + 1], init{s}[:1])")
        else:
            # A ring (save-mem) never holds more rows than the loop writes.
            rows = f"{b.extent} + n" if ring is None else f"imin({ring}, {b.extent} + n)"
            _emit_buffer(w, op, s, f"buf{s} = alloc_empty(({rows},) + init{s}.shape[1:], "
                                   f"init{s}.dtype)",
                         f"copy_into(buf{s}[:{b.extent}], init{s}[:{b.extent}])")


def _emit_buffer(w, op, s, alloc, copy):
    """State `s`'s buffer: fresh (`alloc`, then `copy` the initial row), or its initial
    value's own memory, whose rows after the first hold a sequence (`seq_into_buffer`)."""
    j = op.plan.buffer_seq(s)
    if j is None:
        w(1, alloc)
        w(1, copy)
        return
    # The rewrite proved nothing else reads that memory; checked once per call: the
    # sequence is exactly init's rows 1.. (same row shape and strides, C-contiguous).
    # (Scalar comparisons: a tuple == compiles a function of its own.)
    same = "".join(f" and seq{j}.shape[{d}] == init{s}.shape[{d}]"
                   f" and seq{j}.strides[{d}] == init{s}.strides[{d}]"
                   for d in range(1, op.inner_inputs[op.info.inner_in_seqs[j]].type.ndim + 1))
    w(1, f"if (init{s}.shape[0] >= 1 + n and is_c_contiguous(init{s}){same} and "
         f"seq{j}.strides[0] == init{s}.strides[0] and "
         f"data_address(seq{j}) == data_address(init{s}) + init{s}.strides[0]):")
    w(2, f"buf{s} = c_contiguous(init{s})[:1 + n]")
    w(1, "else:")
    w(2, alloc)
    w(2, copy)


def emit_writes(w, op, depth):
    """Step t's state outputs written into their buffers."""
    for s, b in enumerate(op.info.buffers):
        for o, off in zip(b.inner_outputs, b.out_offsets):
            write_row(w, op, depth, f"buf{s}", buffer_row(op, s, off), o,
                      copy=buffer_aliases_row(op, s))


def emit_results(w, op):
    """[each buffer's result as source]: its rows up to the last step run; a ring in time
    order (rotated here where it was not written from an offset)."""
    outs = []
    for s, b in enumerate(op.info.buffers):
        ring = op.plan.buffer_ring(s) is not None
        if ring and not ring_from_offset(op, s):
            emit_in_time_order(w, f"buf{s}", f"{b.extent} + executed", f"buf{s}.shape[0]")
        whole = b.kind == "mit_mot" or ring
        outs.append(f"buf{s}" if whole else f"buf{s}[:{b.extent} + executed]")
    return outs


def emit_in_time_order(w, buf, total, rows):
    """`buf` := the last rows of a ring of `rows` rows that received `total` rows, in order."""
    w(1, f"{buf} = ring_in_time_order_call({buf}, {total}, {rows})")
