"""Array allocation for generated code, emitted inline (numba intrinsics).

``np.empty(shape, dtype)`` inside numba is an overload: numba compiles its
implementation as a function of its own for every (ndim, dtype, spelling of
the dtype) it meets, and ``np.zeros``/``np.full`` add a second and third
function on top; a gradient meets a dozen such instantiations, a noticeable
part of its cold compile. These intrinsics write numba's own
allocation code (`_empty_nd_impl`: the same NRT allocation, alignment and
size-overflow check) straight into the calling function, so no function is
compiled for them:

* ``alloc_empty(shape, dtype)``: ``np.empty``; `shape` an int or a tuple of ints,
  `dtype` a NumPy scalar type (``np.float64``) or an array's ``.dtype``;
* ``alloc_zeros(shape, dtype)``: ``np.zeros`` (a memset);
* ``alloc_full(shape, value, dtype)``: ``np.full`` (`value` cast as numba casts).

A negative size raises ValueError, as in NumPy.

Views and copies are intrinsics too, for the same reason (``np.ascontiguousarray``,
``as_strided`` and a jitted copy loop are each a function compiled per array
type):

* ``c_contiguous(x)``: `x` retyped C-contiguous when it is (checked at run time
  unless its numba layout says so), else a C-contiguous copy;
* ``c_copy(x)``: a C-contiguous copy of `x` (``x.copy()``);
* ``copy_into(dst, src)``: ``dst[...] = src`` for two arrays of one shape and any
  layouts: ``memmove`` (one call for two C arrays, one per row where both rows
  have unit stride), else an element loop by strides (strides of an 'A' array
  must be whole elements, as for `elem_view`);
* ``strided_view(x, shape, strides)``: a view of `x`'s memory with the given
  shape and byte strides (layout 'A'), as ``as_strided``; no bounds check;
* ``broadcast_into(out, x)``: ``out[...] = x`` for a scalar or an array that
  broadcasts to `out` (ValueError with both shapes otherwise), returns `out`;
* ``add_into(dst, src)``: ``dst[...] += src`` for a scalar or an array of dst's shape;
* ``region_values(region, y)``: array `y` viewed with `region`'s shape, stride 0
  where it broadcasts (the values of a SetSubtensor or IncSubtensor; ValueError
  naming both shapes where `y` does not broadcast);
* ``rows_values(x, idx, y)``: the same for the region ``x[idx]`` of an integer array
  `idx` on axis 0 (shape ``idx.shape + x.shape[1:]``);
* ``c_reshape(x, shape)``: ``x.reshape(shape)`` for a C-contiguous `x` (numba's
  reshape compiles helper functions on first use in a process, and more per
  call site); one entry of `shape` may be -1;
* ``check_index_<d>(i, n)``: integer index `i` of an axis `d` of length `n`,
  negative ones wrapped; IndexError when out of bounds (Subtensor's indices).

``broadcast_into`` and ``check_index_<d>`` are intrinsics rather than an overload
per (ndim, ndim of x) and a generated kernel, which would each be a function
compiled in every cold process; the in-place elementwise loops call
``broadcast_into`` whether or not it runs. benchmarks/notes.md has the figures.
"""
from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.core.extending import intrinsic
from numba.core.imputils import impl_ret_borrowed
from numba.core.typing.npydecl import parse_dtype, parse_shape
from numba.np.arrayobj import _empty_nd_impl, _parse_shape, make_array, populate_array

__all__ = ["add_into", "alloc_empty", "alloc_zeros", "alloc_full", "broadcast_into", "c_contiguous",
           "c_copy", "c_reshape", "copy_into", "data_address", "fits_rows", "imax", "imin",
           "is_c_contiguous", "region_values", "rows_values", "same_view", "strided_view"]
__all__ += [f"check_index_{d}" for d in range(32)]


def _array_type(shape, dtype, who):
    nb_dtype, ndim = parse_dtype(dtype), parse_shape(shape)
    if nb_dtype is None or ndim is None:
        raise TypingError(f"{who}: cannot allocate an array of shape {shape} and dtype {dtype}")
    return types.Array(nb_dtype, ndim, "C")


