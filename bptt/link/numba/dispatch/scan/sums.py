"""Summed nit_sots (``StoragePlan.nit_sot_sums``, bptt/scan/rewriting/chunks.py): a nit_sot
only ever summed as ``X.T @ Y`` over its steps, or over its rows, is not stored; its step
values are staged for a chunk of steps and added to the sum with one gemm per chunk.

    step t of chunk [c0, c0 + K):  stg[t - c0] = y_t       (stg[K - 1 - (t - c0)] if the
                                                           sequences run backwards in memory)
    after its last step (or the loop's):  sum += X.T @ Y    one gemm,
        X = seq[c0:t+1] as (kk*B, In) rows, Y = the kk staged rows as (kk*B, H)
      or, summed over rows (ROW_SUM):     sum += column sums of Y

A backward scan reads the trace reversed (negative row stride): the staged rows then go
from the buffer's end, so that X and Y are both read in memory order without a copy. The
rows may instead live in a sequence's (a home, ``nit_sot_into_seq``: the step value
written over the sequence row it was computed from), or be another group's (two step
values that are one value summed to two shapes, `SumTo`: equal where the shapes agree).
Per step the loop makes one call to stage, and at a chunk's last step one per sum
(chunk_runtime.py), which work out the staging row and the chunk's rows: written inline,
that logic would be compiled again for every summed nit_sot.

The nit_sots summed from one step value form a group, staged once. Per group g:
ck{g}_y, ck{g}_k, ck{g}_home  the rows its sums read (its own staging rows, its home
sequence or group 0's), the chunk's steps, whether ck{g}_y is indexed by step (a sequence)
rather than staged; stg{g}_home, stg{g}_alias  which of those it is. Set up before the loop
where the step values' shapes are known there (`_known_dims`), else at the first step from
the values themselves: arrays assigned inside the loop cost numba compile time per group.
"""
from __future__ import annotations

from ...registry import np_dtype
from .....scan.rewriting.inplace import nit_sot_aliases_row
from .....tensor.shape import SumTo
from .writer import fail, write_row


def groups(op):
    """[((inner output, rows), [nit_sot indices])]: the summed nit_sots staged together
    (sums of products with one step value, several weights' gradients of one
    pre-activation say: staged once)."""
    found, first = {}, {}
    for k, o in enumerate(op.info.inner_out_nit_sot):
        summed = op.plan.nit_sot_sum(k)
        if summed is not None:
            o = first.setdefault(op.inner_outputs[o], o)
            found.setdefault((o, summed[1]), []).append(k)
    return list(found.items())


def _home(op, ks):
    """(nit_sot, sequence) whose rows hold the group's step values (nit_sot_into_seq), or None."""
    for k in ks:
        if op.plan.nit_sot_seq(k) is not None:
            return k, op.plan.nit_sot_seq(k)
    return None


def _alias(op, found, g):
    """Whether group `g` may read group 0's rows: both step values are one value summed
    to a shape (`SumTo`, a broadcast operand's gradient: a no-op where nothing
    broadcasts), so they are equal wherever their shapes are."""
    def summed_from(v):
        return v.owner.inputs[0] if v.owner is not None and isinstance(v.owner.op, SumTo) else v

    (o, rows), _ = found[g]
    (o0, rows0), _ = found[0]
    v, v0 = op.inner_outputs[o], op.inner_outputs[o0]
    return (g > 0 and rows == rows0 and v.type.dtype == v0.type.dtype
            and v.type.ndim == v0.type.ndim and summed_from(v) is summed_from(v0))


def _known_dims(op, dims):
    """{group: the row sizes of its step value} if every group's are known before the loop
    (row_shapes.py), else None (the groups are set up at the first step)."""
    found = {}
    for g, (_, ks) in enumerate(groups(op)):
        if ks[0] not in dims:
            return None
        found[g] = dims[ks[0]]
    return found


def emit_alloc(w, op, dims):
    """Each group's rows and each sum, before the loop (placeholders where `_known_dims`
    has no shapes: `_emit_first_step` sets them up)."""
    plan = op.plan
    found = groups(op)
    seqs = [plan.nit_sot_sum(k)[0] for _, ks in found for k in ks if not plan.nit_sot_row_sum(k)]
    if found:   # column sums read the rows in any order
        w(1, f"ck_rev = seq{seqs[0]}.strides[0] < 0" if seqs else "ck_rev = False")
    known = _known_dims(op, dims)
    for g, ((o, rows), ks) in enumerate(found):
        dt = np_dtype(op.inner_outputs[o].type.dtype)
        home, alias = _home(op, ks), _alias(op, found, g)
        if known is None:
            w(1, f"ck{g}_y, ck{g}_k, ck{g}_home = alloc_empty((0, 0, 0), {dt}), 1, False")
            if home is not None:
                w(1, f"stg{g}_home = False")
            if alias:
                w(1, f"stg{g}_alias = False")
            for k in ks:
                w(1, f"sum{k} = {zeros_sum(plan, k, '0', '0', dt)}")
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
        _emit_rows(w, 1, g, home, alias,
                   f"alloc_empty((ck{g}_k, {''.join(f'{a}, ' for a in d)}), {dt})")
        for k in ks:
            w(1, f"sum{k} = {zeros_sum(plan, k, _sum_rows(plan, k), d[1], dt)}")


