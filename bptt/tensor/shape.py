"""Shapes and views: `Shape`, `Shape_i`, `Reshape`, `DimShuffle`, `BroadcastTo`, `SumTo`.

`SumTo` is the one op the reverse sweep uses to unbroadcast a gradient: it
sums a gradient down to the run-time sizes of the input it belongs to (given
as int64 scalars, not as a tensor), so broadcasting that happens only at run
time (a dimension of unknown size that turns out to be 1) still gets a
correct gradient.
"""
from __future__ import annotations

import numpy as np

from ..graph.basic import Apply, Constant, Variable
from ..graph.op import Op
from .type import TensorType, as_tensor_variable


class Shape(Op):
    """The shape of a tensor as an int64 vector."""

    __props__ = ()
    no_gradient = "integer output"

    def make_node(self, x):
        x = as_tensor_variable(x)
        return Apply(self, [x], [TensorType("int64", (x.ndim,))()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0].shape, dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [(as_tensor_variable(node.inputs[0].ndim),)]


class Shape_i(Op):  # noqa: N801  (Theano's name)
    """Size of dimension `i` as an int64 scalar."""

    __props__ = ("i",)
    no_gradient = "integer output"

    def __init__(self, i):
        self.i = int(i)

    def make_node(self, x):
        x = as_tensor_variable(x)
        if not 0 <= self.i < x.ndim:
            raise ValueError(f"Shape_i: dimension {self.i} out of range for {x.type}")
        return Apply(self, [x], [TensorType("int64", ())()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(inputs[0].shape[self.i], dtype="int64")

    def infer_shape(self, fgraph, node, input_shapes):
        return [()]


def shape(x):
    """Symbolic shape vector of `x`."""
    return Shape()(x)


def shape_i(x, i):
    """Size of dimension `i` of `x`: a constant when statically known."""
    x = as_tensor_variable(x)
    i = i % x.ndim if x.ndim else i
    if x.type.shape[i] is not None:
        return as_tensor_variable(np.int64(x.type.shape[i]))
    return Shape_i(i)(x)


def shape_tuple(x):
    """A tuple of scalar size variables, one per dimension."""
    return tuple(shape_i(x, i) for i in range(as_tensor_variable(x).ndim))


def broadcast_shapes(*shapes):
    """Symbolic broadcast of shape tuples (each entry a scalar variable or int).

    A size is the other one where it is 1 (so 1 and 0 give 0, as NumPy); a
    known size other than 1 is the result (any other size there is 1 or an error).
    """
    from .math import eq, switch

    ndim = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    out = []
    for sizes in zip(*padded):
        sizes = [s for s in sizes if not (_is_const(s) and _const_val(s) == 1)]
        if not sizes:
            out.append(as_tensor_variable(np.int64(1)))
            continue
        known = [s for s in sizes if _is_const(s)]
        if known:
            out.append(as_tensor_variable(np.int64(_const_val(known[0]))))
            continue
        m = as_tensor_variable(sizes[0])
        for s in sizes[1:]:
            m = switch(eq(m, 1), s, m)
        out.append(m)
    return tuple(out)


def _is_const(s):
    from ..graph.basic import Constant

    return isinstance(s, (int, np.integer)) or isinstance(s, Constant)


def _const_val(s):
    return int(s.data) if isinstance(s, Variable) else int(s)


def _as_shape_vector(shape_arg, what):
    """Turn a tuple of ints / scalar variables, or an int vector variable, into an int64 vector."""
    from .basic import cast, stack

    if isinstance(shape_arg, Variable):
        v = as_tensor_variable(shape_arg)
        if v.ndim != 1 or v.dtype.startswith("float") or v.dtype == "bool":
            raise TypeError(f"{what}: shape must be an integer vector, got {v.type}")
        return cast(v, "int64") if v.dtype != "int64" else v
    parts = list(shape_arg) if isinstance(shape_arg, (list, tuple)) else [shape_arg]
    if all(isinstance(p, (int, np.integer)) for p in parts):
        return as_tensor_variable(np.asarray(parts, dtype="int64"))
    elems = []
    for p in parts:
        p = as_tensor_variable(p)
        if p.ndim != 0 or p.dtype.startswith("float") or p.dtype == "bool":
            raise TypeError(f"{what}: shape entries must be integer scalars, got {p.type}")
        elems.append(cast(p, "int64") if p.dtype != "int64" else p)
    return stack(elems)


def _static_entries(vec, n):
    """Known entries of a shape vector built by `_as_shape_vector` (None where unknown)."""
    from ..graph.basic import Constant

    if isinstance(vec, Constant):
        return tuple(int(v) for v in vec.data)
    node = vec.owner
    if node is not None and type(node.op).__name__ == "MakeVector":
        return tuple(int(i.data) if isinstance(i, Constant) else None for i in node.inputs)
    return (None,) * n


def _checked_shape_vector(shp, ndim, what):
    """`shp` as a variable, if it is an integer vector that may have `ndim` entries."""
    shp = as_tensor_variable(shp)
    if shp.ndim != 1 or shp.type.shape[0] not in (None, ndim) or \
            shp.dtype.startswith("float") or shp.dtype == "bool":
        raise TypeError(f"{what}: expected an integer shape vector of length {ndim}, "
                        f"got {shp.type}")
    return shp


class Reshape(Op):
    """Reshape to a shape vector of length `ndim` (one entry may be -1)."""

    __props__ = ("ndim",)

    def __init__(self, ndim):
        self.ndim = int(ndim)

    def make_node(self, x, shp):
        x = as_tensor_variable(x)
        shp = _checked_shape_vector(shp, self.ndim, "Reshape")
        entries = _static_entries(shp, self.ndim)
        if sum(e == -1 for e in entries) > 1 or any(e is not None and e < -1 for e in entries):
            raise ValueError(f"reshape: invalid shape {entries} (at most one -1, no other "
                             "negative sizes)")
        static = tuple(None if (s is None or s < 0) else s for s in entries)
        if None not in x.type.shape and None not in entries:
            total = int(np.prod(x.type.shape))
            known = int(np.prod([s for s in static if s is not None]))
            if -1 in entries and known and total % known == 0:
                static = tuple(total // known if s is None else s for s in static)
            if None not in static and int(np.prod(static)) != total:
                raise ValueError(f"reshape: cannot reshape {x.type} to {entries}")
        return Apply(self, [x, shp], [TensorType(x.dtype, static)()])

    def perform(self, node, inputs, output_storage):
        x, shp = inputs
        sizes = tuple(int(s) for s in shp)
        try:
            output_storage[0][0] = np.reshape(x, sizes)
        except ValueError as exc:
            raise ValueError(f"cannot reshape an array of shape {x.shape} to {sizes}") from exc

    def L_op(self, inputs, outputs, output_grads):
        from ..graph.gradient_types import disconnected_grad

        x, _ = inputs
        return [reshape(output_grads[0], shape(x), ndim=x.ndim), disconnected_grad()]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            from .basic import zeros_like

            return [zeros_like(self(*inputs))]
        return [self(eval_points[0], inputs[1])]

    def connection_pattern(self, node):
        return [[True], [False]]

    def infer_shape(self, fgraph, node, input_shapes):
        from .math import int_div

        sizes = _shape_entries(node.inputs[1], self.ndim)
        entries = _static_entries(node.inputs[1], self.ndim)
        if -1 in entries:
            k = entries.index(-1)
            total = _product(input_shapes[0])
            sizes[k] = int_div(total, _product(sizes[:k] + sizes[k + 1:]))
        return [tuple(sizes)]


def _product(sizes):
    """Product of scalar sizes; a constant when they all are (keeps static shapes)."""
    from .math import mul

    sizes = list(sizes)
    if all(_is_const(s) for s in sizes):
        return as_tensor_variable(np.int64(np.prod([_const_val(s) for s in sizes], dtype="int64")))
    return sizes[0] if len(sizes) == 1 else mul(*sizes)


def _shape_entries(vec, n):
    """Scalar variables for the entries of an int64 shape vector of length n."""
    from ..graph.basic import Constant

    if isinstance(vec, Constant):
        return [as_tensor_variable(np.int64(v)) for v in vec.data]
    if vec.owner is not None and type(vec.owner.op).__name__ == "MakeVector":
        return list(vec.owner.inputs)
    from .subtensor import getitem

    return [getitem(vec, i) for i in range(n)]


def reshape(x, newshape, ndim=None):
    """`x` with shape `newshape` (a tuple of ints / scalars or an int vector)."""
    x = as_tensor_variable(x)
    vec = _as_shape_vector(newshape, "reshape")
    n = vec.type.shape[0] if ndim is None else ndim
    if n is None:
        raise ValueError("reshape: the length of a symbolic shape vector is unknown; pass ndim=")
    return Reshape(n)(x, vec)


class DimShuffle(Op):
    """Permute dimensions, insert broadcastable ones ('x') and drop size-1 ones.

    `new_order` lists, for each output dimension, an input axis or 'x'.
    Input axes not listed must have static size 1 (they are dropped).
    """

    __props__ = ("input_ndim", "new_order")

    def __init__(self, input_ndim, new_order):
        self.input_ndim = int(input_ndim)
        self.new_order = tuple(o if o == "x" else int(o) for o in new_order)
        axes = [o for o in self.new_order if o != "x"]
        if len(set(axes)) != len(axes) or any(not 0 <= a < self.input_ndim for a in axes):
            raise ValueError(f"dimshuffle: invalid pattern {new_order} for {input_ndim} dims")
        self.drop = tuple(i for i in range(self.input_ndim) if i not in axes)
        self.perm = tuple(axes)

    def __str__(self):
        return f"DimShuffle{{{','.join(str(o) for o in self.new_order)}}}"

    def make_node(self, x):
        x = as_tensor_variable(x)
        if x.ndim != self.input_ndim:
            raise TypeError(f"{self} expects {self.input_ndim} dims, got {x.type}")
        for d in self.drop:
            if x.type.shape[d] != 1:
                raise ValueError(f"{self}: cannot drop dimension {d} of {x.type} "
                                 "(only dimensions of static size 1 can be dropped)")
        shape = tuple(1 if o == "x" else x.type.shape[o] for o in self.new_order)
        return Apply(self, [x], [TensorType(x.dtype, shape)()])

    def perform(self, node, inputs, output_storage):
        x = inputs[0]
        y = np.transpose(x, self.drop + self.perm).reshape(
            tuple(1 if o == "x" else x.shape[o] for o in self.new_order))
        output_storage[0][0] = y

    def L_op(self, inputs, outputs, output_grads):
        (g,) = output_grads
        # Sum over inserted axes, then undo the permutation and restore dropped axes.
        inserted = tuple(i for i, o in enumerate(self.new_order) if o == "x")
        from .math import Sum

        if inserted:
            g = Sum(inserted)(g)
        kept = [o for o in self.new_order if o != "x"]
        back = []
        for i in range(self.input_ndim):
            back.append("x" if i in self.drop else kept.index(i))
        return [DimShuffle(len(kept), back)(g)]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            from .basic import zeros_like

            return [zeros_like(self(inputs[0]))]
        return [self(eval_points[0])]

    def infer_shape(self, fgraph, node, input_shapes):
        (s,) = input_shapes
        one = as_tensor_variable(np.int64(1))
        return [tuple(one if o == "x" else s[o] for o in self.new_order)]


def dimshuffle(x, pattern):
    x = as_tensor_variable(x)
    pattern = tuple(pattern)
    if pattern == tuple(range(x.ndim)):
        return x
    return DimShuffle(x.ndim, pattern)(x)


def transpose(x, axes=None):
    x = as_tensor_variable(x)
    if axes is None:
        axes = tuple(reversed(range(x.ndim)))
    return dimshuffle(x, tuple(a % x.ndim for a in axes))


def specify_shape(x, shape):
    """`x`, whose shape is `shape` (ints, scalar variables or None for any size).

    The entries become static where they are constants, and are checked when
    the graph runs: a value of another shape raises a ValueError naming both.
    """
    from ..graph.basic import Constant
    from .assertion import check
    from .math import and_, eq

    x = as_tensor_variable(x)
    shape = list(shape)
    if len(shape) != x.ndim:
        raise ValueError(f"specify_shape: {len(shape)} entries given for a {x.ndim}-d tensor "
                         f"({x.type})")
    actual = [shape_i(x, i) for i in range(x.ndim)]
    sizes = [a if s is None else as_tensor_variable(s) for a, s in zip(actual, shape)]
    pairs = [(a, s) for a, s, given in zip(actual, sizes, shape) if given is not None]
    if not pairs:
        return x
    cond = eq(*pairs[0])
    for a, s in pairs[1:]:
        cond = and_(cond, eq(a, s))
    slots = ", ".join("{}" for _ in pairs)
    checked = check(x, cond, f"specify_shape: expected the sizes ({slots}) of the dimensions "
                    f"given, got ({slots}) (x of type {x.type})",
                    *[s for _, s in pairs], *[a for a, _ in pairs])
    static = [s.data if isinstance(s, Constant) else None for s in sizes]
    if all(v is None for v in static):
        return checked
    return reshape(checked, sizes)


def shape_padleft(x, n=1):
    x = as_tensor_variable(x)
    return dimshuffle(x, ("x",) * n + tuple(range(x.ndim)))


def shape_padright(x, n=1):
    x = as_tensor_variable(x)
    return dimshuffle(x, tuple(range(x.ndim)) + ("x",) * n)


def shape_padaxis(x, axis):
    x = as_tensor_variable(x)
    axis = axis % (x.ndim + 1)
    order = list(range(x.ndim))
    order.insert(axis, "x")
    return dimshuffle(x, order)


def squeeze(x, axis=None):
    """Drop dimensions of static size 1 (all of them, or those in `axis`)."""
    x = as_tensor_variable(x)
    if axis is None:
        drop = {i for i, s in enumerate(x.type.shape) if s == 1}
    else:
        drop = {a % x.ndim for a in ((axis,) if isinstance(axis, int) else axis)}
    return dimshuffle(x, [i for i in range(x.ndim) if i not in drop])


def flatten(x, ndim=1):
    """Collapse the trailing dimensions so the result has `ndim` dimensions."""
    x = as_tensor_variable(x)
    if ndim < 1 or ndim > max(x.ndim, 1):
        raise ValueError(f"flatten: ndim must be between 1 and {x.ndim}, got {ndim}")
    dims = list(shape_tuple(x))
    return reshape(x, dims[: ndim - 1] + [_product(dims[ndim - 1:])], ndim=ndim)


class BroadcastTo(Op):
    """`x` broadcast to a shape vector of length `ndim` (a fresh array, not a view)."""

    __props__ = ("ndim",)

    def __init__(self, ndim):
        self.ndim = int(ndim)

    def make_node(self, x, shp):
        x = as_tensor_variable(x)
        shp = _checked_shape_vector(shp, self.ndim, "broadcast_to")
        if x.ndim > self.ndim:
            raise ValueError(f"broadcast_to: cannot broadcast {x.type} to {self.ndim} dims")
        xs = (1,) * (self.ndim - x.ndim) + x.type.shape
        static = []
        for s, xi in zip(_static_entries(shp, self.ndim), xs):
            if s is not None and xi is not None and xi not in (1, s):
                raise ValueError(f"broadcast_to: cannot broadcast {x.type} to shape "
                                 f"{_static_entries(shp, self.ndim)}")
            static.append(s if s is not None else (xi if xi != 1 else None))
        return Apply(self, [x, shp], [TensorType(x.dtype, static)()])

    def perform(self, node, inputs, output_storage):
        x, shp = inputs
        output_storage[0][0] = np.broadcast_to(x, tuple(int(s) for s in shp)).copy()

    def L_op(self, inputs, outputs, output_grads):
        from ..graph.gradient_types import disconnected_grad

        x, _ = inputs
        return [sum_to(output_grads[0], shape_tuple(x)), disconnected_grad()]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            from .basic import zeros_like

            return [zeros_like(self(*inputs))]
        return [self(eval_points[0], inputs[1])]

    def connection_pattern(self, node):
        return [[True], [False]]

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(_shape_entries(node.inputs[1], self.ndim))]


def broadcast_to(x, shp):
    vec = _as_shape_vector(shp, "broadcast_to")
    return BroadcastTo(vec.type.shape[0])(x, vec)


class ValueToSizes(Op):
    """An op of a value and the output's sizes (int64 scalars, one per output
    dimension): linear in the value, so its R_op applies it to the value's
    direction, and the sizes are the output's shape and carry no gradient."""

    abstract = True

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            from .basic import zeros_like

            return [zeros_like(self(*inputs))]
        return [self(eval_points[0], *inputs[1:])]

    def connection_pattern(self, node):
        return [[True]] + [[False] for _ in node.inputs[1:]]

    def infer_shape(self, fgraph, node, input_shapes):
        return [tuple(node.inputs[1:])]


class SumTo(ValueToSizes):
    """Sum `g` down to a run-time shape given by its sizes (int64 scalars, the
    last ``len(dims)`` dimensions of `g`): leading extra dimensions are summed
    away, and so is every dimension whose target size is 1 where `g`'s is not.
    A no-op when the shapes already agree; a ValueError when `g` is not a
    broadcast of the target shape.

    The target is sizes, not a tensor of that shape, so a gradient graph never
    computes (or allocates) a value only to read its shape; the sizes come
    from ``Shape_i`` of the input the gradient belongs to, which the shape
    rewrites lift to where they come from.
    """

    __props__ = ()

    def make_node(self, g, *dims):
        g = as_tensor_variable(g)
        dims = [_as_size(d) for d in dims]
        if len(dims) > g.ndim:
            raise ValueError(f"SumTo: {g.type} has fewer dims than the target shape "
                             f"({len(dims)} dims)")
        static = []
        for d, gs in zip(dims, g.type.shape[g.ndim - len(dims):]):
            size = int(d.data) if isinstance(d, Constant) else None
            if size is not None and (size < 0 or gs is not None and size not in (1, gs)):
                raise ValueError(f"sum_to: {g.type} is not a broadcast of size {size}")
            static.append(size if size is not None else (gs if gs == 1 else None))
        return Apply(self, [g, *dims], [TensorType(g.dtype, static)()])

    def perform(self, node, inputs, output_storage):
        g, *dims = inputs
        output_storage[0][0] = np.asarray(sum_to_shape(g, [int(d) for d in dims]), dtype=g.dtype)

    def L_op(self, inputs, outputs, output_grads):
        from ..graph.gradient_types import disconnected_grad

        g = inputs[0]
        return [broadcast_to(output_grads[0], shape(g))] + \
            [disconnected_grad() for _ in inputs[1:]]



def _as_size(d):
    """An int64 scalar variable for a size (a strong constant for a Python int)."""
    from .basic import cast

    if isinstance(d, (int, np.integer)):
        return as_tensor_variable(np.int64(d))
    d = as_tensor_variable(d)
    if d.ndim != 0 or d.dtype.startswith("float") or d.dtype == "bool":
        raise TypeError(f"sum_to: a size must be an integer scalar, got {d.type}")
    return cast(d, "int64")


def sum_to_shape(g, shape):
    """NumPy: sum `g` down to `shape` (the inverse of broadcasting)."""
    lead = g.ndim - len(shape)
    if lead < 0 or any(b not in (1, a) for a, b in zip(g.shape[lead:], shape)):
        raise ValueError(f"sum_to: an array of shape {g.shape} is not a broadcast of "
                         f"shape {tuple(shape)}")
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, (a, b) in enumerate(zip(g.shape, shape)) if b == 1 and a != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g


def sum_to(g, shape):
    """`g` summed down to `shape`: a tuple of sizes (ints or int scalars, e.g.
    ``shape_tuple(x)``) or an integer shape vector of known length. Skipped
    when static shapes prove it unnecessary."""
    g = as_tensor_variable(g)
    if isinstance(shape, Variable):
        vec = _as_shape_vector(shape, "sum_to")
        n = vec.type.shape[0]
        if n is None:
            raise ValueError("sum_to: the length of a symbolic shape vector is unknown")
        shape = _shape_entries(vec, n)
    dims = [_as_size(d) for d in shape]
    static = tuple(int(d.data) if isinstance(d, Constant) else None for d in dims)
    if len(dims) == g.ndim and static == g.type.shape and None not in static:
        return g
    return SumTo()(g, *dims)
