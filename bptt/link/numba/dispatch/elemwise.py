"""Elementwise ops lower to one explicit loop kernel per node (an inline scalar for 0-d).

An Elemwise whose output has ndim >= 1 becomes a kernel (one per distinct
source, shared between graphs) that

1. computes the output shape from the input shapes with NumPy broadcasting,
   and raises ``ValueError`` naming every input shape when they do not
   broadcast (never reading out of bounds);
2. allocates the output once and loops over it in C order, evaluating the
   scalar op's scalar expression (``numba_expr`` with every ndim 0; a
   `Composite` gives one local per inner value) for each element.

Two loop nests are emitted. When no dimension that *may* broadcast (unknown
static size) actually does at run time, the inputs are read with the plain
loop indices, which LLVM vectorizes; otherwise every such dimension is read
with index ``j * m``, ``m`` 0 or 1. Dimensions of static size 1 are read at
index 0 in both. Inputs may be strided views (DimShuffle): indexing handles
any layout. Inputs are aligned to the right, as NumPy broadcasts::

    out[j0, j1, j2] = f(x[j0, j1, j2], y[j1 * m, j2], z)      # z: a 0-d input (scalar)

Inputs whose dtype differs from the computation dtype are converted per
element; every scalar result is converted to the exact output dtype because
numba widens scalar arithmetic (int8 + int8 is int64 there, not in NumPy).
This replaces numba's array-expression machinery, which spent seconds of
compile time per ndim on its broadcasting code and allocated temporaries.
"""
from __future__ import annotations

from ....tensor import scalar_ops as so
from ....tensor.elemwise import Elemwise
from ..registry import Kernel, np_dtype, numba_funcify

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


def _exact(expr, dtype):
    return expr if dtype == "bool" else f"np.{dtype}({expr})"


def _scalar_body(op, node, names):
    """(lines, expression) computing one output element from scalar input `names`."""
    in_dtypes, out_dtype = op.compute_dtypes(node)
    args = [a if v.dtype == dt else so.numba_cast(a, dt, 0, src=v.dtype)
            for a, v, dt in zip(names, node.inputs, in_dtypes)]
    statements = getattr(op.scalar_op, "numba_statements", None)
    if statements is not None:     # a Composite: one local per inner value, exact dtypes
        return statements(args, in_dtypes)
    return [], _exact(op.scalar_op.numba_expr(args, in_dtypes, out_dtype, [0] * len(args)),
                      out_dtype)


@numba_funcify.register(Elemwise)
def _elemwise(op, node, ctx):
    if node.outputs[0].ndim == 0:
        return _inline_scalar(op, node, ctx)
    source = _with_helpers(loop_source(op, node), ctx)
    name = "fused" if hasattr(op.scalar_op, "numba_statements") else op.scalar_op.name
    return Kernel(source, f"elemwise_{name}")


def _inline_scalar(op, node, ctx):
    """0-d: every input is a numba scalar; one inline expression in the exact dtype."""
    names = ["{%d}" % k for k in range(len(node.inputs))]
    in_dtypes, out_dtype = op.compute_dtypes(node)
    args = [a if v.dtype == dt else so.numba_cast(a, dt, 0, src=v.dtype)
            for a, v, dt in zip(names, node.inputs, in_dtypes)]
    expr = op.scalar_op.numba_expr(args, in_dtypes, out_dtype, [0] * len(args))
    return _with_helpers(_exact(expr, out_dtype), ctx)


# -- the loop kernel ------------------------------------------------------------------

def loop_source(op, node):
    """Source of ``def {name}(i0, i1, ...)`` computing the node's output (ndim >= 1)."""
    out = node.outputs[0]
    nd = out.ndim
    ins = node.inputs
    # dyn[k]: output dims (aligned) where input k's size is not statically 1
    dyn = [[nd - v.ndim + d for d in range(v.ndim) if v.type.shape[d] != 1] for v in ins]
    lines = [f"def {{name}}({', '.join(f'i{k}' for k in range(len(ins)))}):"]
    lines += _shape_lines(ins, dyn, nd)
    lines.append(f"    out = np.empty(({''.join(f'd{d}, ' for d in range(nd))}), "
                 f"{np_dtype(out.dtype)})")
    lines += [f"    x{k} = i{k}" for k, v in enumerate(ins) if v.ndim == 0]
    body_lines, expr = _scalar_body(op, node, [f"x{k}" for k in range(len(ins))])
    general = _loop_nest(ins, nd, body_lines, expr, dyn, "        ", multipliers=True)
    if any(dyn):
        lines.append("    if bc:")
        lines += general
        lines.append("    else:")
        lines += _loop_nest(ins, nd, body_lines, expr, dyn, "        ", multipliers=False)
    else:
        lines += [line[4:] for line in general]
    lines.append("    return out")
    return "\n".join(lines) + "\n"


def _shape_lines(ins, dyn, nd):
    """Output sizes d0.. and the flag `bc` (a dimension of unknown static size broadcasts at
    run time) from `broadcast_shape`, which raises if the inputs do not broadcast; the
    multipliers m<k>_<d> of the general loop."""
    padded = []
    for k, v in enumerate(ins):
        if v.ndim:
            dims = ["-1"] * nd
            for d in dyn[k]:
                dims[d] = f"i{k}.shape[{d - (nd - v.ndim)}]"
            padded.append(f"({', '.join(dims)}, )")
    sizes = "".join(f"d{d}, " for d in range(nd))
    lines = [f"    {sizes}bc = broadcast_shape(({', '.join(padded)}, ))"]
    for k, v in enumerate(ins):
        lines += [f"    m{k}_{d} = 0 if i{k}.shape[{d - (nd - v.ndim)}] == 1 else 1" for d in dyn[k]]
    return lines


def _loop_nest(ins, nd, body_lines, expr, dyn, indent, multipliers):
    lines, ind = [], indent
    for d in range(nd):
        lines.append(f"{ind}for j{d} in range(d{d}):")
        ind += "    "
    for k, v in enumerate(ins):
        if v.ndim == 0:
            continue
        idx = []
        for d in range(nd - v.ndim, nd):
            if d not in dyn[k]:
                idx.append("0")
            else:
                idx.append(f"j{d} * m{k}_{d}" if multipliers else f"j{d}")
        lines.append(f"{ind}x{k} = i{k}[{', '.join(idx)}]")
    lines += [f"{ind}{line}" for line in body_lines]
    lines.append(f"{ind}out[{', '.join(f'j{d}' for d in range(nd))}] = {expr}")
    return lines
