"""The Scan node lowers to one numba function with the time loop inside.

The step graph becomes a graph function of the same generated module, which
the loop calls `separately` (compiled once on its own, not again inside the
loop; the disk cache holds loop and step as two entries); nested scans recurse
through `ModuleBuilder.add_graph`. Every
position comes from `ScanInfo`. The generated loop:

    check n_steps against every sequence and initial buffer (same messages
    as Scan.perform, raised before any step: never an out-of-bounds read)
    allocate each state buffer once; copy the initial rows in
    for t in range(n)            (while t < n, with until)
        read sequence rows and buffer taps by index
        out = step(...)
        check each row's shape (naming the step), write it in place
        [stop after the step whose condition is true]
    trim buffers to the executed steps; rings (save-mem) are in time order
    (a for loop writes them from an offset; a while loop rotates them)

Values are numba scalars for 0-d rows and arrays otherwise, as everywhere in
the generated code.
"""
from __future__ import annotations

from ....graph.traversal import toposort
from ....scan.op import Scan
from ....scan.utils import checked_origins
from ....scan.rewriting.inplace import nit_sot_aliases_row
from ....scan.rewriting.seq_buffer import buffer_aliases_row
from ....tensor.basic import MakeVector
from ....tensor.shape import Shape_i, SumTo
from ..errors import template
from ..registry import Kernel, np_dtype, numba_funcify


class _Writer:
    def __init__(self):
        self.lines = []

    def __call__(self, depth, text):
        self.lines.append("    " * depth + text)


def _params(info):
    names = ["n"]
    names += [f"seq{k}" for k in range(info.n_seqs)]
    names += [f"init{k}" for k in range(info.n_states)]
    names += [f"shared{k}" for k in range(info.n_shared_outs)]
    names += [f"nitlen{k}" for k in range(info.n_nit_sot)]
    names += [f"ns{k}" for k in range(info.n_non_seqs)]
    return names


def _emit_checks(w, op, node):
    """The checks of Scan.check_before_loop, with the same messages."""
    info, label = op.info, op.info.label
    for k, o in checked_origins(op.seq_origins):
        need, rows = f"imax(n, 0) + {o.span}", f"seq{k}.shape[0] + {o.offset}"
        tail = (" rows, but ", "imax(n, 0)", " steps with these taps need ", need,
                f" (n_steps + {o.span}); pass a longer sequence or a smaller n_steps")
        head = f"{label}: sequence {o.label} (taps {list(o.taps)}) has "
        w(1, f"if {rows} < {need}:")
        if o.offset:
            w(2, f"if seq{k}.shape[0] == 0:")
            w(3, _fail(head + f"at most {o.offset}" + tail[0], *tail[1:]))
        w(2, _fail(head, rows, *tail))
    for k in range(info.n_seqs):
        o = op.seq_origins[k] if op.seq_origins is not None else None
        w(1, f"if seq{k}.shape[0] < n:")
        if o is not None:
            w(2, _fail(f"{label}: sequence {o.label} (taps {list(o.taps)}) is too short for "
                       "n_steps=", "n", f": these taps need n_steps + {o.span} rows; pass a "
                       "longer sequence or a smaller n_steps"))
        else:
            w(2, _fail(f"{label}: sequence {k} has ", f"seq{k}.shape[0]", " rows, fewer than "
                       "n_steps=", "n", "; pass a longer sequence or a smaller n_steps"))
    w(1, "if n < 0:")
    w(2, _fail(f"{label}: n_steps is ", "n", "; a symbolic n_steps must not be negative at run "
               "time (a negative Python int runs backwards)"))
    for s, b in enumerate(info.buffers):
        need = f"{b.extent} + imax(n, 0)" if b.kind == "mit_mot" else f"{b.extent}"
        w(1, f"if init{s}.shape[0] < {need}:")
        w(2, _fail(f"{label}: the initial value of {op.label_of_output(b.inner_outputs[0])} "
                   f"({b.kind}) has ", f"init{s}.shape[0]",
                   " rows along its first axis, but its taps need ", need, ""))
    for k in range(info.n_nit_sot):
        if node.inputs[info.outer_in_nit_sot[k]] is node.inputs[0]:
            continue    # the length is n_steps, checked above (a check costs ~0.015 s)
        w(1, f"if nitlen{k} < 0:")
        w(2, _fail(f"{label}: nit_sot {k} has a negative length ", f"nitlen{k}", ""))


