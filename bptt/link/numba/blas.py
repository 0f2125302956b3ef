"""BLAS matrix products for generated code, without hidden copies.

numba's ``np.dot`` copies every operand whose layout is not known at compile
time to be contiguous (numba type layout ``'A'``): a transposed matrix made
by a strided view, a row slice... and always allocates its result. The
helpers here call ``?gemm`` directly (NumPy's own OpenBLAS where NumPy
bundles one, else ``scipy.linalg.cython_blas``: blas_library.py) and read
each operand's layout from its strides at run time:

* a matrix whose rows are contiguous (``strides[1] == itemsize``, any row
  stride at least a row long) is handed to BLAS as is;
* one whose columns are contiguous (a transposed C array) is handed over
  with BLAS's transpose flag;
* anything else (negative or zero strides, both strides non-unit) is copied
  to a C-contiguous temporary first: the only copy left.

BLAS is column-major and our arrays are mostly row-major, so a product
``C = A @ B`` with row-major ``C`` is asked of BLAS as ``C^T = B^T A^T``:
the memory of a row-major ``m x n`` matrix *is* its column-major
transpose. A column-major (F-contiguous) ``C`` is computed directly.

The call goes through a numba intrinsic that stores each scalar argument in
a stack slot and calls the external symbol ``bptt_dgemm``/``bptt_sgemm``,
registered with LLVM at import (`gemm_addresses`): NumPy's OpenBLAS functions
(``scipy_dgemm_64_``, 64-bit integers), or else the capsules of
``cython_blas`` (the pointers numba's own ``numba_xxgemm`` wrapper uses;
`blas_addresses` finds them without importing all of ``scipy.linalg``). The
compiled code refers to the symbol by name, not by address, so it stays valid
in numba's disk cache; the library kind and integer width are in the cache key.

Short, wide results. A row-major ``m x n`` result asked of BLAS as ``C^T = B^T A^T``
makes BLAS's M the result's ``n`` columns and its N the ``m`` rows. With few rows
and many columns (a batch of 32 rows times a 256 x 1024 weight, the product of
every step of a recurrent loop) OpenBLAS's sgemm runs far below its rate when `b`
is column-major (a transposed view, such as a weight stored n x k and read as its
transpose): it packs that large operand as its M side, with copy routines slower
than the N side's (benchmarks/notes.md has the figures, benchmarks/wide_product.py
measures them). So such a float32 result, with at least `WIDE` times more columns
than rows, when BLAS would not read it (beta 0), is computed in column-major order
(M = m) into a scratch array and copied into place transposed (blas_copies.py;
O(m n) next to the product's O(m n k)). With a row-major `b` the direct call packs
`b` as fast or faster (the product of a recurrent loop's backward step,
``dz @ W``), so the copy would only add to it; dgemm runs all these shapes as fast
either way: float64 products keep the direct call.

Small products (at most `SMALL` multiply-adds) run as plain loops instead:
the BLAS call costs about as much as the whole product there (see
``benchmarks/dot.py``).

Compile time. Generated code reaches BLAS through two functions compiled once
per dtype, for layout 'A' (`separately`, see separate.py): `gemm_into` (every
product) and `gemm_fresh` (the Gemm op; its in-place form is written into
the caller as a `gemm_into` call, dispatch/blas.py). Everything else is written
into its caller: the ``np.dot`` lowerings `dot_mm`, `dot_mv`, `dot_vm`, `dot_vv`
are ``inline="always"`` (numba inlines their IR), and the loops of these two
functions are LLVM intrinsics (`_gemm_loops`, `_copied`, `_copy_back` of blas_copies.py,
`_set_scaled`, `_add_scaled`): numba code typed and lowered for each of them cost
more than the loops' LLVM work (the two functions took 0.85 + 0.45 CPU s to
compile as numba loops, 0.5 + 0.3 as intrinsics). The copies for the rare
operands BLAS cannot take as they are (`_copied`) are plain loops LLVM does not
vectorize: O(m n) next to the product's O(m n k). Allocation is an intrinsic too
(alloc_runtime.py). Each helper compiled on its own had cost 0.1-0.9 s of the
RNN gradient's cold compile (14 functions, 4.3 s; now 2).
"""
from __future__ import annotations

