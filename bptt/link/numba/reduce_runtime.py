"""SumTo's run-time unbroadcast: one call per site, compiled once, cached on disk.

The reverse sweep wraps a gradient in SumTo wherever its input may have been
broadcast; sizes unknown at compile time leave the check to run time, so an
LSTM backward step holds eight SumTo nodes and the RNN gradient three. Written
into the caller, each one (size checks, a fast path, nested loops that add into
the target) is numba typing, lowering and LLVM work of its own; with only the
summing moved out (`sum_to4`), the fast path and the 4-d view left in the
caller still cost a good part of that per site (benchmarks/notes.md).

Generated code now writes each SumTo of a gradient of at most 4 dims as one
call, both `separately` (separate.py), compiled once per (dtype, rank, number
of target sizes, layout) and cached on disk:

* ``sum_to_call(g, (d0, ..))`` (as many int64 sizes as `g` has dims): `g` itself
  when it has that shape (no copy), else `g` summed to it (a new C array);
* ``sum_to_new_call(g, (d0, ..))`` (fewer sizes: `g`'s leading axes are summed
  away): always a new C array.

Both sum by `sum_to4` (on `g` viewed as 4-d: leading axes of size 1, stride 0),
itself compiled once per dtype (layout 'A'); it raises the ValueError when `g`
is not a broadcast of the target shape. Gradients of more dims are summed by a
loop written into the caller (dispatch/shape.py).
"""
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.core.extending import intrinsic
from numba.core.imputils import impl_ret_borrowed
from numba.np.arrayobj import make_array, populate_array

from .alloc_runtime import alloc_zeros, c_reshape
from .jitting import jit
from .separate import separately

__all__ = ["sum_to_call", "sum_to_new_call"]

#: partial sums of a SumTo over the innermost axis (`_add_into`): a vector of this many
#: elements, added to the way LLVM vectorizes a loop over independent elements
LANES = 16


@intrinsic
def _add_into(typingctx, out, g):
    """``out[i] += g[j]`` over 4-d `g`'s index space, `out` (4-d) read with stride 0
    along its dimensions of size 1: the sum. Plain LLVM loops, innermost by element
    when both innermost strides are one element (a loop LLVM vectorizes), else by
    byte strides: numba code for the same loops (flat views, unsigned indices) cost
    twice as long to compile. A float sum over g's contiguous innermost axis (out's
    innermost size 1) adds into `LANES` partial sums: LLVM keeps the order of float
    adds, so one running sum is a chain of dependent adds."""
    if not (isinstance(out, types.Array) and isinstance(g, types.Array)
            and out.ndim == g.ndim == 4 and out.dtype == g.dtype):
        raise TypingError("_add_into: expected two 4-d arrays of one dtype")
    dtype = out.dtype
    if not isinstance(dtype, (types.Float, types.Integer, types.Boolean)):
        raise TypingError(f"_add_into: cannot sum {dtype}")

    def codegen(context, builder, sig, args):
        o, x = (make_array(t)(context, builder, v) for t, v in zip((out, g), args))
        shape = cgutils.unpack_tuple(builder, x.shape, 4)
        intp = shape[0].type
        zero, one = intp(0), intp(1)
        ostrides = [builder.select(builder.icmp_signed("==", n, one), zero, s)
                    for n, s in zip(cgutils.unpack_tuple(builder, o.shape, 4),
                                    cgutils.unpack_tuple(builder, o.strides, 4))]
        gstrides = cgutils.unpack_tuple(builder, x.strides, 4)
        i8p, ptr = ir.IntType(8).as_pointer(), o.data.type
        # (numba's bool + bool is an int, stored back as bool: `or`)
        add = (builder.fadd if isinstance(dtype, types.Float) else
               builder.or_ if isinstance(dtype, types.Boolean) else builder.add)

        def at(data, idx, strides):
            raw = builder.bitcast(data, i8p)
            for j, st in zip(idx, strides):
                raw = builder.gep(raw, [builder.mul(j, st)])
            return builder.bitcast(raw, ptr)

        def loops(unit):
            with cgutils.loop_nest(builder, shape[:3], intp) as idx:
                orow, grow = at(o.data, idx, ostrides), at(x.data, idx, gstrides)
                with cgutils.for_range(builder, shape[3], intp=intp) as loop:
                    j = loop.index
                    if unit:
                        q, v = (builder.gep(r, [j], inbounds=True) for r in (orow, grow))
                    else:
                        q, v = at(orow, [j], ostrides[3:]), at(grow, [j], gstrides[3:])
                    builder.store(add(builder.load(q), builder.load(v)), q)

        def strided_loops():
            if not isinstance(dtype, types.Float):   # integer sums (rare in gradients): plain
                loops(False)
                return
            lanes = builder.and_(builder.icmp_signed("==", ostrides[3], zero), g_unit)
            with builder.if_else(lanes) as (by_lanes, slow):
                with by_lanes:
                    _lane_sums(context, builder, dtype, o, x, at, ostrides, gstrides)
                with slow:
                    loops(False)

        size = o.itemsize
        g_unit = builder.icmp_signed("==", gstrides[3], size)
        unit = builder.and_(builder.icmp_signed("==", ostrides[3], size), g_unit)
        with builder.if_else(unit, likely=True) as (fast, other):
            with fast:
                loops(True)
            with other:
                strided_loops()
        return context.get_dummy_value()

    return types.none(out, g), codegen


