"""`sum_to`: the run-time unbroadcast of gradients, one compiled function per dtype.

The reverse sweep wraps a gradient in SumTo wherever its input may have been
broadcast; sizes unknown at compile time leave the check to run time, so an
LSTM backward step holds seven SumTo nodes and the RNN gradient's glue three.
Written into the caller, each one (size checks, a fast path, nested loops that
add into the target) cost 0.2-0.25 s of numba typing, lowering and LLVM work.

Generated code now views the gradient as 4-d (leading axes of size 1, stride 0)
and calls `sum_to4` `separately` (separate.py): the function is compiled once per
dtype (layout 'A') and cached on disk, whatever the ranks. The caller keeps the
fast path (the gradient already has the target's shape: no call, no copy).
"""
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.core.extending import intrinsic
from numba.np.arrayobj import make_array

from .alloc_runtime import alloc_zeros
from .runtime import jit
from .separate import separately

__all__ = ["sum_to4_call"]


@intrinsic
def _add_into(typingctx, out, g):
    """``out[i] += g[j]`` over 4-d `g`'s index space, `out` (4-d) read with stride 0
    along its dimensions of size 1: the sum. Plain LLVM loops, innermost by element
    when both innermost strides are one element (a loop LLVM vectorizes), else by
    byte strides: numba code for the same loops (flat views, unsigned indices) cost
    twice as long to compile."""
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

        size = o.itemsize
        unit = builder.and_(builder.icmp_signed("==", ostrides[3], size),
                            builder.icmp_signed("==", gstrides[3], size))
        with builder.if_else(unit, likely=True) as (fast, slow):
            with fast:
                loops(True)
            with slow:
                loops(False)
        return context.get_dummy_value()

    return types.none(out, g), codegen


@jit
def sum_to4(g, d0, d1, d2, d3):
    """Sum 4-d `g` over the axes where the target size `d<k>` is 1; a new C array.

    Every `d<k>` must be 1 or `g.shape[k]` (ValueError otherwise: writing past
    the target's end would corrupt memory).
    """
    n0, n1, n2, n3 = g.shape
    if ((d0 != 1 and d0 != n0) or (d1 != 1 and d1 != n1) or (d2 != 1 and d2 != n2)
            or (d3 != 1 and d3 != n3)):
        raise ValueError('sum_to: the gradient is not a broadcast of the input shape')
    out = alloc_zeros((d0, d1, d2, d3), g.dtype)
    _add_into(out, g)
    return out


sum_to4_call = separately(sum_to4, any_layout=True)