def _allocate(context, builder, arrtype, shape_type, shape):
    return _empty_nd_impl(context, builder, arrtype, _parse_shape(context, builder, shape_type, shape))


@intrinsic
def alloc_empty(typingctx, shape, dtype):
    """``np.empty(shape, dtype)`` written into the caller (C order)."""
    arrtype = _array_type(shape, dtype, "alloc_empty")

    def codegen(context, builder, sig, args):
        return _allocate(context, builder, arrtype, sig.args[0], args[0])._getvalue()

    return arrtype(shape, dtype), codegen


@intrinsic
def alloc_zeros(typingctx, shape, dtype):
    """``np.zeros(shape, dtype)`` written into the caller (C order)."""
    arrtype = _array_type(shape, dtype, "alloc_zeros")

    def codegen(context, builder, sig, args):
        ary = _allocate(context, builder, arrtype, sig.args[0], args[0])
        cgutils.memset(builder, ary.data, builder.mul(ary.itemsize, ary.nitems), 0)
        return ary._getvalue()

    return arrtype(shape, dtype), codegen


@intrinsic
def alloc_full(typingctx, shape, value, dtype):
    """``np.full(shape, value, dtype)`` written into the caller (C order)."""
    arrtype = _array_type(shape, dtype, "alloc_full")
    if not isinstance(value, (types.Number, types.Boolean)):
        raise TypingError(f"alloc_full: the fill value must be a scalar, not {value}")

    def codegen(context, builder, sig, args):
        ary = _allocate(context, builder, arrtype, sig.args[0], args[0])
        item = context.cast(builder, args[1], sig.args[1], arrtype.dtype)
        item = context.get_value_as_data(builder, arrtype.dtype, item)
        with cgutils.for_range(builder, ary.nitems) as loop:
            builder.store(item, builder.gep(ary.data, [loop.index]))
        return ary._getvalue()

    return arrtype(shape, value, dtype), codegen


_PARTIAL_ELEMENTS = ("copy_into: an array whose strides are not whole elements; the "
                     "function wrapper passes C-contiguous copies of such inputs")


def _element_strides(context, builder, arytype, ary):
    """`ary`'s strides counted in elements (llvm ints); ValueError unless whole elements."""
    intp = context.get_value_type(types.intp)
    size = intp(context.get_abi_sizeof(context.get_data_type(arytype.dtype)))
    strides = cgutils.unpack_tuple(builder, ary.strides, arytype.ndim)
    whole = cgutils.true_bit
    for s in strides:
        whole = builder.and_(whole, builder.icmp_signed("==", builder.srem(s, size), intp(0)))
    with builder.if_then(builder.not_(whole), likely=False):
        context.call_conv.return_user_exc(builder, ValueError, (_PARTIAL_ELEMENTS,))
    return [builder.sdiv(s, size) for s in strides]


def _element_pointer(builder, data, idx, strides):
    """``&data[sum(idx * strides)]``: a gep by an element offset, which LLVM's vectorizer
    follows (numba's pointer of an 'A' array is integer arithmetic, which it does not)."""
    offset = idx[0].type(0)
    for j, s in zip(idx, strides):
        offset = builder.add(offset, builder.mul(j, s))
    return builder.gep(data, [offset], inbounds=True)


