"""The Scan node lowers to one numba function with the time loop inside.

The step graph becomes a graph function of the same generated module, which
the loop calls `separately` (compiled once on its own, not again inside the
loop; the disk cache holds loop and step as two entries); nested scans recurse
through `ModuleBuilder.add_graph`. Every position comes from `ScanInfo`, and so
does every storage plan the rewrites chose (rings, homes, summed nit_sots, product
sequences). The generated loop:

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

One module per feature:

    checks.py      the checks before the loop
    step.py        the loop function's parameters, the step's inputs and call
    buffers.py     state buffers (mit_mot, mit_sot, sit_sot), rings, homes in a sequence
    nit_sot.py     nit_sot rows, rings, homes in a sequence
    row_shapes.py  nit_sot row shapes before the loop; the rows of zero steps
    sums.py        summed nit_sots: staged rows, one gemm per chunk
    products.py    sequences read as seq[t] @ W: one gemm per chunk
    writer.py      lines, raising statements, checked row writes

This module writes the skeleton: the order of those parts, the loop (for, or while
with until), profiling and the results. Values are numba scalars for 0-d rows and
arrays otherwise, as everywhere in the generated code.
"""
from __future__ import annotations

from .....scan.op import Scan
from ...registry import Kernel, numba_funcify
from . import buffers, nit_sot, products, row_shapes, sums
from .checks import emit_checks
from .step import emit_step, params
from .writer import Writer


@numba_funcify.register(Scan)
def _scan(op, node, ctx):
    step_fn = ctx.add_graph(op.inner_inputs, op.inner_outputs, "scan_step")
    w = Writer()
    w(0, "def {name}(" + ", ".join(params(op.info)) + "):")
    emit_checks(w, op, node)
    # Row shapes of nit_sots known before the loop: their rows are allocated there (and
    # zero steps need no branch of their own); the others' at the first step.
    dims = nit_sot.static_dims(op)
    pending = [k for k in range(op.info.n_nit_sot) if k not in dims]
    found = row_shapes.row_shapes(op, ctx, pending, zero_rows=False) if pending else None
    if found is not None:
        for line in found[0]:
            w(1, line)
        dims.update(found[1])
        pending = []
    buffers.emit_alloc(w, op)
    nit_sot.emit_alloc(w, op, dims)
    for k in range(op.info.n_shared_outs):
        w(1, f"state{k} = shared{k}")
    sums.emit_alloc(w, op, dims)
    products.emit_alloc(w, op)
    _emit_profile_start(w, op)
    _emit_loop(w, op, step_fn, dims)
    _emit_profile_stop(w, op)
    row_shapes.emit_zero_step_rows(w, op, ctx, pending)
    _emit_results(w, op)
    return Kernel("\n".join(w.lines) + "\n", "scan", separate=True)


def _emit_loop(w, op, step_fn, dims):
    info = op.info
    if info.as_while:
        w(1, "t = 0")
        w(1, "executed = n")
        w(1, "while t < n:")
        emit_step(w, op, step_fn, 2, dims)
        w(2, f"if out[{info.inner_out_until}]:")
        w(3, "executed = t + 1")
        w(3, "break")
        w(2, "t += 1")
    else:
        w(1, "for t in range(n):")
        emit_step(w, op, step_fn, 2, dims)
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


def _emit_results(w, op):
    outs = buffers.emit_results(w, op) + nit_sot.emit_results(w, op)
    outs += [f"state{k}" for k in range(op.info.n_shared_outs)]
    if op.info.as_while:
        outs.append("np.int64(executed)")
    # A kernel returns its single output bare, several as a tuple (registry convention).
    w(1, f"return {outs[0]}" if len(outs) == 1 else f"return ({', '.join(outs)})")
