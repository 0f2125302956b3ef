"""`ElemwiseReduce`: one loop that evaluates an elementwise expression and reduces it.

The loop is the elementwise loop of dispatch/elemwise.py (sizes from
``broadcast_shape``, inputs read through ``elem_view``, the scalar
expression in the Elemwise's exact dtype) with its store replaced by the
reduction's update of an accumulator, written inline or as a shared kernel
like every elementwise loop. ``sum(h * h, axis=(0, 1))`` of a T x B x H float32
``h``::

    d0, d1, d2, = broadcast_shape(((i0.shape[0], i0.shape[1], i0.shape[2], ), ))
    out = alloc_full((d2, ), np.float64(0), np.float64)
    f0, o0, e0 = elem_view(i0)
    for j0 in range(d0):
        for j1 in range(d1):
            for j2 in range(d2):
                x0 = f0[np.uint64(o0 + j0 * e0[0] + j1 * e0[1] + j2 * e0[2])]
                x1 = np.float32(x0 * x0)
                out[j2] += x1
    out = out.astype(np.float32)

The accumulator is what the reduction loop (dispatch/math.py) uses: float16
and float32 sums add into float64 (a float32 accumulator lost ~1e-4
relative on a T x B x H loss), anything else in the output dtype; the
elements are visited in C order as that loop visits the stored array, so the
result is the two-loop result bit for bit, except for a sum over every axis:
that adds into one partial sum per index of the last axis (``out[j2] +=``, as
above, a loop LLVM vectorizes), then adds the partial sums. A single scalar
accumulator made the loop a chain of dependent float64 adds, which does not
vectorize (benchmarks/notes.md); the order of the additions
differs from the two loops', so a float64 total is equal to rounding (as
NumPy's pairwise sum is), and a float32 total, added in float64, all but
always identical. When the first input's memory runs along its first axis
(a transposed weight gradient, as clipping by the global norm sums its
squares) and every input spans every axis, that sum visits the axes in
reverse order (lanes along the first axis): in C order the loop would read
a new cache line for every element and not vectorize (benchmarks/notes.md has
the figures). A max or min starts from -inf/+inf (the dtype's extreme for
integers), keeps NaN as NumPy does and, like NumPy, refuses to reduce zero
elements.
"""
from __future__ import annotations

import numpy as np

from ....tensor.elemwise_reduce import ElemwiseReduce
from ....tensor.math import Max, Min, Prod, Sum
from ..registry import Loop, np_dtype, numba_funcify
from .elemwise import _loop_nest, _scalar_body, _shape_lines, _with_helpers, read_plan

_IDENTITY = {Sum: "0", Prod: "1"}
_UPDATE = {Sum: "{acc} += {x}", Prod: "{acc} *= {x}",
           Max: "if {x} > {acc} or {x} != {x}:\n    {acc} = {x}",
           Min: "if {x} < {acc} or {x} != {x}:\n    {acc} = {x}"}


@numba_funcify.register(ElemwiseReduce)
def _elemwise_reduce(op, node, ctx):
    return Loop(_with_helpers(reduce_loop_source(op, node), ctx), "ewr")


def _start(kind, adt):
    """The accumulator's first value, as numba source of dtype `adt`."""
    if kind in _IDENTITY:
        return f"np.{adt}({_IDENTITY[kind]})"
    sign = "-" if kind is Max else ""
    if adt.startswith("float"):
        return f"np.{adt}({sign}np.inf)"
    info = np.iinfo(adt)
    return f"np.{adt}({info.min if kind is Max else info.max})"


def reduce_loop_source(op, node):
    """Source of ``def {name}(i0, i1, ...)`` returning the reduction (see the docstring)."""
    ew, _ = op.parts(node)
    ins, nd, odt = ew.inputs, ew.outputs[0].ndim, node.outputs[0].dtype
    axes = op.reduce.axis
    kept = [d for d in range(nd) if d not in axes]
    kind = type(op.reduce)
    wide = kind is Sum and odt in ("float16", "float32")
    adt = "float64" if wide else odt
    first, dyn = read_plan(ins, nd)
    lines = [f"def {{name}}({', '.join(f'i{k}' for k in range(len(ins)))}):"]
    lines += _shape_lines(ins, dyn, nd)
    if kind in (Max, Min):
        reduced = " * ".join(f"d{d}" for d in axes)
        lines += [f"    if {reduced} == 0:",
                  f"        raise ValueError('zero-size array to reduction operation "
                  f"{kind.__name__.lower()} which has no identity')"]
    start = _start(kind, adt)
    # A sum over every axis adds into one partial sum per index of the last axis, then
    # adds those up: one scalar accumulator is a chain of dependent adds, a row
    # of them vectorizes (see the module docstring).
    lanes = kind is Sum and not kept
    rows = [nd - 1] if lanes else kept
    lines += [f"    x{k} = i{k}" for k, v in enumerate(ins) if v.ndim == 0 and first[k] == k]
    lines += [f"    f{k}, o{k}, e{k} = elem_view(i{k})" for k, v in enumerate(ins)
              if v.ndim and dyn[k]]
    if lanes:
        lines += _memory_order_lines(ins, dyn, nd)
    lines.append(f"    out = alloc_full(({''.join(f'd{d}, ' for d in rows)}), {start}, "
                 f"{np_dtype(adt)})" if rows else f"    out = {start}")
    body_lines, expr = _scalar_body(op.elemwise, ew, [f"x{first[k]}" for k in range(len(ins))])
    # The elementwise nest without its last line (the store into the output array).
    nest = _loop_nest(ins, nd, body_lines, expr, dyn, "    ")[:-1]
    ind = "    " * (nd + 1)
    elem = f"x{len(ins)}"
    acc = "out[" + ", ".join(f"j{d}" for d in rows) + "]" if rows else "out"
    nest.append(f"{ind}{elem} = {expr}")
    nest += [ind + line for line in _UPDATE[kind].format(acc=acc, x=elem).split("\n")]
    lines += nest
    if lanes:
        lines += [f"    x{len(ins) + 1} = {start}", f"    for j{nd} in range(d{nd - 1}):",
                  f"        x{len(ins) + 1} += out[j{nd}]", f"    out = x{len(ins) + 1}"]
    if adt != odt:
        lines.append(f"    out = out.astype({np_dtype(odt)})" if kept else f"    out = np.{odt}(out)")
    elif not kept:
        lines.append(f"    out = np.{odt}(out)")
    lines.append("    return out")
    return "\n".join(lines) + "\n"


def _memory_order_lines(ins, dyn, nd):
    """Lines that reverse the loop's axes when the first input's memory runs along its
    first axis (a transposed matrix), for a sum over every axis whose inputs all span
    every axis: the loop then reads that input in memory order (module docstring)."""
    views = [k for k, v in enumerate(ins) if v.ndim and dyn[k]]
    if nd < 2 or not views or any(ins[k].ndim != nd or len(dyn[k]) != nd for k in views):
        return []
    r, order = views[0], list(reversed(range(nd)))
    lines = [f"    if e{r}[0] != 0 and abs(e{r}[0]) < abs(e{r}[{nd - 1}]):",
             f"        {''.join(f'd{d}, ' for d in range(nd))}= "
             f"{''.join(f'd{d}, ' for d in order)}"]
    lines += [f"        e{k} = ({''.join(f'e{k}[{d}], ' for d in order)})" for k in views]
    return lines
