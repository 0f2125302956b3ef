"""Matrix products added to something become `Gemm`; a later pass lets Gemm write in place.

`gemm_from_add` rewrites an elementwise add of float matrices one of whose
terms is a matrix product used nowhere else::

    add(z..., dot(x, y))         -> gemm(z, 1, x, y, 1)
    add(z..., neg(dot(x, y)))    -> gemm(z, -1, x, y, 1)      (z - dot(x, y))
    add(z..., mul(a, dot(x, y))) -> gemm(z, a, x, y, 1)       (a 0-d)

where ``z...`` are the other terms (added together first if several). The
product then needs no temporary of its own.

Not when the add is read only by an elementwise op and no Gemm could write into
z's buffer (z one term that is an input, a step's sequence row, a value read
elsewhere; a sum of several terms is a new buffer the Gemm may write into): that Gemm
would copy z into a new buffer and add the product there, and the elementwise
loop would then read it again. Left as ``z + dot(x, y)``, fusion makes the add
part of that loop, which reads z once and writes into the product's buffer (the
forward RNN step ``tanh(xU_t + h @ W + b)``: one pass over B x H fewer per step, and
no out-of-place gemm to compile).

`transpose_of_product` (a canonical rewrite) writes a transposed product
used nowhere else as the product of the transposed operands::

    dot(x, y).T   -> dot(y.T, x.T)

The reverse sweep makes the first form for every weight used transposed
(``h @ W.T``: ``g_W = (h.T @ g_y).T``). BLAS reads a transposed operand through
its flags at no cost, so the second form is the same product, and its result
is stored in row order: the elementwise loops after it (clipping, the
optimizer's update) read it in memory order, not one cache line per element
(benchmarks/notes.md). Values are equal to rounding (BLAS may block the sum
over the inner dimension differently).

`gemm_inplace` runs after every other rewrite and sets ``inplace`` on a
Gemm whose `z` is a matrix computed in this graph into a fresh buffer (by a
Dot, a Gemm or an elementwise loop), read by nothing but this Gemm (not an
output, no other client, no view of it). Graph inputs, constants, shared
values and scan step inputs are graph inputs here, so they are never
overwritten.
"""
from __future__ import annotations

from ...graph.rewriting import InToOut, can_replace, node_rewriter
from ..blas import FLOATS, Gemm, gemm_inplace as _gemm_inplace_op, gemm_no_inplace
from ..elemwise import Elemwise
from ..math import Dot, add
from ..scalar_ops import Add, Mul, Neg
from ..shape import DimShuffle
from ..type import constant
from .aliasing import fresh


def _is(node, scalar_op):
    return (node is not None and isinstance(node.op, Elemwise)
            and isinstance(node.op.scalar_op, scalar_op))


def _only_reader(fgraph, var, node):
    """Whether `node` is the one client of `var` (and `var` is no graph output)."""
    clients = fgraph.clients.get(var, [])
    return len(clients) == 1 and clients[0][0] is node and var not in fgraph.outputs


def _matrix_product(fgraph, term, reader, dtype):
    """``(x, y)`` if `term` is ``dot(x, y)`` of matrices in `dtype` that only `reader` reads."""
    node = term.owner
    if node is None or not isinstance(node.op, Dot) or not _only_reader(fgraph, term, reader):
        return None
    x, y = node.inputs
    if x.ndim != 2 or y.ndim != 2 or x.dtype != dtype or y.dtype != dtype:
        return None
    return x, y


def _scaled_product(fgraph, term, reader, dtype):
    """``(alpha, x, y)`` when `term` is ``dot``, ``-dot`` or ``a * dot`` (see module doc)."""
    xy = _matrix_product(fgraph, term, reader, dtype)
    if xy is not None:
        return (constant(1, dtype=dtype),) + xy
    node = term.owner
    if not _only_reader(fgraph, term, reader):
        return None
    if _is(node, Neg):
        xy = _matrix_product(fgraph, node.inputs[0], node, dtype)
        return None if xy is None else (constant(-1, dtype=dtype),) + xy
    if _is(node, Mul) and len(node.inputs) == 2:
        for a, d in (node.inputs, node.inputs[::-1]):
            xy = _matrix_product(fgraph, d, node, dtype)
            if xy is not None and a.ndim == 0 and a.dtype == dtype:
                return (a,) + xy
    return None


@node_rewriter([Elemwise])
def gemm_from_add(fgraph, node):
    """``z + dot(x, y)`` (and ``- dot``, ``+ a * dot``) -> ``gemm(z, alpha, x, y, 1)``."""
    out = node.outputs[0]
    if not _is(node, Add) or out.ndim != 2 or out.dtype not in FLOATS or len(node.inputs) < 2:
        return None
    for k, term in enumerate(node.inputs):
        found = _scaled_product(fgraph, term, node, out.dtype)
        if found is None:
            continue
        rest = node.inputs[:k] + node.inputs[k + 1:]
        z = rest[0] if len(rest) == 1 else add(*rest)
        if z.dtype != out.dtype or z.ndim > 2:
            continue
        if len(rest) == 1 and _feeds_elemwise(fgraph, out) and not _writable(fgraph, z, node):
            continue   # the elementwise loop adds z as it reads the product: no copy of z
        alpha, x, y = found
        result = gemm_no_inplace(z, alpha, x, y, constant(1, dtype=out.dtype))
        if result.type == out.type:
            return [result]
    return None


def _feeds_elemwise(fgraph, var):
    """Whether `var`'s one reader is an elementwise op (which fusion will join it to)."""
    clients = fgraph.clients.get(var, [])
    return (len(clients) == 1 and var not in fgraph.outputs
            and isinstance(getattr(clients[0][0], "op", None), Elemwise))


def _writable(fgraph, z, reader):
    """Whether a Gemm of `z` replacing `reader` could write into z's buffer (`gemm_inplace`)."""
    return _fresh(z) and _only_reader(fgraph, z, reader)


def _fresh(var):
    """Whether the compiled code computes matrix `var` into a buffer of its own (no view):
    what `aliasing.fresh` says of any value (an `Alloc`'s zeros, a new elementwise
    result, not the input a one-input add passes through), and a product's result."""
    node = var.owner
    if node is None or var.ndim != 2:
        return False
    return isinstance(node.op, (Dot, Gemm)) or fresh(var)


@node_rewriter([DimShuffle])
def transpose_of_product(fgraph, node):
    """``dot(x, y).T`` -> ``dot(y.T, x.T)`` for matrices, when only the transpose reads
    the product (module docstring)."""
    product = node.inputs[0]
    if node.op.new_order != (1, 0) or product.owner is None \
            or not isinstance(product.owner.op, Dot) or not _only_reader(fgraph, product, node):
        return None
    x, y = product.owner.inputs
    if x.ndim != 2 or y.ndim != 2:
        return None
    new = Dot()(DimShuffle(2, (1, 0))(y), DimShuffle(2, (1, 0))(x))
    return [new] if can_replace(node.outputs[0], new) else None


@node_rewriter([gemm_no_inplace])
def gemm_inplace(fgraph, node):
    """``Gemm(inplace=False)`` -> ``Gemm(inplace=True)`` when no one else can see `z`."""
    z = node.inputs[0]
    if not (_fresh(z) and _only_reader(fgraph, z, node) and z.type == node.outputs[0].type):
        return None
    return [_gemm_inplace_op(*node.inputs)]


gemm_pass = InToOut([gemm_from_add], name="gemm")
gemm_inplace_pass = InToOut([gemm_inplace], name="gemm_inplace")