def _emit_alloc(w, op, node, dims):
    """State buffers, and nit_sot rows: before the loop where `dims` has their row shape,
    else at the first step."""
    info = op.info
    for s, b in enumerate(info.buffers):
        if b.kind == "mit_mot":
            w(1, f"buf{s} = c_copy(init{s})")
        elif _ring_from_offset(info, s):
            w(1, f"buf{s} = alloc_empty((imin({b.rows}, 1 + n),) + init{s}.shape[1:], "
                 f"init{s}.dtype)")
            # row j in slot (j + ro) % rows: row n, the last, in the last slot
            w(1, f"ro{s} = (buf{s}.shape[0] - 1 - n % buf{s}.shape[0]) % buf{s}.shape[0]")
            w(1, f"copy_into(buf{s}[ro{s}:ro{s} + 1], init{s}[:1])")
        else:
            # A ring (save-mem, b.rows) never holds more rows than the loop writes.
            rows = f"{b.extent} + n" if not b.ring else f"imin({b.rows}, {b.extent} + n)"
            _emit_buffer(w, op, s, f"buf{s} = alloc_empty(({rows},) + init{s}.shape[1:], "
                                   f"init{s}.dtype)",
                         f"copy_into(buf{s}[:{b.extent}], init{s}[:{b.extent}])")
    for k in range(info.n_nit_sot):
        if info.nit_sot_sum(k) is not None:
            continue    # _emit_chunk_alloc
        o = info.inner_out_nit_sot[k]
        t = op.inner_outputs[o].type
        w(1, f"rows{k} = imin(nitlen{k}, n)")
        if _nit_ring_from_offset(info, k):   # row t in slot (t + nro) % rows: the last in the last
            w(1, f"nro{k} = (rows{k} - n % rows{k}) % rows{k} if rows{k} > 0 else 0")
        if k in dims:
            row = "".join(f"{d}, " for d in dims[k])
            _emit_nit_rows(w, op, k, 1, f"({row})",
                           f"nit{k} = alloc_empty((rows{k}, {row}), {np_dtype(t.dtype)})")
        else:
            # The row shape is known only after the first step: allocate then.
            w(1, f"nit{k} = alloc_empty((0,) * {t.ndim + 1}, {np_dtype(t.dtype)})")
            w(1, f"nit{k}_ready = False")
    for k in range(info.n_shared_outs):
        w(1, f"state{k} = shared{k}")


def _emit_buffer(w, op, s, alloc, copy):
    """State `s`'s buffer: fresh (`alloc`, then `copy` the initial row), or its initial
    value's own memory, whose rows after the first hold a sequence (`seq_into_buffer`)."""
    j = op.info.buffer_seq(s)
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


def _step_args(info, seq_row, buffer_row, shared, product_row=None):
    """Source of the inner inputs, in inner order, from per-category templates."""
    return ", ".join(_step_arg_list(info, seq_row, buffer_row, shared, product_row))


def _step_arg_list(info, seq_row, buffer_row, shared, product_row=None):
    """Source of each inner input, in inner order, from per-category templates
    (`product_row`: a sequence read as ``seq[t] @ W``, `seq_products`; {w}: W's index)."""
    args = [None] * info.n_inner_inputs
    for k, i in enumerate(info.inner_in_seqs):
        e = info.seq_product(k)
        args[i] = seq_row.format(k=k) if e is None else product_row.format(k=k, w=e[0])
    for s, b in enumerate(info.buffers):
        for i, off in zip(b.inner_inputs, b.in_offsets):
            args[i] = buffer_row.format(s=s, off=off, row=_buffer_row(info, s, off))
    for k, i in enumerate(info.inner_in_shared):
        args[i] = shared.format(k=k)
    for k, i in enumerate(info.inner_in_non_seqs):
        args[i] = f"ns{k}"
    return args