import ctypes
import importlib
import importlib.machinery
import importlib.util
import os
import sys

from llvmlite import binding as llvm
from llvmlite import ir
from numba.core import cgutils, types
import numba
from numba.core.errors import TypingError
from numba.extending import get_cython_function_address, intrinsic

from .. import blas_threads
from .alloc_runtime import alloc_empty
from .blas_copies import _copied, _copy_back, _copy_transposed, check_float_arrays
from .blas_library import (
    numpy_openblas, numpy_openblas_addresses, numpy_openblas_threads)
from .jitting import OPTIONS, jit
from .separate import separately

__all__ = ["gemm_into", "gemm_fresh", "dot_mm", "dot_mv", "dot_vm", "dot_vv",
           "gemm_into_call", "gemm_fresh_call"]

_SYMBOLS = {"float64": "bptt_dgemm", "float32": "bptt_sgemm"}
_CYTHON_BLAS = "scipy.linalg.cython_blas"


def _load_cython_blas():
    """scipy's ``cython_blas`` extension module, without importing ``scipy.linalg``.

    ``import scipy.linalg.cython_blas`` runs ``scipy/linalg/__init__.py`` first,
    which imports all of ``scipy.linalg`` (and, through it, NumPy's testing,
    f2py, ma...): about 0.2 s of a 0.5 s budget for loading a cached function.
    The extension itself needs only the ``scipy`` package. It is loaded here
    from its file under its own name, and taken out of ``sys.modules`` again:
    a Cython module is initialised once per process, so a later regular
    import of it (``scipy.linalg`` importing its submodule) gets this very
    module object back and attaches it to ``scipy.linalg`` as usual (left in
    ``sys.modules``, the import system would find it there and never set the
    ``scipy.linalg.cython_blas`` attribute). Returns None where that is not
    possible; the caller then imports it the regular way.
    """
    module = sys.modules.get(_CYTHON_BLAS)
    if module is not None:
        return module
    path = _cython_blas_file()
    if path is None:
        return None
    try:
        spec = importlib.util.spec_from_file_location(_CYTHON_BLAS, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception:  # noqa: BLE001  (any failure: the regular import decides)
        return None
    if sys.modules.get(_CYTHON_BLAS) is module and "scipy.linalg" not in sys.modules:
        del sys.modules[_CYTHON_BLAS]
    return module


def _cython_blas_file():
    """Path of scipy's ``cython_blas`` extension file, or None (no scipy, or not a file)."""
    try:
        scipy_spec = importlib.util.find_spec("scipy")
        folder = os.path.join(os.path.dirname(scipy_spec.origin), "linalg")
    except Exception:  # noqa: BLE001  (no scipy, or a namespace without a file)
        return None
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = os.path.join(folder, "cython_blas" + suffix)
        if os.path.exists(path):
            return path
    return None


def _capsule_address(capsule):
    """The function pointer held by a Cython ``__pyx_capi__`` capsule."""
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object,
                                                                   ctypes.c_char_p]
    return get_pointer(capsule, get_name(capsule))


def blas_addresses(names):
    """Addresses of scipy's ``cython_blas`` functions `names` (e.g. ``"dgemm"``).

    The same pointers numba's ``get_cython_function_address`` returns (so the
    same BLAS library, with its thread settings), found without importing
    ``scipy.linalg`` when possible.
    """
    module = _load_cython_blas()
    try:
        return {n: _capsule_address(module.__pyx_capi__[n]) for n in names}
    except Exception:  # noqa: BLE001  (no module, or not a Cython one: numba's way)
        return {n: get_cython_function_address(_CYTHON_BLAS, n) for n in names}


