"""Loop outputs computed row by row from the sequences: whole-array operations instead.

A step value is *row-wise* when it is computed from sequence rows and
loop invariants only, through the nodes the sequence push-out can stack
(Elemwise, DimShuffle, Dot with the row on the left or a 1-d row on the
right: `pushout._STACKERS`). Its value at step t is then ``f`` of row t of
each sequence, so its T rows are ``f`` of the first T rows of the sequences,
computed at once outside the loop. Two node rewriters on `Scan` use that:

`scan_pushout_rows` (a loop that is a map)
    When *every* output of a loop is row-wise -- nit_sots, and states whose
    new value reads no state -- the loop is replaced by whole-array
    operations (``map(lambda x_t: x_t + 2, x)`` is ``x + 2``; the backward
    loop of ``2 * m_t`` is ``2 * g``). A nit_sot is the stacked value; a
    state's buffer is its initial rows followed by it::

        state, taps [-2, -1] (extent 2), T steps:
        buffer  = [ init[0], init[1] | y_0, y_1, ..., y_{T-1} ]    (extent + T rows)

    Like Theano's PushOutSeqScan it replaces a loop only when nothing is
    left in it: a loop that stays keeps its elementwise rows (no T-long
    temporary beside the loop's own work).

`scan_state_rows` (a state that only copies rows)
    A mit_sot or sit_sot whose new value is row-wise, in a loop that other
    outputs keep, is the buffer above. Its taps become sequences, views of
    that buffer: tap k at step t reads buffer row ``t + extent + k``, so tap
    k is the sequence ``buffer[extent + k : extent + k + T]``. Step
    ``(h_t, dot(h_t + s_tm1, W))`` with ``outputs_info=[zeros, None]`` reads
    ``s_tm1`` as ``join(zeros, h)[0:T]`` and `scan_pushout_seqs` (after it)
    computes the product for all steps before the loop.

Both leave alone loops with ``until`` (how many rows the loop makes is known
only once it ran), mit_mot and shared states, ring buffers, and nit_sots
whose length input is not ``n_steps``. A loop checks its sequences' lengths
before any step; the sequences these rewrites read outside, and the values
they compute there, carry the same checks (`Check` nodes with the op's
messages, in its order), so a sequence too short for ``n_steps`` and its
taps raises the error the loop raised, never a short result nor a
broadcasting error between rows of two lengths. Sequences are directed and shifted outside the op
(go_backwards, negative n_steps, taps), so row t of an outer sequence is
what step t read, whatever the direction.
"""
from __future__ import annotations

from ...graph.basic import Constant
from ...graph.rewriting import InToOut, can_replace, node_rewriter
from ...tensor.assertion import check
from ...tensor.basic import alloc, join
from ...tensor.math import and_, eq, ge, maximum, neq, or_
from ...tensor.rewriting.constant_folding import is_stateful
from ...tensor.shape import shape_i, shape_tuple, specify_shape
from ...tensor.subtensor import getitem
from ..args import ScanArgs
from ..op import (Scan, negative_steps, origin_too_short, sequence_too_short,
                  taps_too_short)
from ..step_errors import mark_moved_out
from ..utils import SeqOrigin, checked_origins
from .basic import rebuild
from .pushout import _STACKERS, _first_rows, _inner_nodes, _invariants, _outer_of_invariant


def _row_values(fgraph, node, args):
    """inner variable -> its outer stack over the first ``n_steps`` rows, for every
    row-wise inner variable (sequence rows included).

    Each sequence is read behind the loop's length checks: sequences of
    different lengths would otherwise meet in a broadcasting error before
    the checks on the results could raise the loop's message.
    """
    op = node.op
    inv, _ = _invariants(op, args)
    checked = [_sequence_checks(fgraph, o, node, args) for o in args.outer_in_seqs]
    stacked = {v: _first_rows(fgraph, o, args.n_steps)
               for v, o in zip(args.inner_in_seqs, checked)}
    outer_inv = _outer_of_invariant(args)
    for n in _inner_nodes(op):
        stacker = _STACKERS.get(type(n.op))
        if stacker is None or len(n.outputs) != 1 or is_stateful(n):
            continue
        if not any(i in stacked for i in n.inputs) or \
                not all(i in stacked or i in inv or isinstance(i, Constant) for i in n.inputs):
            continue
        out = stacker(n, stacked, outer_inv)
        if out is not None:
            stacked[n.outputs[0]] = out
    return stacked, inv, outer_inv, checked