def _buffer_row(info, s, off):
    if _ring_from_offset(info, s):
        return f"(t + {off} + ro{s}) % buf{s}.shape[0]"
    row = f"t + {off}"
    return f"({row}) % buf{s}.shape[0]" if info.buffers[s].ring else row


# A ring buffer (save-mem) or nit_sot ring holds the last rows written, in slots modulo its
# length. A for loop knows its last step, so it writes row j into slot (j + offset) % rows
# with the offset that puts the last row in the last slot: the ring is in time order when
# the loop ends. A while loop (until) rotates its rings after the loop
# (`ring_in_time_order_call`), and so does a state ring with several initial rows.
def _ring_from_offset(info, s):
    b = info.buffers[s]
    return b.ring and b.extent == 1 and not info.as_while and info.buffer_seq(s) is None


def _nit_ring_from_offset(info, k):
    """Whether nit_sot k's rows are written from an offset (a nit_sot stored in its
    sequence has n rows: never a ring)."""
    return not info.as_while and info.nit_sot_seq(k) is None


def _emit_step(w, op, step_fn, depth, dims):
    info = op.info
    _emit_product_chunk(w, op, depth)
    args = _step_args(info, "seq{k}[t]", "buf{s}[{row}]", "state{k}",
                      "pz{k}[pr{k}]")
    w(depth, f"out = {step_fn}({args})")
    for s, b in enumerate(info.buffers):
        for o, off in zip(b.inner_outputs, b.out_offsets):
            _emit_write(w, op, depth, f"buf{s}", _buffer_row(info, s, off), o,
                        copy=buffer_aliases_row(op, s))
    _emit_chunk_step(w, op, depth, dims)
    for k, o in enumerate(info.inner_out_nit_sot):
        if info.nit_sot_sum(k) is not None:
            continue
        w(depth, f"if rows{k} > 0:")
        if k not in dims:
            w(depth + 1, f"if not nit{k}_ready:")
            _emit_nit_rows(w, op, k, depth + 2, f"out[{o}].shape",
                           f"nit{k} = alloc_empty((rows{k},) + out[{o}].shape, nit{k}.dtype)")
            w(depth + 2, f"nit{k}_ready = True")
        row = f"(t + nro{k}) % rows{k}" if _nit_ring_from_offset(info, k) else f"t % rows{k}"
        _emit_write(w, op, depth + 1, f"nit{k}", row, o,
                    copy=nit_sot_aliases_row(op, k))
    for k, o in enumerate(info.inner_out_shared):
        w(depth, f"state{k} = out[{o}]")


def _fail(*parts):
    """A statement raising ValueError: text parts alternate with integer expressions.

    Numba stores the values without formatting them (cheap to compile);
    `bptt.link.numba.errors.reformat` builds the message in Python.
    """
    texts, exprs = parts[0::2], parts[1::2]
    text = "{}".join(template(t) for t in texts)
    return f"raise ValueError({text!r}, {', '.join(exprs)})"


def _emit_write(w, op, depth, buf, row, o, copy=False):
    if not op.inner_outputs[o].type.ndim:
        w(depth, f"{buf}[{row}] = out[{o}]")
        return
    w(depth, f"if not fits_rows({buf}, out[{o}]):")
    w(depth + 1, _fail(f"{op.info.label}: at step ", "t", f", {op.label_of_output(o)} has shape ",
                       f"out[{o}].shape", ", but the rows it is stored in have shape ",
                       f"{buf}.shape[1:]",
                       "; the step function must return the same shape at every step"))
    # The rows may be a sequence's (nit_sot_into_seq), typed "A": copy_into writes each
    # element through the row's own strides, whatever its layout.
    # copy: the value may overlap the row it goes to (a nit_sot stored in its sequence).
    src = f"c_copy(out[{o}])" if copy else f"out[{o}]"
    w(depth, f"copy_into({buf}[{row}], {src})")


