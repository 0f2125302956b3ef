"""Elementwise ops lower to one explicit loop (a scalar for 0-d).

An Elemwise whose output has ndim >= 1 becomes a loop function (`Loop`) that

1. get the output shape from `broadcast_shape` (link/numba/elemwise_runtime.py),
   which raises ``ValueError`` with every input shape when they do not
   broadcast (no input is ever read out of bounds);
2. allocate the output once and loop over it in C order, evaluating the
   scalar op's scalar expression (``numba_expr`` with every ndim 0; a
   `Composite` gives one local per inner value) for each element.

Inputs are aligned to the right, as NumPy broadcasts; a dimension of static
size 1 is not read (index 0). Every array, the output included, is read and
written through `elem_view` (link/numba/elemwise_runtime.py): a flat view
of its memory, the offset of its first element and its strides counted in
elements, 0 along a dimension of size 1, so an input that broadcasts at run
time is read at index 0 with no multiplier::

    out[j0, j1] = f(x[j0, j1], b[j1])    # x: (B, H) slice of z, b: (H,)
    fout[uint64(oout + j0 * eout[0] + j1 * eout[1])] = f(
        fx[uint64(ox + j0 * ex[0] + j1 * ex[1])], fb[uint64(ob + j1 * eb[0])])

numba indexes a non-contiguous array (layout 'A': column slices such as
gates ``z[:, :n]``, reversed sequences) by integer arithmetic on its pointer,
which LLVM does not vectorize; through the flat view LLVM versions the loop
on the inner strides being 1 and vectorizes it. The multipliers this
replaced (``x[j0 * m0, j1 * m1]`` with ``m`` 0 where an input broadcasts)
were slower to compile; a second loop nest for the no-broadcast case was
measured no faster, so there is one nest (figures: benchmarks/notes.md).

Where a loop goes is the linker's choice once the module is complete
(registry.Loop, `ModuleBuilder._place_loops`). A loop of the main graph
function, which runs once per call, is a shared kernel, compiled once per
argument types, cached on disk for every graph that holds it, and called
`separately`. In a loop's step function, which runs at every step, a loop
the module holds once is written inline, and a loop it holds more than once
(equal source: scalar constants are arguments) is one shared kernel: a
gradient step repeats loops (a sigmoid of each gate slice, its derivative,
products of two arrays), each compiled once. Every step loop a call was
tried: the same compile gain, but a call's cost at every step
(benchmarks/notes.md).
`linker.with_kernel_modules` shows a graph's source with its kernels.

Inputs whose dtype differs
from the computation dtype are converted per element; every scalar result is
converted to the exact output dtype because numba widens scalar arithmetic
(int8 + int8 is int64 there, not in NumPy). This replaces numba's
array-expression machinery, which compiled its own broadcasting code per
ndim and allocated a temporary per operation.
"""
from __future__ import annotations

from ....tensor import scalar_ops as so
from ....tensor.composite import exact_scalar
from ....tensor.elemwise import Elemwise
from ..registry import Kernel, Loop, np_dtype, numba_funcify

#: Helper kernels a scalar op's expression may call, by placeholder.
_HELPERS = {
    so.NEGATIVE_POWER_CHECK: Kernel("""
def {name}(b):
    if np.any(b < 0):
        raise ValueError('Integers to negative integer powers are not allowed.')
    return b
""", "check_int_exponents"),
    so.NEGATIVE_POWER_CHECK_0D: Kernel("""
def {name}(b):
    if b < 0:
        raise ValueError('Integers to negative integer powers are not allowed.')
    return b
""", "check_int_exponent"),
}


def _with_helpers(text, ctx):
    for placeholder, kernel in _HELPERS.items():
        if placeholder in text:
            text = text.replace(placeholder, ctx.add_kernel(kernel))
    return text


def _scalar_body(op, node, names):
    """(lines, expression) computing one output element from scalar input `names`."""
    in_dtypes, out_dtype = op.compute_dtypes(node)
    args = [a if v.dtype == dt else so.numba_cast(a, dt, 0, src=v.dtype)
            for a, v, dt in zip(names, node.inputs, in_dtypes)]
    statements = getattr(op.scalar_op, "numba_statements", None)
    if statements is not None:     # a Composite: one local per inner value, exact dtypes
        return statements(args, in_dtypes)
    return [], exact_scalar(op.scalar_op.numba_expr(args, in_dtypes, out_dtype, [0] * len(args)),
                      out_dtype)


@numba_funcify.register(Elemwise)
def _elemwise(op, node, ctx):
    if node.outputs[0].ndim == 0:
        return _inline_scalar(op, node, ctx)
    return Loop(_with_helpers(loop_source(op, node), ctx), "ew")


def _inline_scalar(op, node, ctx):
    """0-d: every input is a numba scalar; one inline expression in the exact dtype."""
    names = ["{%d}" % k for k in range(len(node.inputs))]
    in_dtypes, out_dtype = op.compute_dtypes(node)
    args = [a if v.dtype == dt else so.numba_cast(a, dt, 0, src=v.dtype)
            for a, v, dt in zip(names, node.inputs, in_dtypes)]
    expr = op.scalar_op.numba_expr(args, in_dtypes, out_dtype, [0] * len(args))
    if _int64_closed(op.scalar_op, in_dtypes, out_dtype):
        return _with_helpers(expr, ctx)
    return _with_helpers(exact_scalar(expr, out_dtype), ctx)