def _import_numba_arraymath():
    """Import ``numba.np.arraymath`` without its ``import scipy.linalg``.

    numba's target setup (the first compilation, or the first function loaded
    from its cache) imports ``numba.np.arraymath``, which records whether
    BLAS is available by calling ``numba.np.linalg.ensure_blas``: ``import
    scipy.linalg.cython_blas``, all of ``scipy.linalg`` again. Imported here
    first, with that name bound to a check that only looks for the
    extension's file (where there is none, the original check runs). The
    verdict (``_HAVE_BLAS``) only picks how numba compiles ``np.convolve`` and
    ``np.correlate``; loading the extension is left to whoever calls it: with
    NumPy's own OpenBLAS (blas_library.py) bptt never does, and nothing on the
    load path of a cached function loads scipy's BLAS library.
    ``numba.np.linalg`` keeps its own ``ensure_blas`` for what it compiles
    (``np.dot``, ``np.linalg``), which then imports ``scipy.linalg`` when first
    needed.
    """
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    from numba.np import linalg

    original = linalg.ensure_blas

    def ensure_blas():
        if _CYTHON_BLAS not in sys.modules and _cython_blas_file() is None:
            return original()
        # numba's Fortran integer-width guard, where this numba has one.
        getattr(linalg, "_check_lapack_int_width", lambda: None)()
        return None

    linalg.ensure_blas = ensure_blas
    try:
        importlib.import_module("numba.np.arraymath")
    finally:
        linalg.ensure_blas = original


_import_numba_arraymath()


def gemm_addresses():
    """``({name: address}, integer bits)`` of the ``?gemm`` functions generated code
    calls: NumPy's own OpenBLAS where NumPy bundles one, else scipy's (blas_library.py)."""
    names = [sym.rsplit("_", 1)[1] for sym in _SYMBOLS.values()]
    found = numpy_openblas_addresses(names)
    if found is not None:
        return found, numpy_openblas()[2]
    return blas_addresses(names), 32


_ADDRESSES, _INT_BITS = gemm_addresses()
for _sym in _SYMBOLS.values():
    llvm.add_symbol(_sym, _ADDRESSES[_sym.rsplit("_", 1)[1]])

# OpenBLAS's thread functions and the rule's three integers (blas_threads.py), by name
# like the gemms, so cached machine code finds them in a new process.
_THREADS = numpy_openblas_threads()
if _THREADS is not None:
    llvm.add_symbol("bptt_blas_set_threads", _THREADS[0])
    llvm.add_symbol("bptt_blas_get_threads", _THREADS[1])
llvm.add_symbol("bptt_blas_threads_rule", blas_threads.RULE_ADDRESS)

# Products with at most this many multiply-adds (m * n * k) are loops.
SMALL = 512
# A row-major result with at least this many times more columns than rows is computed
# column-major into a scratch array (module docstring, "Short, wide results").
WIDE = 4
_INT_MAX = 2 ** (_INT_BITS - 1) - 1  # the BLAS's Fortran integers


