"""The copies around a BLAS call (blas.py's `gemm_into`), as LLVM loops.

* `_copied`, `_copy_back`: an operand BLAS cannot take as it is (negative, zero or
  two non-unit strides: rare) goes through a C-contiguous copy, and a result BLAS
  cannot write is copied back. Plain loop nests LLVM does not vectorize: O(m n)
  next to the product's O(m n k).
* `_copy_transposed`: ``dst[i, j] = src[j, i]``, for a product computed in
  column-major order into a scratch array and stored into a row-major result
  (blas.py, "Short, wide results"). The loop runs over blocks of `BLOCK` columns
  of `dst`, so the rows of `src` a block reads stay in the L1 cache while every
  row of `dst` is written.

Written as LLVM intrinsics rather than numba code for the reason blas.py gives:
numba's typing and lowering of loops cost more compile time than LLVM's work.
"""
from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.extending import intrinsic
from numba.np.arrayobj import _empty_nd_impl

FLOATS = ("float32", "float64")

# Columns of `dst` (rows of `src`) per block of `_copy_transposed`: 16 rows of a
# 32-row float64 `src` are 4 KiB, well inside L1.
BLOCK = 16


def check_float_arrays(who, *arrays):
    """A TypingError unless `arrays` are 2-d arrays of one float32 or float64 dtype."""
    if not all(isinstance(x, types.Array) and x.ndim == 2 for x in arrays):
        raise TypingError(f"{who}: expected 2-d arrays")
    if len({x.dtype for x in arrays}) != 1 or str(arrays[0].dtype) not in FLOATS:
        raise TypingError(f"{who}: the arrays must share a float32 or float64 dtype")


def _at(builder, data, i, j, t0, t1):
    """``&data[i, j]`` for byte strides t0, t1."""
    i8p, ptr = ir.IntType(8).as_pointer(), data.type
    raw = builder.gep(builder.bitcast(data, i8p), [builder.mul(i, t0)])
    return builder.bitcast(builder.gep(raw, [builder.mul(j, t1)]), ptr)


def _emit_copy(builder, dst, src):
    """``dst[...] = src`` for two 2-d llvm array structs of one shape and dtype, by byte
    strides: a plain loop nest that LLVM does not vectorize (its run-time checks and
    vector copies are what makes numba's copy loops slow to compile)."""
    rows, cols = cgutils.unpack_tuple(builder, dst.shape, 2)
    (d0, d1), (s0, s1) = (cgutils.unpack_tuple(builder, x.strides, 2) for x in (dst, src))
    with cgutils.for_range(builder, rows, intp=d0.type) as iloop:
        with cgutils.for_range(builder, cols, intp=d0.type) as jloop:
            i, j = iloop.index, jloop.index
            builder.store(builder.load(_at(builder, src.data, i, j, s0, s1)),
                          _at(builder, dst.data, i, j, d0, d1))


@intrinsic
def _copied(typingctx, x):
    """A C-contiguous copy of 2-d `x`, by a plain loop nest (`_emit_copy`)."""
    check_float_arrays("_copied", x)
    ctype = x.copy(layout="C", readonly=False)

    def codegen(context, builder, sig, args):
        ary = context.make_array(x)(context, builder, args[0])
        out = _empty_nd_impl(context, builder, ctype, cgutils.unpack_tuple(builder, ary.shape, 2))
        _emit_copy(builder, out, ary)
        return out._getvalue()

    return ctype(x), codegen


@intrinsic
def _copy_back(typingctx, dst, src):
    """``dst[...] = src`` for 2-d arrays of one shape and dtype (`_emit_copy`)."""
    check_float_arrays("_copy_back", dst, src)

    def codegen(context, builder, sig, args):
        arrays = [context.make_array(t)(context, builder, v) for t, v in zip((dst, src), args)]
        _emit_copy(builder, *arrays)
        return context.get_dummy_value()

    return types.none(dst, src), codegen


def _emit_copy_transposed(builder, dst, src):
    """``dst[i, j] = src[j, i]`` (llvm array structs, `dst` m x n, `src` n x m, any byte
    strides), by blocks of `BLOCK` columns of `dst`."""
    rows, cols = cgutils.unpack_tuple(builder, dst.shape, 2)
    (d0, d1), (s0, s1) = (cgutils.unpack_tuple(builder, x.strides, 2) for x in (dst, src))
    intp = d0.type
    block = ir.Constant(intp, BLOCK)
    n_blocks = builder.sdiv(builder.add(cols, ir.Constant(intp, BLOCK - 1)), block)
    with cgutils.for_range(builder, n_blocks, intp=intp) as bloop:
        j0 = builder.mul(bloop.index, block)
        left = builder.sub(cols, j0)
        width = builder.select(builder.icmp_signed("<", left, block), left, block)
        with cgutils.for_range(builder, rows, intp=intp) as iloop:
            with cgutils.for_range(builder, width, intp=intp) as jloop:
                i, j = iloop.index, builder.add(j0, jloop.index)
                builder.store(builder.load(_at(builder, src.data, j, i, s0, s1)),
                              _at(builder, dst.data, i, j, d0, d1))


@intrinsic
def _copy_transposed(typingctx, dst, src):
    """``dst[...] = src.T`` for 2-d arrays of one dtype, `src` of ``dst.shape[::-1]``."""
    check_float_arrays("_copy_transposed", dst, src)

    def codegen(context, builder, sig, args):
        arrays = [context.make_array(t)(context, builder, v) for t, v in zip((dst, src), args)]
        _emit_copy_transposed(builder, *arrays)
        return context.get_dummy_value()

    return types.none(dst, src), codegen