def _emit_nit_rows(w, op, k, depth, row_shape, alloc):
    """Nit_sot `k`'s rows: fresh (`alloc`), or its sequence's (`ScanInfo.nit_sot_into_seq`)."""
    j = op.info.nit_sot_seq(k)
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


def _emit_loop(w, op, step_fn, dims):
    info = op.info
    if info.as_while:
        w(1, "t = 0")
        w(1, "executed = n")
        w(1, "while t < n:")
        _emit_step(w, op, step_fn, 2, dims)
        w(2, f"if out[{info.inner_out_until}]:")
        w(3, "executed = t + 1")
        w(3, "break")
        w(2, "t += 1")
    else:
        w(1, "for t in range(n):")
        _emit_step(w, op, step_fn, 2, dims)
        w(1, "executed = n")


def _emit_profile_start(w, op):
    if op.profile is not None:
        # Object mode only when asked for: such code is not cached on disk.
        w(1, "with numba.objmode(t_start='float64'):")
        w(2, "t_start = scan_profile_clock()")


def _emit_profile_stop(w, op):
    if op.profile is not None:
        w(1, "with numba.objmode():")
        w(2, f"scan_profile_record({op.profile.key}, executed, t_start)")


def _static_dims(op):
    """{nit_sot: [its row sizes as source]} for the nit_sots whose type knows their row shape."""
    dims = {}
    for k, o in enumerate(op.info.inner_out_nit_sot):
        shape = op.inner_outputs[o].type.shape
        if None not in shape:
            dims[k] = [str(d) for d in shape]
    return dims


def _row_shapes(op, ctx, pending, zero_rows):
    """(statements, {nit_sot: [its row sizes as source]}) for the nit_sots `pending`, whose
    row shape is known only from the step's inputs: the step's shape program
    (`Scan._row_shape_program`) written inline as scalar code.

    A size of an input is read from the outer array's shape, without making the row,
    and a shape vector read only here is not built: its elements are used (as a
    function of its own the program cost a numba compilation, ~0.4 s; its vectors
    another ~0.3 s on the RNN gradient). An input whose value the program reads is
    bound to step 0's (an initial row, a shared or non-sequence value) or, for a
    sequence's row, to a zero row when `zero_rows` (the n == 0 branch: the sequence may
    have no row); without `zero_rows` such a program returns None.
    """
    info = op.info
    program = op._row_shape_program()
    outputs = [program.outputs[info.inner_out_nit_sot[k]] for k in pending]
    args = _step_arg_list(info, "alloc_zeros((1,) + seq{k}.shape[1:], seq{k}.dtype)[0]",
                          "init{s}[{off}]", "shared{k}",
                          "alloc_zeros((1, seq{k}.shape[1], ns{w}.shape[1]), seq{k}.dtype)[0]")
    sizes = _step_arg_list(info, "seq{k}.shape[1 + {{d}}]", "init{s}.shape[1 + {{d}}]",
                           "shared{k}.shape[{{d}}]", "(seq{k}.shape[1], ns{w}.shape[1])[{{d}}]")
    for k, i in enumerate(info.inner_in_non_seqs):
        sizes[i] = f"ns{k}.shape[{{d}}]"
    rows = set(info.inner_in_seqs)
    position = {v: i for i, v in enumerate(program.inputs)}
    nodes = toposort(outputs, blockers=program.inputs)
    read = {v for node in nodes for v in node.inputs}
    names, elements, lines = {}, {}, []
    for node in nodes:
        if isinstance(node.op, Shape_i) and node.inputs[0] in position:
            names[node.outputs[0]] = f"rs_v{len(names)}"
            size = sizes[position[node.inputs[0]]].format(d=node.op.i)
            lines.append(f"{names[node.outputs[0]]} = {size}")   # an intp
            continue
        for v in node.inputs:
            if v in position and v not in names:   # bind the inputs the shapes read
                if position[v] in rows and not zero_rows:
                    return None
                names[v] = f"rs_i{position[v]}"
                lines.append(f"{names[v]} = {args[position[v]]}")
        refs = [names[v] if v in names else ctx._ref(v, names) for v in node.inputs]
        if isinstance(node.op, MakeVector) and node.outputs[0] not in read:
            elements[node.outputs[0]] = refs
            continue
        outs = []
        for v in node.outputs:
            names[v] = f"rs_v{len(names)}"
            outs.append(names[v])
        lines += ctx._emit(node, refs, outs).split("\n")
    dims = {}
    for k, out in zip(pending, outputs):
        nd = op.inner_outputs[info.inner_out_nit_sot[k]].type.ndim
        dims[k] = elements[out] if out in elements else \
            [f"{names[out] if out in names else ctx._ref(out, names)}[{d}]" for d in range(nd)]
    return lines, dims