@intrinsic
def _xgemm(typingctx, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
    """``c := alpha * op(a) @ op(b) + beta * c`` in BLAS's column-major terms."""
    arrays = (a, b, c)
    if not all(isinstance(x, types.Array) for x in arrays):
        raise TypingError("_xgemm: a, b, c must be arrays")
    if len({x.dtype for x in arrays}) != 1 or str(c.dtype) not in _SYMBOLS:
        raise TypingError("_xgemm: a, b, c must share a float32 or float64 dtype")
    sig = types.none(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)

    def codegen(context, builder, signature, args):
        tys = signature.args
        dtype = c.dtype
        llfloat = context.get_value_type(dtype)
        i8, i32 = ir.IntType(8), ir.IntType(_INT_BITS)   # i32: the BLAS's integer
        int_ty = types.int64 if _INT_BITS == 64 else types.int32

        def slot(value, ty, llty):
            cast = context.cast(builder, value, ty, int_ty if llty is i32 else dtype)
            return cgutils.alloca_once_value(builder, cast)

        def flag(value, ty):
            is_t = context.cast(builder, value, ty, types.boolean)
            char = builder.select(is_t, ir.Constant(i8, ord("T")), ir.Constant(i8, ord("N")))
            return cgutils.alloca_once_value(builder, char)

        def data(i):
            return context.make_array(tys[i])(context, builder, args[i]).data

        ptr = llfloat.as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [i8.as_pointer()] * 2 + [i32.as_pointer()] * 3
                               + [ptr, ptr, i32.as_pointer(), ptr, i32.as_pointer(), ptr, ptr,
                                  i32.as_pointer()])
        fn = cgutils.get_or_insert_function(builder.module, fnty, _SYMBOLS[str(dtype)])
        builder.call(fn, [flag(args[0], tys[0]), flag(args[1], tys[1]),
                          slot(args[2], tys[2], i32), slot(args[3], tys[3], i32),
                          slot(args[4], tys[4], i32), slot(args[5], tys[5], llfloat),
                          data(6), slot(args[7], tys[7], i32), data(8),
                          slot(args[9], tys[9], i32), slot(args[10], tys[10], llfloat),
                          data(11), slot(args[12], tys[12], i32)])
        return context.get_dummy_value()

    return sig, codegen


# Written into the caller at numba IR level: no function of their own to compile.
_inline = numba.njit(inline="always", **OPTIONS)


@intrinsic
def _rule(typingctx, index):
    """``blas_threads.RULE[index]`` (an int64), read at run time."""
    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        rule = builder.module.globals.get("bptt_blas_threads_rule")
        if rule is None:
            rule = ir.GlobalVariable(builder.module, ir.ArrayType(i64, 3),
                                     "bptt_blas_threads_rule")
        index = context.cast(builder, args[0], sig.args[0], types.int64)
        return builder.load(builder.gep(rule, [i64(0), index]))

    return types.int64(index), codegen


def _thread_function(builder, name, fnty):
    return cgutils.get_or_insert_function(builder.module, fnty, name)


@intrinsic
def _get_threads(typingctx):
    """OpenBLAS's current thread count (1 where bptt does not control the BLAS)."""
    def codegen(context, builder, sig, args):
        i32 = ir.IntType(32)
        if _THREADS is None:
            return ir.Constant(ir.IntType(64), 1)
        fn = _thread_function(builder, "bptt_blas_get_threads", ir.FunctionType(i32, []))
        return builder.sext(builder.call(fn, []), ir.IntType(64))

    return types.int64(), codegen


@intrinsic
def _set_threads(typingctx, n):
    """Set OpenBLAS's thread count to `n` (nothing where bptt does not control the BLAS)."""
    def codegen(context, builder, sig, args):
        if _THREADS is not None:
            i32 = ir.IntType(32)
            fn = _thread_function(builder, "bptt_blas_set_threads",
                                  ir.FunctionType(ir.VoidType(), [i32]))
            value = context.cast(builder, args[0], sig.args[0], types.int64)
            builder.call(fn, [builder.trunc(value, i32)])
        return context.get_dummy_value()

    return types.none(n), codegen


@_inline
def _threads_for(mnk):
    """Set OpenBLAS's threads for a product of `mnk` multiply-adds (blas_threads.py's
    rule); returns the count to restore after it, or 0 where it is unchanged."""
    want = _rule(0) if mnk >= _rule(1) else 1
    have = _get_threads()
    if _rule(2) == 0 and want > have:
        want = have
    if want == have:
        return 0
    _set_threads(want)
    return have


@intrinsic
def _like(typingctx, value, arr):
    """`value` cast to the dtype of array `arr` (written into the caller)."""
    if not isinstance(arr, types.Array):
        raise TypingError("_like: expected an array")

    def codegen(context, builder, sig, args):
        return context.cast(builder, args[0], sig.args[0], arr.dtype)

    return arr.dtype(value, arr), codegen


