"""Nit_sot row shapes known before the loop from the step's inputs, and the rows and sums
of zero steps.

Where a nit_sot's type does not know its row shape, the step's shape program
(`Scan._row_shape_program`) gives it from the step's inputs, written inline as scalar
code: the rows are then allocated before the loop, no array is assigned inside it, and
zero steps need no branch of their own. A shape read from a sequence's values is known
only at the first step: such rows are allocated there, and `emit_zero_step_rows` makes
them when no step runs.
"""
from __future__ import annotations

from .....graph.traversal import toposort
from .....tensor.basic import MakeVector
from .....tensor.shape import Shape_i
from .step import step_arg_list
from .sums import zeros_sum


def row_shapes(op, ctx, pending, zero_rows):
    """(statements, {nit_sot: [its row sizes as source]}) for the nit_sots `pending`, whose
    row shape is known only from the step's inputs: the step's shape program
    (`Scan._row_shape_program`) written inline as scalar code.

    A size of an input is read from the outer array's shape, without making the row,
    and a shape vector read only here is not built: its elements are used (as a
    function of its own the program would be one more numba compilation, and its
    vectors arrays numba must type and build). An input whose value the program reads is
    bound to step 0's (an initial row, a shared or non-sequence value) or, for a
    sequence's row, to a zero row when `zero_rows` (the n == 0 branch: the sequence may
    have no row); without `zero_rows` such a program returns None.
    """
    info = op.info
    program = op._row_shape_program()
    outputs = [program.outputs[info.inner_out_nit_sot[k]] for k in pending]
    args = step_arg_list(op, "alloc_zeros((1,) + seq{k}.shape[1:], seq{k}.dtype)[0]",
                         "init{s}[{off}]", "shared{k}",
                         "alloc_zeros((1, seq{k}.shape[1], ns{w}.shape[1]), seq{k}.dtype)[0]")
    sizes = step_arg_list(op, "seq{k}.shape[1 + {{d}}]", "init{s}.shape[1 + {{d}}]",
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


def emit_zero_step_rows(w, op, ctx, pending):
    """The nit_sots `pending`, allocated at the first step, when no step runs: zero rows of
    the shape the step's inputs give (`row_shapes` with zero rows), and zero sums."""
    if not pending:
        return
    lines, dims = row_shapes(op, ctx, pending, zero_rows=True)
    w(1, "if n == 0:")
    for line in lines:
        w(2, line)
    for k in pending:
        summed = op.plan.nit_sot_sum(k)
        if summed is not None:   # no step: the sum is zeros, (H,) or (In, H)
            rows = "0" if op.plan.nit_sot_row_sum(k) else f"seq{summed[0]}.shape[2]"
            w(2, f"sum{k} = {zeros_sum(op.plan, k, rows, dims[k][1], f'sum{k}.dtype')}")
        else:
            w(2, f"nit{k} = alloc_empty((0, {''.join(f'{d}, ' for d in dims[k])}), "
                 f"nit{k}.dtype)")