def _emit_zero_step_rows(w, op, ctx, pending):
    """The nit_sots `pending`, allocated at the first step, when no step runs: zero rows of
    the shape the step's inputs give (`_row_shapes` with zero rows), and zero sums."""
    if not pending:
        return
    info = op.info
    lines, dims = _row_shapes(op, ctx, pending, zero_rows=True)
    w(1, "if n == 0:")
    for line in lines:
        w(2, line)
    for k in pending:
        summed = info.nit_sot_sum(k)
        if info.nit_sot_row_sum(k):   # no step: the sum is zeros (H,)
            w(2, f"sum{k} = alloc_zeros(({dims[k][1]},), sum{k}.dtype)")
        elif summed is not None:   # no step: the sum is zeros (In, H)
            w(2, f"sum{k} = alloc_zeros((seq{summed[0]}.shape[2], {dims[k][1]}), sum{k}.dtype)")
        else:
            w(2, f"nit{k} = alloc_empty((0, {''.join(f'{d}, ' for d in dims[k])}), "
                 f"nit{k}.dtype)")


def _emit_results(w, op):
    info = op.info
    outs = []
    for s, b in enumerate(info.buffers):
        if b.ring and not _ring_from_offset(info, s):
            _emit_in_time_order(w, f"buf{s}", f"{b.extent} + executed", f"buf{s}.shape[0]")
        outs.append(f"buf{s}" if b.kind == "mit_mot" or b.ring else f"buf{s}[:{b.extent} + executed]")
    for k in range(info.n_nit_sot):
        if info.nit_sot_sum(k) is not None:
            outs.append(f"sum{k}")
            continue
        if info.nit_sot_seq(k) is None:
            if info.as_while:
                _emit_in_time_order(w, f"nit{k}", "executed", f"rows{k}")
        else:
            # Stored in its sequence: n rows (the rewrite proved length == n), never a ring.
            w(1, f"nit{k} = nit{k}[:executed]")
        outs.append(f"nit{k}")
    outs += [f"state{k}" for k in range(info.n_shared_outs)]
    if info.as_while:
        outs.append("np.int64(executed)")
    # A kernel returns its single output bare, several as a tuple (registry convention).
    w(1, f"return {outs[0]}" if len(outs) == 1 else f"return ({', '.join(outs)})")


def _emit_in_time_order(w, buf, total, rows):
    """`buf` := the last rows of a ring of `rows` rows that received `total` rows, in order."""
    w(1, f"{buf} = ring_in_time_order_call({buf}, {total}, {rows})")


# -- summed nit_sots (ScanInfo.nit_sot_sums; bptt/scan/rewriting/chunks.py) ---------------
#
#   step t of chunk [c0, c0 + K):  stg[t - c0] = y_t       (stg[K - 1 - (t - c0)] if the
#                                                          sequences run backwards in memory)
#   after its last step (or the loop's):  sum += X.T @ Y    one gemm,
#       X = seq[c0:t+1] as (kk*B, In) rows, Y = the kk staged rows as (kk*B, H)
#     or, summed over rows (ROW_SUM):     sum += column sums of Y
#
# A backward scan reads the trace reversed (negative row stride): the staged rows then go
# from the buffer's end, so that X and Y are both read in memory order without a copy. The
# rows may instead live in a sequence's (nit_sot_into_seq: the LSTM's gates in the forward's
# pre-activation), or be another group's (dU's and dW's no-op SumTo of one value).
# Per step the loop makes one call to stage, and at a chunk's last step one per sum
# (chunk_runtime.py), which work out the staging row and the chunk's rows: written here,
# that logic cost about 0.45 s of compile time per summed nit_sot.
def _chunk_groups(op):
    """[((inner output, rows), [nit_sot indices])]: the summed nit_sots staged together
    (dU's and dW's products read the same step value: staged once)."""
    groups, first = {}, {}
    for k, o in enumerate(op.info.inner_out_nit_sot):
        summed = op.info.nit_sot_sum(k)
        if summed is not None:
            o = first.setdefault(op.inner_outputs[o], o)
            groups.setdefault((o, summed[1]), []).append(k)
    return list(groups.items())


