"""Run-time helpers of the elementwise loop kernels (`dispatch/elemwise.py`).

`broadcast_shape(shapes)` is the output shape of NumPy broadcasting for a
tuple of equally long shapes. The loops pad shorter inputs on the left and
write dimensions of static size 1 as -1 (size 1; the generated code does not
read them). It is an intrinsic: a handful of integer comparisons written
into the caller (numba typed and lowered the same code written in Python,
inline, in about half of a loop's compile time; as an overload it was a
function per (number of shapes, ndim)).

`elem_view(x)` is how a loop reads and writes its arrays: ``(flat, offset,
strides)`` with `flat` a 1-d C-contiguous view of `x`'s memory starting at
its lowest address, `strides` in elements (0 along a dimension of size 1,
so a broadcast input is read at index 0 without a multiplier) and `offset`
the element of ``x[0, ..., 0]``; ``x[j0, j1]`` is
``flat[uint64(offset + j0 * strides[0] + j1 * strides[1])]``. numba indexes
an array of layout 'A' (a slice ``z[:, a:b]``, a reversed sequence) with
integer arithmetic on the pointer, which LLVM cannot analyse: such loops
never vectorized (the LSTM step's gate loop over ``z[:, :n]`` ran at 18 ns
per element in float32 against 4 ns for contiguous copies). The flat view
is indexed through ``getelementptr``, which LLVM vectorizes by versioning
the loop on the inner stride being 1; the index is unsigned because numba
wraps a signed negative index, a select that also stopped vectorization.
Strides must be whole elements: they are, because the function wrapper
(``linker.call_glue``) passes every input array C-contiguous and aligned
(a field of a structured array, whose strides are not whole elements, is
copied there) and compiled code makes only views, slices and fresh arrays
of those. An array numba types 'A' is checked (ValueError otherwise); an
inline copy for that case cost 2.6 s of the LSTM gradient's cold compile.
"""
from __future__ import annotations

import numba
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

__all__ = ["broadcast_shape", "elem_view"]

BROADCAST_ERROR = "operands could not be broadcast together with shapes"


@intrinsic
def broadcast_shape(typingctx, shapes):
    """``(d0, d1, ...)``: the broadcast of `shapes` (a tuple of tuples of one length, -1 for a
    static size 1, -2 for a left padding); ValueError if they do not broadcast. Inside numba
    code only.

    An intrinsic: the comparisons are written into the caller. As an overload it was a
    function compiled per (number of shapes, ndim), 0.1-0.15 CPU s each (the LSTM
    gradient met five of them).
    """
    if not (isinstance(shapes, types.BaseTuple) and len(shapes)
            and all(isinstance(s, types.BaseTuple) for s in shapes)
            and len({len(s) for s in shapes}) == 1
            and all(isinstance(t, types.Integer) for s in shapes for t in s)):
        raise numba.core.errors.TypingError("broadcast_shape: expected a tuple of shapes")
    nd = len(shapes[0])
    ret = types.UniTuple(types.intp, nd)

    def codegen(context, builder, sig, args):
        intp = context.get_value_type(types.intp)
        one, zero = intp(1), intp(0)
        dims, bad = [one] * nd, cgutils.false_bit
        for s, sty in zip(cgutils.unpack_tuple(builder, args[0], len(shapes)), shapes):
            for d, (v, vty) in enumerate(zip(cgutils.unpack_tuple(builder, s, nd), sty)):
                v = context.cast(builder, v, vty, types.intp)
                # -1 (static 1) and -2 (padding) are size 1: never read
                matters = builder.and_(builder.icmp_signed("!=", v, one),
                                       builder.icmp_signed(">=", v, zero))
                unset = builder.icmp_signed("==", dims[d], one)
                clash = builder.and_(builder.not_(unset), builder.icmp_signed("!=", dims[d], v))
                bad = builder.or_(bad, builder.and_(matters, clash))
                dims[d] = builder.select(builder.and_(matters, unset), v, dims[d])
        with builder.if_then(bad, likely=False):   # a (template, values) error: errors.py
            context.call_conv.return_dynamic_user_exc(
                builder, ValueError, (f"{BROADCAST_ERROR} {{}}", args[0]), (None, shapes))
        return context.make_tuple(builder, ret, dims)

    return ret(shapes), codegen


_UNALIGNED = ("elem_view: an array whose strides are not whole elements; the function "
              "wrapper passes C-contiguous copies of such inputs")


@intrinsic
def elem_view(typingctx, x):
    """``(flat, offset, strides)``: `x` as a 1-d C view of its memory, the element
    of ``x[0, ..., 0]`` in it and its strides in elements, 0 along dimensions of size 1.
    Inside numba code only; see the module docstring."""
    if not isinstance(x, types.Array):
        raise numba.core.errors.TypingError(f"elem_view: expected an array, got {x}")
    nd = x.ndim
    flat = types.Array(x.dtype, 1, "C", readonly=not x.mutable)
    ret = types.Tuple([flat, types.intp, types.UniTuple(types.intp, nd)])

    def codegen(context, builder, sig, args):
        ary = make_array(x)(context, builder, args[0])
        shape = cgutils.unpack_tuple(builder, ary.shape, nd)
        strides = cgutils.unpack_tuple(builder, ary.strides, nd)
        if x.layout not in "CF":   # numba's own layouts have whole-element strides
            aligned = cgutils.true_bit
            for s in strides:
                rem = builder.srem(s, ary.itemsize)
                aligned = builder.and_(aligned, builder.icmp_signed("==", rem, rem.type(0)))
            with builder.if_then(builder.not_(aligned), likely=False):
                context.call_conv.return_user_exc(builder, ValueError, (_UNALIGNED,))
        return _flat(context, builder, flat, ret, ary, shape, strides)

    return ret(x), codegen


def _flat(context, builder, flat, ret, ary, shape, strides):
    """The (flat, offset, strides) tuple of `ary` (an llvm array struct)."""
    intp = context.get_value_type(types.intp)
    zero, one = ir.Constant(intp, 0), ir.Constant(intp, 1)
    low, span, empty, elems = zero, one, cgutils.false_bit, []
    for n, s in zip(shape, strides):
        e = builder.select(builder.icmp_signed("==", n, one), zero,
                           builder.sdiv(s, ary.itemsize))
        extent = builder.mul(builder.sub(n, one), e)
        negative = builder.icmp_signed("<", extent, zero)
        low = builder.add(low, builder.select(negative, extent, zero))
        span = builder.add(span, builder.select(negative, builder.neg(extent), extent))
        empty = builder.or_(empty, builder.icmp_signed("==", n, zero))
        elems.append(e)
    span = builder.select(empty, zero, span)
    low = builder.select(empty, zero, low)
    out = make_array(flat)(context, builder)
    populate_array(out, data=builder.gep(ary.data, [low]),
                   shape=cgutils.pack_array(builder, [span]),
                   strides=cgutils.pack_array(builder, [ary.itemsize]),
                   itemsize=ary.itemsize, meminfo=ary.meminfo, parent=ary.parent)
    context.nrt.incref(builder, flat, out._getvalue())
    return context.make_tuple(builder, ret, [out._getvalue(), builder.neg(low),
                                             cgutils.pack_array(builder, elems)])