def _stack_of(y, stacked, inv, outer_inv, n_steps):
    """The outer (n_steps, ...) array of inner output `y`'s rows, or None if not row-wise."""
    if y in stacked:
        return stacked[y]
    if isinstance(y, Constant) or y in inv:
        value = outer_inv(y)
        return alloc(value, n_steps, *shape_tuple(value))
    return None


def _loop_is_simple(args):
    """No until, mit_mot, shared state or ring buffer: every row a step makes is kept."""
    return (args.cond is None and not args.outer_in_mit_mot and not args.outer_in_shared
            and all(r is None for r in args.mit_sot_rows + args.sit_sot_rows))


def _states(args):
    """[(category, index, taps, inner tap inputs, inner output, outer init, outer output)]."""
    out = [("mit_sot", j, taps, ins, y, init, o) for j, (taps, ins, y, init, o) in enumerate(
        zip(args.mit_sot_in_slices, args.inner_in_mit_sot, args.inner_out_mit_sot,
            args.outer_in_mit_sot, args.outer_out_mit_sot))]
    out += [("sit_sot", j, (-1,), [i], y, init, o) for j, (i, y, init, o) in enumerate(
        zip(args.inner_in_sit_sot, args.inner_out_sit_sot, args.outer_in_sit_sot,
            args.outer_out_sit_sot))]
    return out


# -- the loop's checks, outside it ------------------------------------------------------------
def _esc(text):
    return text.replace("{", "{{").replace("}", "}}")


def _sequence_checks(fgraph, value, node, args):
    """`value` behind the loop's sequence-length checks (`Scan.sequence_error`, in its order).

    A check the graph proves is left out: a sequence whose length is provably
    ``n_steps`` (a map over it, its gradient) has enough rows for any taps
    whose span its offset covers, and ``n_steps`` is then not negative.
    """
    op, n = node.op, args.n_steps
    label, n0 = op.info.label, maximum(n, 0)
    lengths = [shape_i(s, 0) for s in args.outer_in_seqs]
    proven = {k for k, s in enumerate(args.outer_in_seqs) if _first_rows(fgraph, s, n) is s}
    for k, o in checked_origins(op.seq_origins):
        if k in proven and o.offset >= o.span:
            continue
        rows, need = lengths[k] + o.offset, n0 + o.span
        enough = ge(rows, need)
        if o.offset:
            # the op says "at most offset" rows when the slice it counts is empty
            value = check(value, or_(enough, neq(lengths[k], 0)),
                          taps_too_short(label, o, f"at most {o.offset}"), n0, need)
            enough = or_(enough, eq(lengths[k], 0))
        value = check(value, enough, taps_too_short(label, o), rows, n0, need)
    for k, m in enumerate(lengths):
        if k in proven:
            continue
        o = op.seq_origins[k] if op.seq_origins is not None else None
        if o is not None:
            value = check(value, ge(m, n), origin_too_short(label, o), n)
        else:
            value = check(value, ge(m, n), sequence_too_short(label, k), m, n)
    if proven or isinstance(n, Constant) and n.data >= 0:
        return value
    return check(value, ge(n, 0), negative_steps(label), n)


def _state_buffer(node, args, kind, taps, y, init, rows):
    """The outer buffer of a row-wise state: its initial rows, then its T computed rows."""
    extent = -min(taps)
    label = args.labels.get(y, "a state")
    if init.type.shape[0] is None or init.type.shape[0] < extent:
        init = check(init, ge(shape_i(init, 0), extent),
                     _esc(f"{node.op.info.label}: the initial value of {label} ({kind}) has ")
                     + "{} rows along its first axis, " + f"but its taps need {extent}",
                     shape_i(init, 0))
    return join(0, getitem(init, slice(None, extent)), _rows_fit(node, args, y, init, rows)), extent


def _shape_text(n):
    return "(" + ", ".join(["{}"] * n) + ("," if n == 1 else "") + ")"