def _copy_loop(context, builder, dsttype, dst, srctype, src):
    """Emit ``dst[...] = src`` (llvm array structs of one shape).

    Where both sides share a dtype, the copy is ``memmove``: one call when both are
    typed 'C', else one per row when both rows have unit stride (checked at run time;
    a reversed trace's rows, the backward loop's cotangent rows), else a plain
    element loop by byte strides. Vectorized copy loops cost LLVM about as much to
    compile as the rest of a small graph function, and a C library ``memmove`` copies
    a row as fast (a 32 x 128 float64 block: 32 calls).
    """
    nd = dsttype.ndim
    if srctype.dtype != dsttype.dtype or nd == 0:
        return _element_loop(context, builder, dsttype, dst, srctype, src)
    size = dst.itemsize
    if dsttype.layout == "C" and srctype.layout == "C":
        cgutils.raw_memmove(builder, dst.data, src.data, dst.nitems, size)
        return
    for t, a in ((dsttype, dst), (srctype, src)):
        if t.layout not in "CF":
            _element_strides(context, builder, t, a)   # (raises unless whole elements)
    shape = cgutils.unpack_tuple(builder, dst.shape, nd)
    dstrides = cgutils.unpack_tuple(builder, dst.strides, nd)
    sstrides = cgutils.unpack_tuple(builder, src.strides, nd)
    short = builder.icmp_signed("<=", shape[-1], shape[-1].type(1))
    unit = builder.and_(builder.icmp_signed("==", dstrides[-1], size),
                        builder.icmp_signed("==", sstrides[-1], size))
    intp = context.get_value_type(types.intp)
    with builder.if_else(builder.or_(unit, short), likely=True) as (rows, elements):
        with rows:
            with cgutils.loop_nest(builder, shape[:-1], intp) as idx:
                cgutils.raw_memmove(builder, _byte_pointer(builder, dst.data, idx, dstrides),
                                    _byte_pointer(builder, src.data, idx, sstrides),
                                    shape[-1], size)
        with elements:
            with cgutils.loop_nest(builder, shape, intp) as idx:
                builder.store(builder.load(_byte_pointer(builder, src.data, idx, sstrides)),
                              _byte_pointer(builder, dst.data, idx, dstrides))


def _byte_pointer(builder, data, idx, strides):
    """``data`` advanced by ``sum(idx * strides)`` bytes, as `data`'s pointer type."""
    raw = builder.bitcast(data, ir.IntType(8).as_pointer())
    for j, s in zip(idx, strides):
        raw = builder.gep(raw, [builder.mul(j, s)])
    return builder.bitcast(raw, data.type)


def _element_loop(context, builder, dsttype, dst, srctype, src, add=False):
    """``dst[...] = src`` (``+=`` with `add`) element by element, casting (and 0-d arrays)."""
    nd = dsttype.ndim
    shape = cgutils.unpack_tuple(builder, dst.shape, nd)
    dstrides = cgutils.unpack_tuple(builder, dst.strides, nd)
    sshape = cgutils.unpack_tuple(builder, src.shape, nd)
    sstrides = cgutils.unpack_tuple(builder, src.strides, nd)
    by_offset = dsttype.layout not in "CF" or srctype.layout not in "CF"
    if by_offset:
        dstrides = _element_strides(context, builder, dsttype, dst)
        sstrides = _element_strides(context, builder, srctype, src)
    with cgutils.loop_nest(builder, shape, context.get_value_type(types.intp)) as idx:
        if by_offset:
            sp = _element_pointer(builder, src.data, idx, sstrides)
            dp = _element_pointer(builder, dst.data, idx, dstrides)
        else:
            sp = cgutils.get_item_pointer2(context, builder, src.data, sshape, sstrides,
                                           srctype.layout, idx)
            dp = cgutils.get_item_pointer2(context, builder, dst.data, shape, dstrides,
                                           dsttype.layout, idx)
        value = context.unpack_value(builder, srctype.dtype, sp)
        value = context.cast(builder, value, srctype.dtype, dsttype.dtype)
        if add:
            value = _add(builder, dsttype.dtype, context.unpack_value(builder, dsttype.dtype, dp),
                         value)
        context.pack_value(builder, dsttype.dtype, value, dp)


def _arrays(who, *xs):
    if not all(isinstance(x, types.Array) for x in xs):
        raise TypingError(f"{who}: expected arrays, got {xs}")


def _same_ints(builder, xs, ys):
    """An i1: every llvm int of `xs` equals its partner in `ys`."""
    same = cgutils.true_bit
    for a, b in zip(xs, ys):
        same = builder.and_(same, builder.icmp_signed("==", a, b))
    return same


