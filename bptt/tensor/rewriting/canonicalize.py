"""Algebraic canonicalizations: remove work that changes nothing.

Gradient graphs are full of it: the reverse sweep seeds with ones, rules
multiply by partials that are 1, zeros pad disconnected terms, and views
are stacked on views. Each rewrite here removes one such pattern:

* ``x * 1``, ``x + 0`` and one-operand ``mul(x)``, ``add(x)``, where the 1 or 0 may be a constant array or a
  broadcast/alloc/dimshuffle of one, and is dropped only when the remaining
  operands already give the output's dtype and (provably) shape;
* ``-(-x)`` -> x;
* ``DimShuffle(DimShuffle(x))`` -> one DimShuffle; an identity DimShuffle -> x;
  ``dot(x, y).T`` -> ``dot(y.T, x.T)`` (`blas.transpose_of_product`);
* ``cast(x, x.dtype)`` -> x;
* ``x ** 1`` -> x and ``x ** 2`` -> ``x * x`` (floats; the gradient of ``x ** 2``
  is ``2 * x ** 1``);
* ``switch(c, a, b)`` with a constant condition -> the chosen branch (broadcast
  to the output's shape when the branch alone does not have it);
* an elemwise operand ``BroadcastTo(v, shp)`` or ``Alloc(v, *dims)`` -> v when the
  other operands already give the output's shape (``mul(BroadcastTo(0.5, shape(x)),
  g)`` -> ``mul(0.5, g)``);
* ``inc(zeros[i], a) + inc(zeros[j], b)`` -> ``inc(inc(zeros[i], a)[j], b)`` (one
  buffer for the gradient of several slices of one value; when the slices cover
  the buffer, `subtensor.incs_into_zeros_to_join` makes the chain a Join);
* ``0.5 * (2.0 * x)`` -> x: the constant factors of a product are multiplied
  at compile time (`mul_constants`, exactness conditions in its docstring);
* ``sum(x, axis)`` over axes of static length 1 -> a DimShuffle dropping them;
* ``set_subtensor(x[whole], y)`` (or ``inc_subtensor`` into zeros) -> y when y
  provably has x's shape (the gradient of ``h0[None]`` fed to a scan).

Signed zeros: ``0 + (-0.0)`` and NumPy's ``sum([-0.0])`` are ``+0.0``, so where
``add_zero``, ``sum_of_length_one_axes`` or ``write_of_whole`` remove such an
operation a ``-0.0`` stays negative; the two compare equal. Nothing else changes.
"""
from __future__ import annotations

import numpy as np

from ...graph.basic import Constant
from ...graph.rewriting import can_replace, node_rewriter
from ..basic import Alloc
from ..elemwise import Elemwise
from ..math import Sum
from ..scalar_ops import Add, Cast, Identity, Mul, Neg, Pow, Switch
from ..shape import BroadcastTo, DimShuffle
from ..type import TensorConstant, TensorType
from .shape import whole_slice
from .sizes import broadcast_keys, shape_keys, size_facts, subtensor_class


def filled_with(v):
    """The scalar every element of `v` provably equals, or None.

    Looks through the ops that only copy, spread or select a value: Alloc,
    BroadcastTo, DimShuffle, basic indexing, identity and value-preserving casts.
    """
    views = (Alloc, BroadcastTo, DimShuffle) + tuple(c for c in [subtensor_class()] if c)
    while True:
        if isinstance(v, Constant):
            data = np.asarray(v.data)
            if data.size == 0:
                return None
            first = data.flat[0]
            return first.item() if np.all(data == first) else None
        node = v.owner
        if node is None:
            return None
        op = node.op
        if isinstance(op, views):
            v = node.inputs[0]
        elif isinstance(op, Elemwise) and isinstance(op.scalar_op, (Identity, Cast)):
            v = node.inputs[0]
            value = filled_with(v)
            if value is None or np.asarray(value).astype(node.outputs[0].dtype) != value:
                return None
            return value
        else:
            return None


def _elemwise_of(node, scalar_cls):
    return isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, scalar_cls)