def _chunk_home(op, ks):
    """(nit_sot, sequence) whose rows hold the group's step values (nit_sot_into_seq), or None."""
    for k in ks:
        if op.info.nit_sot_seq(k) is not None:
            return k, op.info.nit_sot_seq(k)
    return None


def _chunk_alias(op, groups, g):
    """Whether group `g` may read group 0's rows: both step values are one value summed
    to a shape (dU's and dW's SumTo of dpre: no-ops unless U or W broadcasts), so they
    are equal wherever their shapes are."""
    def summed_from(v):
        return v.owner.inputs[0] if v.owner is not None and isinstance(v.owner.op, SumTo) else v

    (o, rows), _ = groups[g]
    (o0, rows0), _ = groups[0]
    v, v0 = op.inner_outputs[o], op.inner_outputs[o0]
    return (g > 0 and rows == rows0 and v.type.dtype == v0.type.dtype
            and v.type.ndim == v0.type.ndim and summed_from(v) is summed_from(v0))


def _chunk_dims(op, dims):
    """{group: the row sizes of its step value} if every group's are known before the loop
    (`_row_shapes`), else None (the groups are set up at the first step)."""
    found = {}
    for g, (_, ks) in enumerate(_chunk_groups(op)):
        if ks[0] not in dims:
            return None
        found[g] = dims[ks[0]]
    return found


# Per group g:  ck{g}_y, ck{g}_k, ck{g}_home  the rows its sums read (its own staging rows,
# its home sequence or group 0's), the chunk's steps, whether ck{g}_y is indexed by step (a
# sequence) rather than staged; stg{g}_home, stg{g}_alias  which of those it is. Set up
# before the loop where the step values' shapes are known there (`_chunk_dims`), else at
# the first step from the values themselves: arrays assigned in the loop cost numba about
# 0.15 s of compile time per group (the RNN gradient's backward loop 1.17 -> 0.79 s).
def _emit_chunk_alloc(w, op, dims):
    info = op.info
    groups = _chunk_groups(op)
    seqs = [info.nit_sot_sum(k)[0] for _, ks in groups for k in ks if not info.nit_sot_row_sum(k)]
    if groups:   # column sums read the rows in any order
        w(1, f"ck_rev = seq{seqs[0]}.strides[0] < 0" if seqs else "ck_rev = False")
    known = _chunk_dims(op, dims)
    for g, ((o, rows), ks) in enumerate(groups):
        dt = np_dtype(op.inner_outputs[o].type.dtype)
        home, alias = _chunk_home(op, ks), _chunk_alias(op, groups, g)
        if known is None:
            w(1, f"ck{g}_y, ck{g}_k, ck{g}_home = alloc_empty((0, 0, 0), {dt}), 1, False")
            if home is not None:
                w(1, f"stg{g}_home = False")
            if alias:
                w(1, f"stg{g}_alias = False")
            for k in ks:
                w(1, f"sum{k} = alloc_zeros({'(0,)' if info.nit_sot_row_sum(k) else '(0, 0)'}, "
                     f"{dt})")
            continue
        d = known[g]
        w(1, f"ck{g}_k = imax(1, imin(n, -(-{rows} // imax({d[0]}, 1))))")
        if alias:
            w(1, f"stg{g}_alias = " + " and ".join(f"{a} == {b}" for a, b in zip(d, known[0])))
        if home is not None:
            j = home[1]
            w(1, f"stg{g}_home = {f'not stg{g}_alias and ' if alias else ''}n > 0 and "
                 + " and ".join(f"seq{j}.shape[{i + 1}] == {a}" for i, a in enumerate(d))
                 + f" and is_c_contiguous(seq{j}[0])")
        _emit_chunk_rows(w, op, 1, g, o, home, alias,
                         f"alloc_empty((ck{g}_k, {''.join(f'{a}, ' for a in d)}), {dt})")
        for k in ks:
            w(1, f"sum{k} = alloc_zeros(({_sum_rows(info, k)}{d[1]},), {dt})")