# int64 in, int64 out in numba's own arithmetic: the np.int64(...) that makes every other
# scalar exact is left out. Shape arithmetic is mostly these; each wrapper cost its line a
# typed call to compile (a scan's n == 0 shape replay is many such lines).
_INT64_CLOSED = (so.Add, so.Mul, so.Neg, so.Maximum, so.Minimum, so.Switch)


def _int64_closed(scalar_op, in_dtypes, out_dtype):
    values = in_dtypes[1:] if isinstance(scalar_op, so.Switch) else in_dtypes  # not the condition
    return (isinstance(scalar_op, _INT64_CLOSED) and str(out_dtype) == "int64"
            and all(str(d) == "int64" for d in values))


# -- the loop kernel ------------------------------------------------------------------

def read_plan(ins, nd):
    """(first, dyn) for a loop over `nd` output dims reading `ins`.

    first[k]: the position input k is read through (an input given twice, as in
    x * x, is read once, through its first position); dyn[k]: the output dims
    (aligned) where input k's size is not statically 1 (empty for a repeat).
    """
    first = [ins.index(v) for v in ins]
    dyn = [[nd - v.ndim + d for d in range(v.ndim) if v.type.shape[d] != 1] if first[k] == k
           else [] for k, v in enumerate(ins)]
    return first, dyn


def loop_source(op, node):
    """Source of ``def {name}(i0, i1, ...)`` computing the node's output (ndim >= 1)."""
    out = node.outputs[0]
    nd = out.ndim
    ins = node.inputs
    first, dyn = read_plan(ins, nd)
    lines = [f"def {{name}}({', '.join(f'i{k}' for k in range(len(ins)))}):"]
    lines += _shape_lines(ins, dyn, nd)
    sizes = f"({''.join(f'd{d}, ' for d in range(nd))})"
    alloc = f"alloc_empty({sizes}, {np_dtype(out.dtype)})"
    if op.inplace_input is None:
        lines.append(f"    out = {alloc}")
    else:
        # Input k is read through the output's own view, at the index written (a
        # fresh output, when input k broadcasts at run time, is first filled with
        # it). Read through a view of its own, input k aliases the output exactly:
        # LLVM's vectorizer checks at run time that the two ranges do not overlap
        # and, as they do, runs its scalar loop (benchmarks/notes.md: several times
        # slower per element).
        k = op.inplace_input
        lines += [f"    if i{k}.shape == {sizes}:",
                  f"        out = i{k}", "    else:", f"        out = {alloc}",
                  f"        broadcast_into(out, i{k})"]
    lines += [f"    x{k} = i{k}" for k, v in enumerate(ins) if v.ndim == 0 and first[k] == k]
    lines += [f"    f{k}, o{k}, e{k} = elem_view(i{k})" for k, v in enumerate(ins)
              if v.ndim and dyn[k] and k != op.inplace_input]
    lines.append("    fout, oout, eout = elem_view(out)")
    body_lines, expr = _scalar_body(op, node, [f"x{first[k]}" for k in range(len(ins))])
    lines += _loop_nest(ins, nd, body_lines, expr, dyn, "    ", op.inplace_input)
    lines.append("    return out")
    return "\n".join(lines) + "\n"


def _shape_lines(ins, dyn, nd):
    """Output sizes d0.. from `broadcast_shape`, which raises if the inputs do not broadcast."""
    padded = []
    for k, v in enumerate(ins):
        if v.ndim and dyn[k]:
            dims = ["-2"] * (nd - v.ndim) + ["-1"] * v.ndim   # padding, static 1
            for d in dyn[k]:
                dims[d] = f"i{k}.shape[{d - (nd - v.ndim)}]"
            padded.append(f"({', '.join(dims)}, )")
    if not padded:      # every input has static size 1 everywhere
        padded.append(f"({'-1, ' * nd})")
    sizes = "".join(f"d{d}, " for d in range(nd))
    return [f"    {sizes}= broadcast_shape(({', '.join(padded)}, ))"]


def _flat_index(view, dims, ndim, nd):
    """``f[np.uint64(o + j0 * e[0] + ...)]`` over output dims `dims` of an ndim-d array."""
    terms = "".join(f" + j{d} * e{view}[{d - (nd - ndim)}]" for d in dims)
    return f"f{view}[np.uint64(o{view}{terms})]"


def _loop_nest(ins, nd, body_lines, expr, dyn, indent, inplace_input=None):
    lines, ind = [], indent
    for d in range(nd):
        lines.append(f"{ind}for j{d} in range(d{d}):")
        ind += "    "
    for k, v in enumerate(ins):
        if v.ndim == 0 or ins.index(v) != k:
            continue
        if k == inplace_input:
            read = _flat_index("out", range(nd), nd, nd)
        else:
            read = _flat_index(k, dyn[k], v.ndim, nd) if dyn[k] else f"i{k}[{', '.join(['0'] * v.ndim)}]"
        lines.append(f"{ind}x{k} = {read}")
    lines += [f"{ind}{line}" for line in body_lines]
    lines.append(f"{ind}{_flat_index('out', range(nd), nd, nd)} = {expr}")
    return lines