def _broadcast_keys(fgraph, inputs, ndim):
    """Keys of the broadcast shape of `inputs`."""
    return broadcast_keys(size_facts(fgraph), [shape_keys(fgraph, x) for x in inputs], ndim)


def _drop_neutral(fgraph, node, neutral):
    """The output of `node` recomputed without operands filled with `neutral`, or None."""
    out = node.outputs[0]
    rest = [x for x in node.inputs if filled_with(x) != neutral]
    if len(node.inputs) == 1:   # a one-operand sum or product (a partial of mul(x, y))
        rest = list(node.inputs)
    elif len(rest) == len(node.inputs) or not rest:
        return None
    if max(x.ndim for x in rest) != out.ndim:
        return None
    if _broadcast_keys(fgraph, rest, out.ndim) != list(shape_keys(fgraph, out)):
        return None
    new = rest[0] if len(rest) == 1 else node.op(*rest)
    if new.dtype != out.dtype or not can_replace(out, new):
        return None
    return [new]


@node_rewriter([Elemwise])
def mul_by_one(fgraph, node):
    """``x * 1`` -> x (the 1 may be a broadcast ones array, as the sweep's seed)."""
    if _elemwise_of(node, Mul):
        return _drop_neutral(fgraph, node, 1)
    return None


@node_rewriter([Elemwise])
def add_zero(fgraph, node):
    """``x + 0`` -> x (the 0 may be a zeros array from a disconnected gradient)."""
    if _elemwise_of(node, Add):
        return _drop_neutral(fgraph, node, 0)
    return None


@node_rewriter([Elemwise])
def neg_neg(fgraph, node):
    """``-(-x)`` -> x."""
    if not _elemwise_of(node, Neg):
        return None
    inner = node.inputs[0].owner
    if inner is not None and _elemwise_of(inner, Neg):
        x = inner.inputs[0]
        if can_replace(node.outputs[0], x):
            return [x]
    return None


@node_rewriter([Elemwise])
def useless_cast(fgraph, node):
    """``cast(x, d)`` where x already has dtype d -> x."""
    if _elemwise_of(node, Cast) and node.inputs[0].dtype == node.op.scalar_op.dtype:
        x = node.inputs[0]
        if can_replace(node.outputs[0], x):
            return [x]
    return None


@node_rewriter([DimShuffle])
def dimshuffle_of_dimshuffle(fgraph, node):
    """Two stacked DimShuffles -> one (or none if they compose to the identity)."""
    inner = node.inputs[0].owner
    if inner is None or not isinstance(inner.op, DimShuffle):
        return None
    x = inner.inputs[0]
    first = inner.op.new_order
    order = tuple("x" if o == "x" else first[o] for o in node.op.new_order)
    new = x if order == tuple(range(x.ndim)) else DimShuffle(x.ndim, order)(x)
    return [new] if can_replace(node.outputs[0], new) else None


@node_rewriter([DimShuffle])
def useless_dimshuffle(fgraph, node):
    """A DimShuffle that keeps every axis in place -> its input."""
    x = node.inputs[0]
    if node.op.new_order == tuple(range(x.ndim)) and can_replace(node.outputs[0], x):
        return [x]
    return None


def _keeps_shape(fgraph, inputs, out):
    """Whether an elemwise of `inputs` provably has `out`'s ndim and run-time shape."""
    if max(x.ndim for x in inputs) != out.ndim:
        return False
    return _broadcast_keys(fgraph, inputs, out.ndim) == list(shape_keys(fgraph, out))


@node_rewriter([Elemwise])
def pow_small_int(fgraph, node):
    """``x ** 1`` -> x, ``x ** 2`` -> ``x * x`` (float x; both exact in IEEE arithmetic)."""
    if not _elemwise_of(node, Pow):
        return None
    x, p = node.inputs
    out = node.outputs[0]
    exponent = filled_with(p)
    if exponent not in (1, 2) or x.dtype != out.dtype or not out.dtype.startswith("float") \
            or not _keeps_shape(fgraph, [x], out):
        return None
    from ..math import mul

    new = x if exponent == 1 else mul(x, x)
    return [new] if can_replace(out, new) else None