@intrinsic
def copy_into(typingctx, dst, src):
    """``dst[...] = src`` written into the caller, for arrays of one shape and any layouts.

    Shapes that differ raise ValueError (the loop never reads or writes out of bounds).
    """
    _arrays("copy_into", dst, src)
    if dst.ndim != src.ndim or not dst.mutable:
        raise TypingError(f"copy_into: cannot copy {src} into {dst}")

    def codegen(context, builder, sig, args):
        dst_ary = make_array(dst)(context, builder, args[0])
        src_ary = make_array(src)(context, builder, args[1])
        differ = builder.not_(_same_ints(builder,
                                         cgutils.unpack_tuple(builder, dst_ary.shape, dst.ndim),
                                         cgutils.unpack_tuple(builder, src_ary.shape, dst.ndim)))
        with builder.if_then(differ, likely=False):
            context.call_conv.return_user_exc(builder, ValueError,
                                              ("copy_into: the arrays differ in shape",))
        _copy_loop(context, builder, dst, dst_ary, src, src_ary)
        return context.get_dummy_value()

    return types.none(dst, src), codegen


def _c_strides(builder, shape, itemsize):
    """C-order byte strides of `shape` (llvm ints)."""
    strides, step = [], itemsize
    for size in reversed(shape):
        strides.append(step)
        step = builder.mul(step, size)
    return strides[::-1]


def _is_c_contiguous(builder, shape, strides, c_strides):
    """True when every dimension longer than 1 has its C stride, or the array is empty."""
    ok, empty = cgutils.true_bit, cgutils.false_bit
    one = ir.Constant(shape[0].type, 1)
    for size, stride, want in zip(shape, strides, c_strides):
        matters = builder.icmp_signed(">", size, one)
        bad = builder.and_(matters, builder.icmp_signed("!=", stride, want))
        ok = builder.and_(ok, builder.not_(bad))
        empty = builder.or_(empty, builder.icmp_signed("==", size, ir.Constant(size.type, 0)))
    return builder.or_(ok, empty)


@intrinsic
def is_c_contiguous(typingctx, x):
    """``x.flags.c_contiguous``, written into the caller: numba lowers that attribute by
    compiling a function of its own in every cold process."""
    _arrays("is_c_contiguous", x)

    def codegen(context, builder, sig, args):
        if x.layout == "C":
            return cgutils.true_bit
        ary = make_array(x)(context, builder, args[0])
        shape = cgutils.unpack_tuple(builder, ary.shape, x.ndim)
        strides = cgutils.unpack_tuple(builder, ary.strides, x.ndim)
        return _is_c_contiguous(builder, shape, strides, _c_strides(builder, shape, ary.itemsize))

    return types.boolean(x), codegen


@intrinsic
def data_address(typingctx, x):
    """``x.ctypes.data`` (the address of the first element, an int), written into the
    caller: numba's ``ctypes`` attribute builds an object of its own first."""
    _arrays("data_address", x)

    def codegen(context, builder, sig, args):
        ary = make_array(x)(context, builder, args[0])
        return builder.ptrtoint(ary.data, context.get_value_type(types.intp))

    return types.intp(x), codegen


@intrinsic
def same_view(typingctx, a, b):
    """Whether `a` and `b` view the same memory the same way: one data address, shape and
    strides. Written into the caller: as ``a.shape == b.shape and ...`` the tuple
    comparisons cost a scan loop about 0.15 s of compile time each."""
    _arrays("same_view", a, b)

    def codegen(context, builder, sig, args):
        if a.ndim != b.ndim:
            return cgutils.false_bit
        x, y = make_array(a)(context, builder, args[0]), make_array(b)(context, builder, args[1])
        fields = [(builder.ptrtoint(x.data, context.get_value_type(types.intp)),),
                  (builder.ptrtoint(y.data, context.get_value_type(types.intp)),)]
        for v in ("shape", "strides"):
            fields[0] += tuple(cgutils.unpack_tuple(builder, getattr(x, v), a.ndim))
            fields[1] += tuple(cgutils.unpack_tuple(builder, getattr(y, v), b.ndim))
        return _same_ints(builder, *fields)

    return types.boolean(a, b), codegen


