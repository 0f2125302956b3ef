"""Run-time helpers of the elementwise loop kernels (`dispatch/elemwise.py`).

`broadcast_shape(shapes)` is the output shape of NumPy broadcasting for a
tuple of equally long shapes. The loops pad shorter inputs on the left and
write dimensions of static size 1 as -1 (size 1; the generated code does not
read them). It is an overload compiled once per process for each (number of
shapes, ndim): written into every loop, the same code was about half of a
loop's compile time.

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
import numba.extending
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

__all__ = ["broadcast_shape", "elem_view"]

BROADCAST_ERROR = "operands could not be broadcast together with shapes"


def _source(nd):
    # An entry -1 is a dimension of static size 1, -2 a left padding: size 1, not read
    # (errors.reformat rebuilds each operand's own shape from them for the message).
    lines = [f"def broadcast_shape_{nd}(shapes):"] + [f"    d{d} = 1" for d in range(nd)]
    lines += ["    bad = False", "    for s in shapes:"]
    for d in range(nd):
        lines += [f"        if s[{d}] != 1 and s[{d}] >= 0:",
                  f"            if d{d} == 1:",
                  f"                d{d} = s[{d}]",
                  f"            elif d{d} != s[{d}]:",
                  "                bad = True"]
    lines += ["    if bad:",       # a (template, values) error: see link/numba/errors.py
              f"        raise ValueError('{BROADCAST_ERROR} {{}}', shapes)",
              f"    return ({''.join(f'd{d}, ' for d in range(nd))})"]
    return "\n".join(lines) + "\n"


def _implementations(max_nd=8):
    impls = {}
    for nd in range(1, max_nd + 1):
        # A function exec'd without __name__ belongs to module "builtins": numba then
        # cannot rebuild its environment when a caller is loaded from the disk cache, and
        # a raise with run-time values there ends as "RuntimeError: Error creating Python
        # tuple from runtime exception arguments" instead of the ValueError.
        ns = {"__name__": __name__}
        exec(_source(nd), ns)  # noqa: S102  (fixed, generated text)
        impls[nd] = ns[f"broadcast_shape_{nd}"]
    return impls


_IMPLS = _implementations()


def broadcast_shape(shapes):
    """``(d0, d1, ...)``: the broadcast of `shapes` (a tuple of tuples of one length, -1 for a
    static size 1); ValueError if they do not broadcast. Inside numba code only."""
    raise NotImplementedError  # replaced by the overload below inside numba


@numba.extending.overload(broadcast_shape, jit_options=dict(error_model="numpy", nogil=True))
def _broadcast_shape_overload(shapes):
    if not (isinstance(shapes, types.UniTuple) and isinstance(shapes.dtype, types.UniTuple)):
        raise numba.core.errors.TypingError("broadcast_shape: expected a tuple of shapes")
    return _IMPLS[shapes.dtype.count]


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