@intrinsic
def _major(typingctx, x):
    """How BLAS can read 2-d `x`: (0, ld) row-major, (1, ld) column-major, (-1, 0) not at all.

    A dimension of size 1 has no meaningful stride; it never forces a copy. Written
    as LLVM selects: as numba code inlined three times it was a third of the
    compile time of `gemm_into`.
    """
    if not isinstance(x, types.Array) or x.ndim != 2:
        raise TypingError("_major: expected a 2-d array")
    ret = types.UniTuple(types.intp, 2)

    def codegen(context, builder, sig, args):
        ary = context.make_array(x)(context, builder, args[0])
        r, c = cgutils.unpack_tuple(builder, ary.shape, 2)
        s0, s1 = cgutils.unpack_tuple(builder, ary.strides, 2)
        size = ary.itemsize
        intp = size.type

        def const(v):
            return ir.Constant(intp, v)

        def eq(a, b):
            return builder.icmp_signed("==", a, b)

        bad = builder.or_(builder.icmp_signed("!=", builder.srem(s0, size), const(0)),
                          builder.icmp_signed("!=", builder.srem(s1, size), const(0)))
        e0, e1 = builder.sdiv(s0, size), builder.sdiv(s1, size)
        r1, c1 = eq(r, const(1)), eq(c, const(1))
        rows = builder.select(builder.icmp_signed(">", c, const(1)), c, const(1))
        cols = builder.select(builder.icmp_signed(">", r, const(1)), r, const(1))
        by_row = builder.and_(builder.or_(eq(e1, const(1)), c1),
                              builder.or_(r1, builder.icmp_signed(">=", e0, rows)))
        by_col = builder.and_(builder.or_(eq(e0, const(1)), r1),
                              builder.or_(c1, builder.icmp_signed(">=", e1, cols)))
        major = builder.select(by_row, const(0), builder.select(by_col, const(1), const(-1)))
        ld = builder.select(by_row, builder.select(r1, rows, e0),
                            builder.select(by_col, builder.select(c1, cols, e1), const(0)))
        major = builder.select(bad, const(-1), major)
        ld = builder.select(bad, const(0), ld)
        return context.make_tuple(builder, ret, [major, ld])

    return ret(x), codegen


def _row_loops(builder, intp, rows, cols, body):
    """Emit ``for i in range(rows): body(i, j_loop)``, where ``j_loop(f)`` emits
    ``for j in range(cols): f(j)`` inside the row (llvm ints)."""
    def j_loop(f):
        with cgutils.for_range(builder, cols, intp=intp) as loop:
            f(loop.index)

    with cgutils.for_range(builder, rows, intp=intp) as loop:
        body(loop.index, j_loop)


def _emit_small_gemm(context, builder, dtype, alpha, beta, arrays, unit):
    """The small product's loops: ``c[i, :] = beta * c[i, :]`` (0 where beta == 0, so
    NaN in `c` does not leak), then ``c[i, :] += alpha * a[i, p] * b[p, :]`` for each p.

    `arrays` are (data, shape, byte strides) of a, b, c. With `unit` the rows of b
    and c are contiguous: the j loops index them by element (a gep LLVM vectorizes);
    otherwise every access goes by byte strides."""
    (ad, (m, k), (sa0, sa1)), (bd, _, (sb0, sb1)), (cd, (_, n), (sc0, sc1)) = arrays
    intp, ptr = sa0.type, ad.type
    zero = ir.Constant(context.get_value_type(dtype), 0)
    beta_zero = builder.fcmp_ordered("==", beta, zero)

    def at(data, *offsets):          # &data[sum of byte offsets]
        raw = builder.bitcast(data, ir.IntType(8).as_pointer())
        for off in offsets:
            raw = builder.gep(raw, [off])
        return builder.bitcast(raw, ptr)

    def item(row, j, stride):        # &row[j]
        return builder.gep(row, [j], inbounds=True) if unit else at(row, builder.mul(j, stride))

    def row(i, j_loop):
        crow = at(cd, builder.mul(i, sc0))

        def scale(j):
            q = item(crow, j, sc1)
            builder.store(builder.select(beta_zero, zero, builder.fmul(beta, builder.load(q))), q)

        j_loop(scale)
        with cgutils.for_range(builder, k, intp=intp) as ploop:
            p = ploop.index
            aip = builder.fmul(alpha, builder.load(at(ad, builder.mul(i, sa0),
                                                      builder.mul(p, sa1))))
            brow = at(bd, builder.mul(p, sb0))

            def accumulate(j):
                q = item(crow, j, sc1)
                prod = builder.fmul(aip, builder.load(item(brow, j, sb1)))
                builder.store(builder.fadd(builder.load(q), prod), q)

            j_loop(accumulate)

    _row_loops(builder, intp, m, n, row)