@node_rewriter([Elemwise])
def switch_constant_condition(fgraph, node):
    """``switch(c, a, b)`` with c provably all true (false) -> a (b), broadcast as needed."""
    if not _elemwise_of(node, Switch):
        return None
    cond, a, b = node.inputs
    value = filled_with(cond)
    if value is None:
        return None
    branch, out = (a if value else b), node.outputs[0]
    if branch.dtype != out.dtype:
        from ..basic import cast

        branch = cast(branch, out.dtype)
    if not _keeps_shape(fgraph, [branch], out):
        from ..basic import alloc
        from ..shape import broadcast_shapes, shape_tuple

        branch = alloc(branch, *broadcast_shapes(*[shape_tuple(x) for x in node.inputs]))
    return [branch] if can_replace(out, branch) else None


@node_rewriter([Elemwise])
def switch_same_branches(fgraph, node):
    """``switch(c, a, a)`` -> a, broadcast as needed (shape programs' broadcast sizes:
    ``switch(eq(n, 1), n, n)`` once both sides are one size)."""
    if not _elemwise_of(node, Switch):
        return None
    _, a, b = node.inputs
    out = node.outputs[0]
    if a is not b or a.dtype != out.dtype or not _keeps_shape(fgraph, [a], out):
        return None
    return [a] if can_replace(out, a) else None


@node_rewriter([Elemwise])
def elemwise_of_broadcast(fgraph, node):
    """An operand ``BroadcastTo(v, shp)`` / ``Alloc(v, *dims)`` -> v when the other
    operands already give the output's shape (elemwise broadcasting spreads v)."""
    out = node.outputs[0]
    inputs = list(node.inputs)
    changed = False
    for k, x in enumerate(inputs):
        if x.owner is None or not isinstance(x.owner.op, (BroadcastTo, Alloc)):
            continue
        trial = inputs[:k] + [x.owner.inputs[0]] + inputs[k + 1:]
        if _keeps_shape(fgraph, trial, out):
            inputs, changed = trial, True
    if not changed:
        return None
    new = node.op(*inputs)
    return [new] if new.dtype == out.dtype and can_replace(out, new) else None


def _inc_into_zeros(v):
    """(zeros, op, y, index) when `v` is ``inc_subtensor(zeros[idx], y)`` (or a basic
    ``set_subtensor`` into zeros, the same thing), else None."""
    node = v.owner
    op = None if node is None else node.op
    if type(op).__name__ not in ("IncSubtensor", "AdvancedIncSubtensor"):
        return None
    if op.set_instead_of_inc:
        if type(op).__name__ != "IncSubtensor":
            return None     # repeated advanced indices: the last write wins, not the sum
        op = type(op)(op.idx_list, False)
    zeros, y, *index = node.inputs
    return (zeros, op, y, index) if filled_with(zeros) == 0 else None


@node_rewriter([Elemwise])
def add_of_incs_into_zeros(fgraph, node):
    """``inc(zeros[i], a) + inc(zeros[j], b)`` -> ``inc(inc(zeros[i], a)[j], b)``: one
    zeros buffer instead of one per term (the gradient of slices of one value)."""
    if not _elemwise_of(node, Add):
        return None
    out = node.outputs[0]
    incs = [(x, _inc_into_zeros(x)) for x in node.inputs]
    incs = [(x, parts) for x, parts in incs if parts is not None]
    if len(incs) < 2:
        return None
    first, (zeros, op, y, index) = incs[0]
    acc, merged = op(zeros, y, *index), {first}
    keys = shape_keys(fgraph, zeros)
    for x, (z, op, y, index) in incs[1:]:
        if z.type == zeros.type and shape_keys(fgraph, z) == keys:
            acc = op(acc, y, *index)
            merged.add(x)
    if len(merged) < 2:
        return None
    rest = [x for x in node.inputs if x not in merged]
    new = node.op(acc, *rest) if rest else acc
    if new.dtype != out.dtype or not _keeps_shape(fgraph, [acc] + rest, out) \
            or not can_replace(out, new):
        return None
    return [new]