def _sum_rows(info, k):
    """The leading size of summed nit_sot k's sum: none for a row sum, else In (its
    sequence's columns), as source ending in ', '."""
    return "" if info.nit_sot_row_sum(k) else f"seq{info.nit_sot_sum(k)[0]}.shape[2], "


def _emit_chunk_rows(w, op, d, g, o, home, alias, staging):
    """Group g's rows: its home sequence's, group 0's, or new `staging` rows."""
    if home is not None:
        w(d, f"if stg{g}_home:")
        w(d + 1, f"ck{g}_y, ck{g}_home = seq{home[1]}, True")
    if alias:
        w(d, f"{'el' if home is not None else ''}if stg{g}_alias:")
        w(d + 1, f"ck{g}_y, ck{g}_k, ck{g}_home = ck0_y, ck0_k, ck0_home")
    if home is not None or alias:
        w(d, "else:")
    w(d + (home is not None or alias), f"ck{g}_y, ck{g}_home = {staging}, False")


def _emit_chunk_step(w, op, d, dims):
    info = op.info
    groups = _chunk_groups(op)
    known = _chunk_dims(op, dims)
    for g, ((o, rows), ks) in enumerate(groups):
        home = _chunk_home(op, ks)
        alias = _chunk_alias(op, groups, g)
        if known is None:
            _emit_chunk_first_step(w, op, d, g, o, rows, ks, home, alias, groups)
        # the step's row goes to its home sequence, to group 0's rows (nothing to do), or
        # to this group's staging rows
        if home is not None:
            w(d, f"if stg{g}_home:")
            _emit_write(w, op, d + 1, f"seq{home[1]}", "t", o,
                        copy=nit_sot_aliases_row(op, home[0]))
            w(d, f"elif not stg{g}_alias:" if alias else "else:")
        elif alias:
            w(d, f"if not stg{g}_alias:")
        staged = d + (home is not None or alias)
        w(staged, f"if not chunk_stage_call(ck{g}_y, out[{o}], t, ck_rev):")
        w(staged + 1, _fail(f"{op.info.label}: at step ", "t", f", {op.label_of_output(o)} has "
                            "shape ", f"out[{o}].shape", ", but the rows it is stored in have "
                            "shape ", f"ck{g}_y.shape[1:]",
                            "; the step function must return the same shape at every step"))
        # Only a chunk's last step calls: a call per step and sum, passing arrays, cost
        # rnn-small (B = 1, H = 16) about 160 ns per step.
        w(d, f"if t % ck{g}_k == ck{g}_k - 1 or t == n - 1:")
        for k in ks:
            if info.nit_sot_row_sum(k):
                w(d + 1, f"chunk_row_sum_call(sum{k}, ck{g}_y, t, ck{g}_k, ck{g}_home, ck_rev)")
                continue
            w(d + 1, f"chunk_product_call(sum{k}, seq{info.nit_sot_sum(k)[0]}, ck{g}_y, t, "
                     f"ck{g}_k, ck{g}_home, ck_rev)")