@intrinsic
def _gemm_loops(typingctx, alpha, a, b, beta, c):
    """``c = beta * c + alpha * (a @ b)`` as plain loops, for small products (2-d arrays of
    one float dtype, any strides).

    Written as LLVM loops, not numba code: typed and lowered by numba, the three loop
    nests were about 0.35 of the 0.95 CPU s `gemm_into` took to compile. Rows of `b`
    and `c` with unit stride (the usual case) take a loop nest that vectorizes.
    """
    check_float_arrays("_gemm_loops", a, b, c)

    def codegen(context, builder, sig, args):
        dtype = c.dtype
        alpha_v = context.cast(builder, args[0], sig.args[0], dtype)
        beta_v = context.cast(builder, args[3], sig.args[3], dtype)
        arrays = []
        for ty, val in zip((a, b, c), (args[1], args[2], args[4])):
            ary = context.make_array(ty)(context, builder, val)
            arrays.append((ary.data, cgutils.unpack_tuple(builder, ary.shape, 2),
                           cgutils.unpack_tuple(builder, ary.strides, 2)))
        size = ary.itemsize
        n = arrays[2][1][1]
        one_col = builder.icmp_signed("==", n, n.type(1))
        unit = builder.and_(builder.icmp_signed("==", arrays[1][2][1], size),
                            builder.icmp_signed("==", arrays[2][2][1], size))
        with builder.if_else(builder.or_(unit, one_col), likely=True) as (fast, slow):
            with fast:
                _emit_small_gemm(context, builder, dtype, alpha_v, beta_v, arrays, True)
            with slow:
                _emit_small_gemm(context, builder, dtype, alpha_v, beta_v, arrays, False)
        return context.get_dummy_value()

    return types.none(alpha, a, b, beta, c), codegen


@_inline
def _gemm_blas(alpha, a, b, beta, c, cmaj, ldc):
    """The BLAS call alone, for operands BLAS reads as they are (benchmarks/dot.py)."""
    m, k = a.shape
    n = c.shape[1]
    amaj, lda = _major(a)
    bmaj, ldb = _major(b)
    if cmaj == 0:
        _xgemm(bmaj == 1, amaj == 1, n, m, k, alpha, b, ldb, a, lda, beta, c, ldc)
    else:
        _xgemm(amaj == 0, bmaj == 0, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)