# -- constant factors of a product ---------------------------------------------------

def _uniform_constant(v):
    return isinstance(v, Constant) and filled_with(v) is not None


def _scaled_terms(fgraph, v, dtype, alone):
    """(constants, terms) when `v` is ``mul(constants..., terms...)`` computed in `dtype`
    and read only by the product being rewritten, with one term unless `v` is the
    product's only non-constant operand (then opening it keeps the terms' order and
    grouping); else None."""
    node = v.owner
    if node is None or not _elemwise_of(node, Mul) or v.dtype != dtype \
            or len(fgraph.clients.get(v, ())) != 1 or v in fgraph.outputs:
        return None
    consts = [x for x in node.inputs if _uniform_constant(x)]
    terms = [x for x in node.inputs if not _uniform_constant(x)]
    return (consts, terms) if consts and terms and (len(terms) == 1 or alone) else None


def _power_of_two(value):
    return bool(np.isfinite(value) and value != 0 and abs(np.frexp(value)[0]) == 0.5)


def _exact_product(values, dtype):
    """The product of `values` in `dtype` if it is exact (no rounding, overflow or
    underflow), else None. Integer products wrap like the loop's arithmetic."""
    from fractions import Fraction

    with np.errstate(over="ignore", under="ignore"):
        prod = np.multiply.reduce(np.asarray(values, dtype=dtype), dtype=dtype)
    if dtype.startswith(("int", "uint")):
        return prod
    if not all(np.isfinite(values)) or not np.isfinite(prod):
        return None
    exact = Fraction(1)
    for v in values:
        exact *= Fraction(float(v))
    return prod if Fraction(float(prod)) == exact else None


@node_rewriter([Elemwise])
def mul_constants(fgraph, node):
    """``c1 * (c2 * x) * y`` -> ``(c1*c2) * x * y`` (and to ``x * y`` when c1*c2 is 1).

    The constants (uniform arrays, e.g. the (1,1,1) 0.5 of a loss's gradient)
    are multiplied once at compile time, in the output's dtype. A nested
    product read by nothing else is opened when it is ``mul(constants..., one
    term)``, or when it is the only non-constant operand. The values stay the same bit for bit: scaling by a power of
    two is exact, so the rewrite fires only when every constant but at most one
    is a power of two, when their product is exact, and, if one is not a power
    of two, when only one non-constant factor remains (so its single rounding
    happens on the same value). Integer products wrap the same in any order.
    (The exception is an intermediate of the original that overflowed or went
    subnormal: ``0.5 * (2.0 * x)`` for x above half the largest float.)
    """
    out = node.outputs[0]
    dtype = out.dtype
    if not _elemwise_of(node, Mul) or not dtype.startswith(("float", "int", "uint")):
        return None
    consts, terms, opened = [], [], False
    alone = sum(not _uniform_constant(x) for x in node.inputs) == 1
    for x in node.inputs:
        scaled = None if _uniform_constant(x) else _scaled_terms(fgraph, x, dtype, alone)
        if _uniform_constant(x):
            consts.append(x)
        elif scaled is not None:
            consts.extend(scaled[0])
            terms.extend(scaled[1])
            opened = True
        else:
            terms.append(x)
    if not terms or len(consts) < 2 and not opened:
        return None
    values = [np.asarray(filled_with(c)).astype(dtype) for c in consts]
    if dtype.startswith("float"):
        odd = [v for v in values if not _power_of_two(v)]
        if len(odd) > 1 or (odd and len(terms) > 1):
            return None
    prod = _exact_product(values, dtype)
    if prod is None:
        return None
    return _product(fgraph, node, prod, consts, terms)