@intrinsic
def fits_rows(typingctx, buf, row):
    """Whether `row`'s shape is the shape of `buf`'s rows (``row.shape == buf.shape[1:]``),
    written into the caller: the tuple slice and comparison cost every write of a scan
    loop a compiled generic comparison. A 0-d `row` fits a 1-d `buf`."""
    _arrays("fits_rows", buf)
    row_ndim = row.ndim if isinstance(row, types.Array) else 0

    def codegen(context, builder, sig, args):
        if buf.ndim != row_ndim + 1:
            return cgutils.false_bit
        if not row_ndim:
            return cgutils.true_bit
        b = make_array(buf)(context, builder, args[0])
        r = make_array(row)(context, builder, args[1])
        return _same_ints(builder, cgutils.unpack_tuple(builder, b.shape, buf.ndim)[1:],
                          cgutils.unpack_tuple(builder, r.shape, row_ndim))

    return types.boolean(buf, row), codegen


def _int_select(name, pred):
    def typer(typingctx, a, b):
        if not (isinstance(a, types.Integer) and isinstance(b, types.Integer)):
            raise TypingError(f"{name}: integers expected, got {a} and {b}")

        def codegen(context, builder, sig, args):
            x, y = (context.cast(builder, v, t, types.intp) for v, t in zip(args, sig.args))
            return builder.select(builder.icmp_signed(pred, x, y), x, y)

        return types.intp(a, b), codegen

    typer.__name__ = name
    typer.__doc__ = (f"``{name[1:]}(a, b)`` of two integers as an intp, written into the caller: "
                     "the builtin compiles an overload in every process that first uses it.")
    return intrinsic(typer)


imin = _int_select("imin", "<=")
imax = _int_select("imax", ">=")


@intrinsic
def c_contiguous(typingctx, x):
    """`x` itself if it is C-contiguous (by its numba layout, or checked at run time
    otherwise), else a C-contiguous copy; either way typed C.

    ``np.ascontiguousarray`` compiles a function of its own for every array type,
    even when it returns its argument; this is written into the caller.
    """
    _arrays("c_contiguous", x)
    ctype = x.copy(layout="C")

    def codegen(context, builder, sig, args):
        if x.layout == "C":
            return impl_ret_borrowed(context, builder, ctype, args[0])
        ary = make_array(x)(context, builder, args[0])
        shape = cgutils.unpack_tuple(builder, ary.shape, x.ndim)
        strides = _c_strides(builder, shape, ary.itemsize)
        result = cgutils.alloca_once(builder, context.get_value_type(ctype))
        is_c = _is_c_contiguous(builder, shape, cgutils.unpack_tuple(builder, ary.strides,
                                                                     x.ndim), strides)
        with builder.if_else(is_c, likely=True) as (view, copy):
            with view:   # the same memory, with canonical strides for its length-1 dims
                out = make_array(ctype)(context, builder)
                populate_array(out, data=ary.data, shape=ary.shape,
                               strides=cgutils.pack_array(builder, strides),
                               itemsize=ary.itemsize, meminfo=ary.meminfo, parent=ary.parent)
                context.nrt.incref(builder, ctype, out._getvalue())
                builder.store(out._getvalue(), result)
            with copy:
                out = _empty_nd_impl(context, builder, ctype, shape)
                _copy_loop(context, builder, ctype, out, x, ary)
                builder.store(out._getvalue(), result)
        return builder.load(result)

    return ctype(x), codegen


@intrinsic
def c_copy(typingctx, x):
    """A C-contiguous copy of array `x` (``x.copy()``), written into the caller."""
    _arrays("c_copy", x)
    ctype = x.copy(layout="C", readonly=False)

    def codegen(context, builder, sig, args):
        ary = make_array(x)(context, builder, args[0])
        out = _empty_nd_impl(context, builder, ctype,
                             cgutils.unpack_tuple(builder, ary.shape, x.ndim))
        _copy_loop(context, builder, ctype, out, x, ary)
        return out._getvalue()

    return ctype(x), codegen