@jit
def gemm_into(alpha, a, b, beta, c):
    """``c[...] = beta * c + alpha * (a @ b)`` in place, for 2-d float arrays; returns `c`.

    `a`, `b`, `c` share a float32/float64 dtype and may have any strides;
    `c` must not overlap `a` or `b`. ``beta == 0`` never reads `c`.

    Its loops are LLVM intrinsics, not numba code (module docstring): each
    function numba inlines (``inline="always"``) costs a deep copy of its IR,
    and numba's typing and lowering of loops costs more than LLVM's work on them.
    """
    m, k = a.shape
    if b.shape[0] != k or c.shape[0] != m or c.shape[1] != b.shape[1]:
        raise ValueError("gemm: shapes {} @ {} into {} not aligned", a.shape, b.shape, c.shape)
    n = c.shape[1]
    if m == 0 or n == 0:
        return c
    if k == 0 or m * n * k <= SMALL:
        _gemm_loops(alpha, a, b, beta, c)   # small products: loops
        return c
    if m > _INT_MAX or n > _INT_MAX or k > _INT_MAX:   # (max(): a function of its own)
        raise ValueError("gemm: a dimension does not fit in the BLAS's integers ({}, {}, {})",
                         m, n, k)
    # An operand BLAS cannot take as it is (negative, zero or two non-unit strides: rare)
    # goes through a C copy; a `c` BLAS cannot write is copied back afterwards.
    cmaj, ldc = _major(c)
    target = c
    if cmaj < 0:
        target = _copied(c)
        ldc = n if n > 1 else 1
    amaj, lda = _major(a)
    if amaj < 0:
        a = _copied(a)
        amaj, lda = 0, (k if k > 1 else 1)
    bmaj, ldb = _major(b)
    if bmaj < 0:
        b = _copied(b)
        bmaj, ldb = 0, (n if n > 1 else 1)
    restore = _threads_for(m * n * k)
    if cmaj == 0 and beta == 0 and bmaj == 1 and n >= WIDE * m and c.itemsize == 4:  # docstring
        t = alloc_empty((n, m), c.dtype)    # the memory of c in column-major order
        _xgemm(amaj == 0, bmaj == 0, m, n, k, alpha, a, lda, b, ldb, beta, t, m)
        _copy_transposed(c, t)
    elif cmaj <= 0:    # c^T = b^T a^T in column-major terms
        _xgemm(bmaj == 1, amaj == 1, n, m, k, alpha, b, ldb, a, lda, beta, target, ldc)
    else:            # c = a b
        _xgemm(amaj == 0, bmaj == 0, m, n, k, alpha, a, lda, b, ldb, beta, target, ldc)
    if restore > 0:
        _set_threads(restore)
    if cmaj < 0:
        _copy_back(c, target)
    return c


# Every product reaches `gemm_into` through this: it compiles once per dtype (for
# layout 'A'), and its callers do not optimize it again (see separate.py).
gemm_into_call = separately(gemm_into, any_layout=True)


# -- np.dot: written into the graph function, one `gemm_into` call each -------------------

@_inline
def dot_vv(a, b):
    """``np.dot`` of two float vectors: a scalar of their dtype."""
    out = alloc_empty((1, 1), a.dtype)
    gemm_into_call(_like(1, a), a[None, :], b[:, None], _like(0, a), out)
    return out[0, 0]


@_inline
def dot_mm(a, b):
    """``np.dot`` of two float matrices of one dtype, into a fresh C array."""
    out = alloc_empty((a.shape[0], b.shape[1]), a.dtype)
    gemm_into_call(_like(1, a), a, b, _like(0, a), out)
    return out


@_inline
def dot_mv(a, b):
    """``np.dot`` of a float matrix and vector, ``(m, k) @ (k,) -> (m,)``."""
    out = alloc_empty(a.shape[0], a.dtype)
    gemm_into_call(_like(1, a), a, b[:, None], _like(0, a), out[:, None])
    return out


@_inline
def dot_vm(a, b):
    """``np.dot`` of a float vector and matrix, ``(k,) @ (k, n) -> (n,)``."""
    out = alloc_empty(b.shape[1], a.dtype)
    gemm_into_call(_like(1, a), a[None, :], b, _like(0, a), out[None, :])
    return out


# -- the Gemm op: beta * z + alpha * (x @ y) with NumPy's broadcasting ---------------------