def _emit_chunk_first_step(w, op, d, g, o, rows, ks, home, alias, groups):
    """Group g set up from the first step's value (its shape is known only then)."""
    w(d, "if t == 0:")   # K steps of out's rows: K * rows_of(out) >= `rows`
    w(d + 1, f"ck{g}_k = imax(1, imin(n, -(-{rows} // imax(out[{o}].shape[0], 1))))")
    if alias:
        w(d + 1, f"stg{g}_alias = same_view(out[{o}], out[{groups[0][0][0]}])")
    if home is not None:
        # the rewrite proved row t of the sequence is read by step t only (inplace.py)
        w(d + 1, f"stg{g}_home = {f'not stg{g}_alias and ' if alias else ''}"
                 f"fits_rows(seq{home[1]}, out[{o}]) and is_c_contiguous(seq{home[1]}[0])")
    _emit_chunk_rows(w, op, d + 1, g, o, home, alias,
                     f"alloc_empty((ck{g}_k,) + out[{o}].shape, ck{g}_y.dtype)")
    for k in ks:
        w(d + 1, f"sum{k} = alloc_zeros(({_sum_rows(op.info, k)}out[{o}].shape[1],), "
                 f"sum{k}.dtype)")


# -- sequences read as seq[t] @ W (ScanInfo.seq_products; bptt/scan/rewriting/product_seqs.py) --
#
#   before the loop:  pz = (K, B, N) rows, K = max(1, ceil(rows / B)) steps
#   at step t = c0 (a multiple of K):  pz[m] = seq[c0 + m] @ W for the chunk's kk steps
#       (seq_product_call: one gemm over the stacked rows, in memory order: pz[kk - 1 - m]
#        when the sequence runs backwards in memory, the backward scan's reversed trace)
#   step t reads pz's row of step t
def _emit_product_alloc(w, op):
    info = op.info
    for j, wk, rows in info.product_seqs:
        w(1, f"if seq{j}.shape[2] != ns{wk}.shape[0]:")
        w(2, _fail(f"{info.label}: sequence {j} is multiplied by a matrix of ", f"ns{wk}.shape[0]",
                   " rows, but its rows have ", f"seq{j}.shape[2]", " columns"))
        w(1, f"pk{j} = imax(1, imin(n, -(-{rows} // imax(seq{j}.shape[1], 1))))")
        w(1, f"pz{j} = alloc_empty((pk{j}, seq{j}.shape[1], ns{wk}.shape[1]), seq{j}.dtype)")
        w(1, f"pn{j} = pk{j}")
        w(1, f"pi{j} = 0")
        w(1, f"prev{j} = seq{j}.strides[0] < 0")


def _emit_product_chunk(w, op, d):
    for j, wk, _ in op.info.product_seqs:
        w(d, f"pi{j} = t % pk{j}")
        w(d, f"if pi{j} == 0:")
        w(d + 1, f"pn{j} = imin(pk{j}, n - t)")
        w(d + 1, f"seq_product_call(pz{j}, seq{j}, t, pn{j}, ns{wk})")
        # (a statement of its own: a conditional expression among many call arguments is
        # bytecode numba does not take, CALL_FUNCTION_EX)
        w(d, f"pr{j} = pn{j} - 1 - pi{j} if prev{j} else pi{j}")


@numba_funcify.register(Scan)
def _scan(op, node, ctx):
    step_fn = ctx.add_graph(op.inner_inputs, op.inner_outputs, "scan_step")
    w = _Writer()
    w(0, "def {name}(" + ", ".join(_params(op.info)) + "):")
    _emit_checks(w, op, node)
    # Row shapes of nit_sots known before the loop: their rows are allocated there (and
    # zero steps need no branch of their own); the others' at the first step.
    dims = _static_dims(op)
    pending = [k for k in range(op.info.n_nit_sot) if k not in dims]
    found = _row_shapes(op, ctx, pending, zero_rows=False) if pending else None
    if found is not None:
        for line in found[0]:
            w(1, line)
        dims.update(found[1])
        pending = []
    _emit_alloc(w, op, node, dims)
    _emit_chunk_alloc(w, op, dims)
    _emit_product_alloc(w, op)
    _emit_profile_start(w, op)
    _emit_loop(w, op, step_fn, dims)
    _emit_profile_stop(w, op)
    _emit_zero_step_rows(w, op, ctx, pending)
    _emit_results(w, op)
    return Kernel("\n".join(w.lines) + "\n", "scan", separate=True)