@intrinsic
def strided_view(typingctx, x, shape, strides):
    """A view of `x`'s memory with `shape` and byte `strides` (tuples of ints), layout 'A'.

    What ``np.lib.stride_tricks.as_strided`` does, written into the caller; generated
    code uses it for transposes, whose shape and strides are a permutation of `x`'s.
    """
    _arrays("strided_view", x)
    nd = len(shape) if isinstance(shape, types.BaseTuple) else -1
    if nd < 0 or not isinstance(strides, types.BaseTuple) or len(strides) != nd:
        raise TypingError("strided_view: shape and strides must be tuples of one length")
    view = types.Array(x.dtype, nd, "A", readonly=not x.mutable)

    def codegen(context, builder, sig, args):
        ary = make_array(x)(context, builder, args[0])
        intp = types.intp

        def ints(tup, tupty):
            return [context.cast(builder, v, t, intp)
                    for v, t in zip(cgutils.unpack_tuple(builder, tup, nd), tupty)]

        out = make_array(view)(context, builder)
        populate_array(out, data=ary.data, shape=ints(args[1], shape),
                       strides=ints(args[2], strides), itemsize=ary.itemsize,
                       meminfo=ary.meminfo, parent=ary.parent)
        return impl_ret_borrowed(context, builder, view, out._getvalue())

    return view(x, shape, strides), codegen


@intrinsic
def broadcast_into(typingctx, out, x):
    """``out[...] = x`` written into the caller; `x` a scalar or an array of at most
    ``out.ndim`` dims that broadcasts to `out` (aligned to the right). Returns `out`."""
    _arrays("broadcast_into", out)
    if isinstance(x, types.Array):
        if not 0 < x.ndim <= out.ndim or not out.mutable:
            raise TypingError(f"broadcast_into: cannot broadcast {x} into {out}")
    elif not isinstance(x, (types.Number, types.Boolean)):
        raise TypingError(f"broadcast_into: cannot fill {out} with {x}")

    def codegen(context, builder, sig, args):
        ary = make_array(out)(context, builder, args[0])
        if isinstance(x, types.Array):
            _broadcast_copy(context, builder, out, ary, x, args[1])
        else:
            _fill_loop(context, builder, out, ary, x, args[1], add=False)
        return impl_ret_borrowed(context, builder, out, args[0])

    return out(out, x), codegen


def _broadcast_copy(context, builder, outtype, out, xtype, xval):
    """Copy array `xval` into `out` through a view of `x` with stride 0 where it broadcasts."""
    viewtype, view = _broadcast_view(context, builder, outtype, out, xtype, xval,
                                     "cannot broadcast an array of shape {} to shape {}")
    _copy_loop(context, builder, outtype, out, viewtype, view)


def _broadcast_view(context, builder, outtype, out, xtype, xval, message):
    """(type, struct) of a view of array `xval` with `out`'s shape, stride 0 where `x`
    broadcasts; ValueError `message` (a template of x's shape, then out's) where it
    does not."""
    x = make_array(xtype)(context, builder, xval)
    nd, lead = outtype.ndim, outtype.ndim - xtype.ndim
    oshape = cgutils.unpack_tuple(builder, out.shape, nd)
    xshape = cgutils.unpack_tuple(builder, x.shape, xtype.ndim)
    xstrides = cgutils.unpack_tuple(builder, x.strides, xtype.ndim)
    zero = ir.Constant(x.itemsize.type, 0)
    bad, strides = cgutils.false_bit, [zero] * lead
    for n, s, want in zip(xshape, xstrides, oshape[lead:]):
        single = builder.icmp_signed("==", n, n.type(1))
        bad = builder.or_(bad, builder.and_(builder.not_(single),
                                            builder.icmp_signed("!=", n, want)))
        strides.append(builder.select(single, zero, s))
    with builder.if_then(bad, likely=False):   # a (template, values) error: errors.py
        context.call_conv.return_dynamic_user_exc(
            builder, ValueError, (message, x.shape, out.shape),
            (None, types.UniTuple(types.intp, xtype.ndim), types.UniTuple(types.intp, nd)))
    viewtype = types.Array(xtype.dtype, nd, "A", readonly=True)
    view = make_array(viewtype)(context, builder)
    populate_array(view, data=x.data, shape=out.shape, strides=cgutils.pack_array(builder, strides),
                   itemsize=x.itemsize, meminfo=x.meminfo, parent=x.parent)
    return viewtype, view


_REGION_ERROR = ("shape mismatch: values of shape {} cannot be broadcast to the indexed "
                 "region of shape {}; give values of the region's shape or one that "
                 "broadcasts to it")