def _rows_fit(node, args, y, init, rows):
    """`rows` checked to have the initial rows' shape: the loop checks each row it writes,
    with this message, and rows computed as one array differ from the first step on."""
    got = [shape_i(rows, d) for d in range(1, rows.ndim)]
    want = [shape_i(init, d) for d in range(1, init.ndim)]
    pairs = [(a, b) for a, b in zip(got, want)
             if not (isinstance(a, Constant) and isinstance(b, Constant) and a.data == b.data)]
    if not pairs:
        return rows
    cond = eq(*pairs[0])
    for a, b in pairs[1:]:
        cond = and_(cond, eq(a, b))
    label = args.labels.get(y, "a state")
    message = (_esc(f"{node.op.info.label}: at step 0, {label} has shape ")
               + _shape_text(len(got)) + ", but the rows it is stored in have shape "
               + _shape_text(len(want)) + "; the step function must return the same shape "
               "at every step")
    return check(rows, cond, message, *got, *want)


def _typed_as(out, value):
    """`value` with the static sizes of the loop output `out` it replaces (a constant
    n_steps makes the output's length static; the rows computed outside do not know it)."""
    if all(a is None or b is not None for a, b in zip(out.type.shape, value.type.shape)):
        return value
    return specify_shape(value, out.type.shape)


# -- a loop that is a map ---------------------------------------------------------------------
@node_rewriter([Scan])
def scan_pushout_rows(fgraph, node):
    """Replace a loop whose every output is row-wise by whole-array operations."""
    args = ScanArgs.from_node(node)
    if not _loop_is_simple(args) or any(length is not args.n_steps
                                        for length in args.outer_in_nit_sot):
        return None
    stacked, inv, outer_inv, checked = _row_values(fgraph, node, args)
    rows = {}
    for y in args.inner_out_nit_sot + [s[4] for s in _states(args)]:
        rows[y] = _stack_of(y, stacked, inv, outer_inv, args.n_steps)
        if rows[y] is None:
            return None
    repl = {}
    for y, out in zip(args.inner_out_nit_sot, args.outer_out_nit_sot):
        repl[out] = rows[y]
    for kind, _, taps, _, y, init, out in _states(args):
        repl[out] = _state_buffer(node, args, kind, taps, y, init, rows[y])[0]
    mark_moved_out(fgraph, node, {y: rows[y] for y in rows}, checked)
    repl = {out: _typed_as(out, _sequence_checks(fgraph, v, node, args))
            for out, v in repl.items() if fgraph.clients.get(out)}
    if not repl or not all(can_replace(out, v) for out, v in repl.items()):
        return None
    return repl


# -- a state that only copies rows ------------------------------------------------------------
@node_rewriter([Scan])
def scan_state_rows(fgraph, node):
    """Read a state whose new value is row-wise as sequences: views of its outer buffer."""
    args = ScanArgs.from_node(node)
    if not _loop_is_simple(args):
        return None
    stacked, inv, outer_inv, checked = _row_values(fgraph, node, args)
    found = [s for s in _states(args) if s[4] in stacked]
    if not found or len(found) == len(_states(args)) and not args.outer_in_nit_sot:
        return None    # nothing would be left to loop over: scan_pushout_rows' case
    n, mapping, repl = args.n_steps, {}, {}
    for kind, _, taps, ins, y, init, out in found:
        # before the buffer's checks: their errors are the loop's own
        mark_moved_out(fgraph, node, {y: stacked[y]}, checked)
        buffer, extent = _state_buffer(node, args, kind, taps, y, init, stacked[y])
        buffer = _sequence_checks(fgraph, buffer, node, args)
        origin = None
        if node.op.seq_origins is not None:   # the loop's messages keep the user's names
            origin = SeqOrigin(-1, f"{args.labels.get(y, 'a state')} (as a sequence)", taps,
                               None, 0)
        for k, i in zip(taps, ins):
            mapping[i] = args.add_seq(getitem(buffer, slice(extent + k, extent + k + n)),
                                      inner_type=i.type, origin=origin)
        repl[out] = _typed_as(out, buffer)
    args.replace_inner(mapping)
    for kind, j, *_ in sorted(found, key=lambda s: (s[0], s[1]), reverse=True):
        args.remove(kind, j)
    new = rebuild(node, args)[0]
    if not all(can_replace(out, v) for out, v in repl.items()):
        return None
    new.update(repl)
    return new


scan_pushout_rows_pass = InToOut([scan_pushout_rows], name="scan_pushout_rows")
scan_state_rows_pass = InToOut([scan_state_rows], name="scan_state_rows")