def _lane_sums(context, builder, dtype, o, x, at, ostrides, gstrides):
    """``out[..., 0] += g[..., :]`` over g's contiguous innermost axis, in `LANES`
    partial sums (a vector accumulator), then the rows' tails one by one."""
    shape = cgutils.unpack_tuple(builder, x.shape, 4)
    intp = shape[0].type
    vty = ir.VectorType(context.get_value_type(dtype), LANES)
    with cgutils.loop_nest(builder, shape[:3], intp) as idx:
        orow, grow = at(o.data, idx, ostrides), at(x.data, idx, gstrides)
        acc = cgutils.alloca_once_value(builder, ir.Constant(vty, None))
        full = builder.sdiv(shape[3], intp(LANES))
        with cgutils.for_range(builder, full, intp=intp) as loop:
            at_j = builder.gep(grow, [builder.mul(loop.index, intp(LANES))], inbounds=True)
            v = builder.load(builder.bitcast(at_j, vty.as_pointer()), align=dtype.bitwidth // 8)
            builder.store(builder.fadd(builder.load(acc), v), acc)
        parts, total = builder.load(acc), builder.load(orow)
        for lane in range(LANES):
            total = builder.fadd(total, builder.extract_element(parts, intp(lane)))
        builder.store(total, orow)
        tail = builder.mul(full, intp(LANES))
        with cgutils.for_range(builder, builder.sub(shape[3], tail), intp=intp) as loop:
            at_j = builder.gep(grow, [builder.add(tail, loop.index)], inbounds=True)
            builder.store(builder.fadd(builder.load(orow), builder.load(at_j)), orow)


@intrinsic
def _lead4(typingctx, tup, fill):
    """`tup` (at most 4 ints) as a 4-tuple of intp, `fill` in front of it."""
    if not (isinstance(tup, types.BaseTuple) and len(tup) <= 4 and isinstance(fill, types.Integer)
            and all(isinstance(t, types.Integer) for t in tup)):
        raise TypingError(f"_lead4: expected a tuple of at most 4 ints, got {tup}")
    out = types.UniTuple(types.intp, 4)

    def codegen(context, builder, sig, args):
        items = [context.cast(builder, v, t, types.intp)
                 for v, t in zip(cgutils.unpack_tuple(builder, args[0], len(tup)), tup)]
        pad = context.cast(builder, args[1], fill, types.intp)
        return context.make_tuple(builder, out, [pad] * (4 - len(tup)) + items)

    return out(tup, fill), codegen


@intrinsic
def _view4(typingctx, g):
    """`g` (at most 4-d) viewed as 4-d (layout 'A'): leading axes of size 1, stride 0."""
    if not (isinstance(g, types.Array) and 1 <= g.ndim <= 4):
        raise TypingError(f"_view4: expected an array of 1 to 4 dims, got {g}")
    view = types.Array(g.dtype, 4, "A", readonly=not g.mutable)

    def codegen(context, builder, sig, args):
        ary = make_array(g)(context, builder, args[0])
        intp, pad = context.get_value_type(types.intp), 4 - g.ndim
        shape = [intp(1)] * pad + cgutils.unpack_tuple(builder, ary.shape, g.ndim)
        strides = [intp(0)] * pad + cgutils.unpack_tuple(builder, ary.strides, g.ndim)
        out = make_array(view)(context, builder)
        populate_array(out, data=ary.data, shape=shape, strides=strides, itemsize=ary.itemsize,
                       meminfo=ary.meminfo, parent=ary.parent)
        return impl_ret_borrowed(context, builder, view, out._getvalue())

    return view(g), codegen


@jit
def sum_to4(g, dims):
    """Sum 4-d `g` over the axes where the target size in `dims` (4 ints) is 1; a new
    C array.

    Every target size must be 1 or `g`'s size (ValueError otherwise: writing past
    the target's end would corrupt memory).
    """
    n0, n1, n2, n3 = g.shape
    d0, d1, d2, d3 = dims
    if ((d0 != 1 and d0 != n0) or (d1 != 1 and d1 != n1) or (d2 != 1 and d2 != n2)
            or (d3 != 1 and d3 != n3)):
        raise ValueError('sum_to: the gradient is not a broadcast of the input shape')
    out = alloc_zeros(dims, g.dtype)
    _add_into(out, g)
    return out


sum_to4_call = separately(sum_to4, any_layout=True)


@jit
def sum_to(g, dims):
    """`g` summed to `dims` (``g.ndim`` int64 sizes): `g` itself when it has that shape."""
    if g.shape == dims:
        return g
    return c_reshape(sum_to4_call(_view4(g), _lead4(dims, 1)), dims)


@jit
def sum_to_new(g, dims):
    """`g` summed to `dims` (fewer int64 sizes than ``g.ndim``: leading axes summed away)."""
    return c_reshape(sum_to4_call(_view4(g), _lead4(dims, 1)), dims)


sum_to_call = separately(sum_to)
sum_to_new_call = separately(sum_to_new)