@intrinsic
def region_values(typingctx, region, y):
    """A view of array `y` with `region`'s shape (layout 'A', read-only), stride 0 where
    `y` broadcasts to it: the values a SetSubtensor or IncSubtensor writes. ValueError
    naming both shapes when `y` does not broadcast to `region`."""
    _arrays("region_values", region, y)
    if not 0 < y.ndim <= region.ndim:
        raise TypingError(f"region_values: cannot broadcast {y} to {region}")
    view = types.Array(y.dtype, region.ndim, "A", readonly=True)

    def codegen(context, builder, sig, args):
        ary = make_array(region)(context, builder, args[0])
        viewtype, out = _broadcast_view(context, builder, region, ary, y, args[1], _REGION_ERROR)
        return impl_ret_borrowed(context, builder, viewtype, out._getvalue())

    return view(region, y), codegen


class _Shape:
    """The `.shape` `_broadcast_view` reads, for a region that is no array."""

    def __init__(self, shape):
        self.shape = shape


@intrinsic
def rows_values(typingctx, x, idx, y):
    """`region_values` for the region ``x[idx]`` of an integer array `idx` on axis 0:
    `y` viewed with shape ``idx.shape + x.shape[1:]``."""
    _arrays("rows_values", x, idx, y)
    nd = idx.ndim + x.ndim - 1
    if not 0 < y.ndim <= nd:
        raise TypingError(f"rows_values: cannot broadcast {y} to {x}[{idx}]")
    view = types.Array(y.dtype, nd, "A", readonly=True)

    def codegen(context, builder, sig, args):
        shape = cgutils.unpack_tuple(builder, make_array(x)(context, builder, args[0]).shape)
        lead = cgutils.unpack_tuple(builder, make_array(idx)(context, builder, args[1]).shape)
        region = _Shape(cgutils.pack_array(builder, lead + shape[1:]))
        viewtype, out = _broadcast_view(context, builder, view, region, y, args[2], _REGION_ERROR)
        return impl_ret_borrowed(context, builder, viewtype, out._getvalue())

    return view(x, idx, y), codegen


@intrinsic
def add_into(typingctx, dst, src):
    """``dst[...] += src`` written into the caller: `src` a scalar or an array of `dst`'s
    shape (ValueError otherwise), cast to dst's dtype."""
    _arrays("add_into", dst)
    if not dst.mutable or not isinstance(dst.dtype, (types.Float, types.Integer, types.Boolean)) \
            or not (isinstance(src, (types.Number, types.Boolean))
                    or (isinstance(src, types.Array) and src.ndim == dst.ndim)):
        raise TypingError(f"add_into: cannot add {src} into {dst}")

    def codegen(context, builder, sig, args):
        ary = make_array(dst)(context, builder, args[0])
        if isinstance(src, types.Array):
            other = make_array(src)(context, builder, args[1])
            nd = dst.ndim
            differ = builder.not_(_same_ints(builder, cgutils.unpack_tuple(builder, ary.shape, nd),
                                             cgutils.unpack_tuple(builder, other.shape, nd)))
            with builder.if_then(differ, likely=False):
                context.call_conv.return_user_exc(builder, ValueError,
                                                  ("add_into: the arrays differ in shape",))
            _element_loop(context, builder, dst, ary, src, other, add=True)
        else:
            _fill_loop(context, builder, dst, ary, src, args[1], add=True)
        return context.get_dummy_value()

    return types.none(dst, src), codegen


def _fill_loop(context, builder, outtype, out, xtype, x, add):
    """``out[...] = x`` (or ``+=``) for a scalar `x`, cast to out's dtype."""
    item = context.cast(builder, x, xtype, outtype.dtype)
    shape = cgutils.unpack_tuple(builder, out.shape, outtype.ndim)
    strides = cgutils.unpack_tuple(builder, out.strides, outtype.ndim)
    with cgutils.loop_nest(builder, shape, shape[0].type) as idx:
        ptr = cgutils.get_item_pointer2(context, builder, out.data, shape, strides,
                                        outtype.layout, idx)
        value = item
        if add:
            value = _add(builder, outtype.dtype, context.unpack_value(builder, outtype.dtype, ptr),
                         item)
        context.pack_value(builder, outtype.dtype, value, ptr)