def _emit_scaled(context, builder, dtype, out, scale, src, accumulate):
    """``out[i, j] (+)= scale * src[i, j]`` over `out`'s shape, `src` broadcast along its
    dimensions of size 1 (llvm array structs of one dtype). Rows of unit stride (the
    usual case) take a loop LLVM vectorizes; anything else goes by byte strides."""
    rows, cols = cgutils.unpack_tuple(builder, out.shape, 2)
    o0, o1 = cgutils.unpack_tuple(builder, out.strides, 2)
    r, c = cgutils.unpack_tuple(builder, src.shape, 2)
    s0, s1 = cgutils.unpack_tuple(builder, src.strides, 2)
    zero, one = r.type(0), r.type(1)
    s0 = builder.select(builder.icmp_signed("==", r, one), zero, s0)
    s1 = builder.select(builder.icmp_signed("==", c, one), zero, s1)
    i8p, ptr = ir.IntType(8).as_pointer(), out.data.type

    def at(data, off):
        return builder.bitcast(builder.gep(builder.bitcast(data, i8p), [off]), ptr)

    def loops(unit):
        def row(i, j_loop):
            orow, srow = at(out.data, builder.mul(i, o0)), at(src.data, builder.mul(i, s0))

            def element(j):
                if unit:
                    q, v = (builder.gep(x, [j], inbounds=True) for x in (orow, srow))
                else:
                    q, v = at(orow, builder.mul(j, o1)), at(srow, builder.mul(j, s1))
                value = builder.fmul(scale, builder.load(v))
                builder.store(builder.fadd(builder.load(q), value) if accumulate else value, q)

            j_loop(element)

        _row_loops(builder, zero.type, rows, cols, row)

    size = out.itemsize
    unit = builder.and_(builder.icmp_signed("==", o1, size), builder.icmp_signed("==", s1, size))
    with builder.if_else(unit, likely=True) as (fast, slow):
        with fast:
            loops(True)
        with slow:
            loops(False)


def _scaled_intrinsic(accumulate):
    def scaled(typingctx, out, scale, src):
        check_float_arrays("_scaled", out, src)

        def codegen(context, builder, sig, args):
            o, x = (context.make_array(t)(context, builder, v)
                    for t, v in zip((out, src), (args[0], args[2])))
            value = context.cast(builder, args[1], sig.args[1], out.dtype)
            _emit_scaled(context, builder, out.dtype, o, value, x, accumulate)
            return context.get_dummy_value()

        return types.none(out, scale, src), codegen

    return intrinsic(scaled)


# ``out = scale * src`` and ``out += scale * src``, `src` broadcast to `out`'s shape.
_set_scaled = _scaled_intrinsic(False)
_add_scaled = _scaled_intrinsic(True)


@jit
def gemm_fresh(z, alpha, x, y, beta):
    """``beta * z + alpha * (x @ y)`` in a new C array, for a 2-d `z` that broadcasts with it.

    The Gemm lowering hands a 1-d `z` over as ``z[None, :]`` and a scalar as a
    1 x 1 array, so this compiles once per dtype. ``beta * z`` is computed first
    (so ``0 * nan`` is NaN, as in NumPy; BLAS with beta 0 would not read z), then
    the product is added by BLAS (beta 1). Where BLAS differs from NumPy
    (``alpha == 0`` skips the product: no NaN from x or y) or the product itself
    broadcasts against a larger z, the product is computed on its own and added.
    """
    m, n = x.shape[0], y.shape[1]
    if x.shape[1] != y.shape[0]:
        raise ValueError("gemm: shapes {} and {} not aligned", x.shape, y.shape)
    r, c = z.shape
    rows = r if r != 1 else m
    cols = c if c != 1 else n
    if (m != rows and m != 1) or (n != cols and n != 1):
        raise ValueError("gemm: z of shape {} does not broadcast with the product's {}",
                         z.shape, (m, n))
    out = alloc_empty((rows, cols), x.dtype)
    _set_scaled(out, beta, z)
    if alpha != 0 and rows == m and cols == n:
        return gemm_into_call(alpha, x, y, _like(1, out), out)
    p = alloc_empty((m, n), x.dtype)
    gemm_into_call(_like(1, p), x, y, _like(0, p), p)
    _add_scaled(out, alpha, p)
    return out


gemm_fresh_call = separately(gemm_fresh, any_layout=True)