def _sum_rows(plan, k):
    """The leading size of summed nit_sot k's sum, as source: In, its sequence's columns
    (unused for a row sum)."""
    return "0" if plan.nit_sot_row_sum(k) else f"seq{plan.nit_sot_sum(k)[0]}.shape[2]"


def zeros_sum(plan, k, rows, cols, dt):
    """Source of summed nit_sot k's zero sum: (cols,) for a row sum, else (rows, cols), in
    C order or, with ``sums_transposed`` (sum_layout.py), column-major."""
    if plan.nit_sot_row_sum(k):
        return f"alloc_zeros(({cols},), {dt})"
    if plan.sum_transposed(k):
        return f"alloc_zeros(({cols}, {rows}), {dt}).T"
    return f"alloc_zeros(({rows}, {cols}), {dt})"


def _emit_rows(w, d, g, home, alias, staging):
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


def emit_step(w, op, d, dims):
    """Step t's value of each group staged (or written to its home), and at a chunk's
    last step the chunk added to each sum."""
    plan = op.plan
    found = groups(op)
    known = _known_dims(op, dims)
    for g, ((o, rows), ks) in enumerate(found):
        home = _home(op, ks)
        alias = _alias(op, found, g)
        if known is None:
            _emit_first_step(w, op, d, g, o, rows, ks, home, alias, found)
        # the step's row goes to its home sequence, to group 0's rows (nothing to do), or
        # to this group's staging rows
        if home is not None:
            w(d, f"if stg{g}_home:")
            write_row(w, op, d + 1, f"seq{home[1]}", "t", o,
                      copy=nit_sot_aliases_row(op, home[0]))
            w(d, f"elif not stg{g}_alias:" if alias else "else:")
        elif alias:
            w(d, f"if not stg{g}_alias:")
        staged = d + (home is not None or alias)
        w(staged, f"if not chunk_stage_call(ck{g}_y, out[{o}], t, ck_rev):")
        w(staged + 1, fail(f"{op.info.label}: at step ", "t", f", {op.label_of_output(o)} has "
                           "shape ", f"out[{o}].shape", ", but the rows it is stored in have "
                           "shape ", f"ck{g}_y.shape[1:]",
                           "; the step function must return the same shape at every step"))
        # Only a chunk's last step calls: a call per step and sum, passing arrays, would
        # cost more than a small step's own work.
        w(d, f"if t % ck{g}_k == ck{g}_k - 1 or t == n - 1:")
        for k in ks:
            if plan.nit_sot_row_sum(k):
                w(d + 1, f"chunk_row_sum_call(sum{k}, ck{g}_y, t, ck{g}_k, ck{g}_home, ck_rev)")
                continue
            w(d + 1, f"chunk_product_call(sum{k}, seq{plan.nit_sot_sum(k)[0]}, ck{g}_y, t, "
                     f"ck{g}_k, ck{g}_home, ck_rev)")


def _emit_first_step(w, op, d, g, o, rows, ks, home, alias, found):
    """Group g set up from the first step's value (its shape is known only then)."""
    w(d, "if t == 0:")   # K steps of out's rows: K * rows_of(out) >= `rows`
    w(d + 1, f"ck{g}_k = imax(1, imin(n, -(-{rows} // imax(out[{o}].shape[0], 1))))")
    if alias:
        w(d + 1, f"stg{g}_alias = same_view(out[{o}], out[{found[0][0][0]}])")
    if home is not None:
        # the rewrite proved row t of the sequence is read by step t only (inplace.py)
        w(d + 1, f"stg{g}_home = {f'not stg{g}_alias and ' if alias else ''}"
                 f"fits_rows(seq{home[1]}, out[{o}]) and is_c_contiguous(seq{home[1]}[0])")
    _emit_rows(w, d + 1, g, home, alias,
               f"alloc_empty((ck{g}_k,) + out[{o}].shape, ck{g}_y.dtype)")
    for k in ks:
        cols = f"out[{o}].shape[1]"
        w(d + 1, f"sum{k} = {zeros_sum(op.plan, k, _sum_rows(op.plan, k), cols, f'sum{k}.dtype')}")