def _product(fgraph, node, prod, consts, terms):
    """``prod * terms`` with out's type: prod 0-d when the terms give out's shape, else
    shaped like the broadcast of the constants; dropped when 1 and not needed."""
    out = node.outputs[0]
    if _keeps_shape(fgraph, terms, out):
        shape = ()
        factors = terms if prod == 1 else [TensorConstant(TensorType(out.dtype, ()),
                                                          np.asarray(prod, out.dtype))] + terms
    else:
        shape = np.broadcast_shapes(*[np.shape(c.data) for c in consts])
        data = np.full(shape, prod, dtype=out.dtype)
        factors = [TensorConstant(TensorType(out.dtype, data.shape), data)] + terms
    new = factors[0] if len(factors) == 1 else node.op(*factors)
    return [new] if new.dtype == out.dtype and can_replace(out, new) else None


# -- reductions and writes that change nothing ---------------------------------------

@node_rewriter([Sum])
def sum_of_length_one_axes(fgraph, node):
    """``sum(x, axis)`` over axes of static length 1 -> a DimShuffle dropping them
    (then the sum over the other axes, if any)."""
    x, out = node.inputs[0], node.outputs[0]
    ones = [a for a in node.op.axis if x.type.shape[a] == 1]
    if not ones or out.dtype != x.dtype:
        return None
    kept = [d for d in range(x.ndim) if d not in ones]
    new = DimShuffle(x.ndim, tuple(kept))(x)
    rest = [kept.index(a) for a in node.op.axis if a not in ones]
    if rest:
        new = Sum(rest)(new)
    return [new] if new.type == out.type else None


def _covers(fgraph, op, x, index):
    """Whether the basic index (`op.idx_list`, `index`) selects the whole of `x`."""
    if len(op.idx_list) > x.ndim:
        return False
    scalars = iter(index)
    for d, entry in enumerate(op.idx_list):
        if not isinstance(entry, tuple):
            return False
        parts = [next(scalars) if p == "?" else p for p in entry]
        if not whole_slice(fgraph, x, d, *parts):
            return False
    return True


def _write_of_whole_rewriter():
    try:
        from ..subtensor import IncSubtensor
    except ImportError:
        return None

    @node_rewriter([IncSubtensor])
    def write_of_whole(fgraph, node):
        """``set_subtensor(x[whole], y)`` / ``inc_subtensor(zeros[whole], y)`` -> y when y
        provably has x's shape (a dimension of static size 1 in x needs no proof: y's
        size there is 1, or the write fails; y gets that static size by ``y[0][None]``)."""
        x, y, *index = node.inputs
        out = node.outputs[0]
        if type(node.op) is not IncSubtensor or y.ndim != x.ndim \
                or not (node.op.set_instead_of_inc or filled_with(x) == 0) \
                or not _covers(fgraph, node.op, x, index):
            return None
        fix = []
        for d, (kx, ky) in enumerate(zip(shape_keys(fgraph, x), shape_keys(fgraph, y))):
            if kx != ky and x.type.shape[d] != 1:
                return None       # y may broadcast along d: the write is not y
            if x.type.shape[d] == 1 and y.type.shape[d] != 1:
                fix.append(d)
        new = y
        if fix:
            new = y[tuple(0 if d in fix else slice(None) for d in range(y.ndim))]
            order, k = [], 0
            for d in range(y.ndim):
                order.append("x" if d in fix else k)
                k += d not in fix
            new = DimShuffle(new.ndim, tuple(order))(new)
        return [new] if new.type == out.type else None

    return write_of_whole


def canonical_rewriters():
    """The algebraic rewrites, in the order they are tried on a node (with the
    indexing ones of `subtensor`: the scan gradient's step simplification runs
    this list, not the pass list)."""
    from .blas import transpose_of_product
    from .subtensor import subtensor_rewriters

    return [mul_by_one, add_zero, neg_neg, useless_cast, dimshuffle_of_dimshuffle,
            useless_dimshuffle, transpose_of_product, pow_small_int, switch_constant_condition,
            switch_same_branches, elemwise_of_broadcast, add_of_incs_into_zeros, mul_constants,
            sum_of_length_one_axes] + [rw for rw in [_write_of_whole_rewriter()] if rw] \
        + subtensor_rewriters()
