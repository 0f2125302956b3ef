"""Array allocation for generated code, emitted inline (numba intrinsics).

``np.empty(shape, dtype)`` inside numba is an overload: numba compiles its
implementation as a function of its own for every (ndim, dtype, spelling of
the dtype) it meets, about 0.07 s each, and ``np.zeros``/``np.full`` add a
second and third function on top. The RNN forward+backward function met
twelve such ``np.empty`` instantiations, three ``np.zeros`` and three
``np.full`` (1.6 CPU s of a cold compile). These intrinsics write numba's own
allocation code (`_empty_nd_impl`: the same NRT allocation, alignment and
size-overflow check) straight into the calling function, so no function is
compiled for them:

* ``alloc_empty(shape, dtype)``: ``np.empty``; `shape` an int or a tuple of ints,
  `dtype` a NumPy scalar type (``np.float64``) or an array's ``.dtype``;
* ``alloc_zeros(shape, dtype)``: ``np.zeros`` (a memset);
* ``alloc_full(shape, value, dtype)``: ``np.full`` (`value` cast as numba casts).

A negative size raises ValueError, as in NumPy.
"""
from __future__ import annotations

import numpy as np
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.core.extending import intrinsic, overload
from numba.core.typing.npydecl import parse_dtype, parse_shape
from numba.np.arrayobj import _empty_nd_impl, _parse_shape

__all__ = ["alloc_empty", "alloc_zeros", "alloc_full", "c_contiguous"]


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


def c_contiguous(x):
    """`x` itself if it is C-contiguous (by its numba layout, or checked at run time for
    layout "A"), else a C-contiguous copy.

    ``np.ascontiguousarray`` compiles a function of its own for every array
    type, even when it returns its argument; this is inlined into the caller.
    """
    raise NotImplementedError  # replaced by the overload below inside numba


@overload(c_contiguous, inline="always")
def _c_contiguous_overload(x):
    if not isinstance(x, types.Array):
        raise TypingError("c_contiguous: expected an array")
    if x.layout == "C":
        return lambda x: x
    if x.layout == "A":
        # Checked at run time: a contiguous view typed "A" (a reversed scan output's
        # reversal) is returned as it is, not copied.
        return lambda x: np.ascontiguousarray(x)
    from .scan_runtime import copy_into  # imports runtime, which imports this module

    def copy(x):
        out = alloc_empty(x.shape, x.dtype)
        copy_into(out, x)
        return out
    return copy