def _add(builder, dtype, a, b):
    """``a + b`` in `dtype` (numba's bool + bool is an int, stored back as bool: `or`)."""
    if isinstance(dtype, types.Float):
        return builder.fadd(a, b)
    return builder.or_(a, b) if isinstance(dtype, types.Boolean) else builder.add(a, b)


def _check_index(axis):
    message = f"index out of bounds for axis {axis}"

    def check_index(typingctx, i, n):
        if not isinstance(i, types.Integer) or not isinstance(n, types.Integer):
            raise TypingError(f"check_index_{axis}: expected integers, got {i} and {n}")

        def codegen(context, builder, sig, args):
            j = context.cast(builder, args[0], i, types.int64)
            m = context.cast(builder, args[1], n, types.int64)
            below = builder.icmp_signed("<", j, builder.neg(m))
            with builder.if_then(builder.or_(below, builder.icmp_signed(">=", j, m)),
                                 likely=False):
                context.call_conv.return_user_exc(builder, IndexError, (message,))
            negative = builder.icmp_signed("<", j, j.type(0))
            return builder.select(negative, builder.add(j, m), j)

        return types.int64(i, n), codegen

    check_index.__name__ = check_index.__qualname__ = f"check_index_{axis}"
    return intrinsic(check_index)


for _axis in range(32):   # NumPy arrays have at most 32 dims (64 in NumPy 2)
    globals()[f"check_index_{_axis}"] = _check_index(_axis)


_RESHAPE_ERROR = "cannot reshape the array: the total size of the new shape must be unchanged"


@intrinsic
def c_reshape(typingctx, x, shape):
    """``x.reshape(shape)`` for a C-contiguous `x` (typed C), written into the caller: a view
    with C strides. One entry of `shape` may be -1 (the size that fits); ValueError when the
    sizes do not fit."""
    _arrays("c_reshape", x)
    if x.layout != "C" or not isinstance(shape, types.BaseTuple) or not len(shape) \
            or not all(isinstance(t, types.Integer) for t in shape):
        raise TypingError(f"c_reshape: cannot reshape {x} to {shape}")
    nd = len(shape)
    view = x.copy(ndim=nd, layout="C")

    def codegen(context, builder, sig, args):
        ary = make_array(x)(context, builder, args[0])
        sizes = [context.cast(builder, v, t, types.intp)
                 for v, t in zip(cgutils.unpack_tuple(builder, args[1], nd), shape)]
        intp = sizes[0].type
        one, known, negatives, bad = intp(1), intp(1), intp(0), cgutils.false_bit
        for v in sizes:
            neg = builder.icmp_signed("<", v, intp(0))
            bad = builder.or_(bad, builder.icmp_signed("<", v, intp(-1)))
            negatives = builder.add(negatives, builder.zext(neg, intp))
            known = builder.mul(known, builder.select(neg, one, v))
        some = builder.icmp_signed(">", negatives, intp(0))
        bad = builder.or_(bad, builder.icmp_signed(">", negatives, one))
        # with a -1: known must divide the size (and be nonzero); without: equal it
        safe = builder.select(builder.icmp_signed("==", known, intp(0)), one, known)
        fits = builder.select(
            some, builder.and_(builder.icmp_signed("!=", known, intp(0)),
                               builder.icmp_signed("==", builder.srem(ary.nitems, safe), intp(0))),
            builder.icmp_signed("==", known, ary.nitems))
        with builder.if_then(builder.or_(bad, builder.not_(fits)), likely=False):
            context.call_conv.return_user_exc(builder, ValueError, (_RESHAPE_ERROR,))
        missing = builder.sdiv(ary.nitems, safe)
        sizes = [builder.select(builder.icmp_signed("<", v, intp(0)), missing, v) for v in sizes]
        out = make_array(view)(context, builder)
        populate_array(out, data=ary.data, shape=cgutils.pack_array(builder, sizes),
                       strides=cgutils.pack_array(builder, _c_strides(builder, sizes, ary.itemsize)),
                       itemsize=ary.itemsize, meminfo=ary.meminfo, parent=ary.parent)
        return impl_ret_borrowed(context, builder, view, out._getvalue())

    return view(x, shape), codegen
