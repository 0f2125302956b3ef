"""Vectorizable exp, expm1, log, log1p, tanh, sigmoid and softplus for compiled code.

numba lowers ``np.exp(x)`` on a scalar to a call of the C library, which LLVM
cannot vectorize: a loop over it is an order of magnitude slower per element
than NumPy's SIMD ufuncs (benchmarks/fastmath.py). The functions here are
plain arithmetic on the scalar, without branches (``a if c else b`` on scalars
becomes an LLVM ``select``) and without calls, so a loop over them vectorizes.
A float32 argument is computed in float32 with a float32-sized polynomial; a
float64 argument in float64. Call them from numba code (``fast_exp(x)``) or
from Python on a NumPy scalar. Generated code sees them through
``runtime`` (``from bptt.link.numba.runtime import *``).

Algorithms (the classic ones; constants from the cited sources):

* **exp, expm1.** Cody-Waite range reduction ``x = n ln2 + r``, ``|r| <= ln2/2``
  with ``n`` rounded by the "magic number" trick (adding 1.5 * 2**52 rounds to
  an integer held in the low mantissa bits, so no float-to-int conversion,
  which AVX2 lacks for 64-bit lanes), ``ln2`` split in a short high part (so
  ``n * ln2_hi`` is exact) and a low part. ``expm1(r) = r + r**2 q(r)``:
  Taylor to degree 13 in float64, Cephes ``expf``'s minimax polynomial
  (degree 7) in float32. ``2**n`` is built from bits (`_pow2_64`); exp scales by
  ``2**n1 * 2**n2`` with ``n1 + n2 = n`` so results near overflow and in the
  subnormal range are rounded once. ``expm1 = 2**n expm1(r) + (2**n - 1)``,
  which keeps full relative accuracy near 0; beyond 40 (float64) or 20
  (float32) it equals exp.
* **log, log1p.** fdlibm/musl ``log``: the bits of ``x`` give ``x = 2**k m``
  with ``m`` in ``[sqrt(2)/2, sqrt(2))`` (an integer add and mask, see
  `_log_parts64`); with ``f = m - 1``, ``s = f / (2 + f)``,
  ``log(1 + f) = f - f**2/2 + s (f**2/2 + R(s**2))`` with fdlibm's degree-14
  (float64) or musl's degree-8 (float32) minimax ``R``. Subnormals are scaled
  by ``2**54`` (``2**25``) first. ``log1p(x)`` takes ``u = 1 + x`` and adds the
  rounding error of that sum, ``(x - (u - 1)) / u``, to the result.
* **tanh** ``= sign(x) e / (e + 2)`` with ``e = expm1(2|x|)``, ``|x|`` clamped
  where tanh rounds to 1.
* **sigmoid** ``= e / (1 + e)`` for ``x < 0`` and ``1 / (1 + e)`` otherwise,
  with ``e = exp(-|x|)``: accurate (not flushed to 0) down to the subnormals.
* **softplus** ``= max(x, 0) + log1p(exp(-|x|))`` (the formula of the op).

Accuracy, in units in the last place of the correctly rounded result, for
float64 and float32 alike (tests/link/test_fastmath.py checks the bounds
against NumPy's long double functions over dense grids, the ranges where each
function changes behaviour and hypothesis draws; the "seen" column is the
largest error over those plus 7 million random bit patterns and values):

=========  =====  ========================================
function   bound  largest error seen (float64 / float32)
=========  =====  ========================================
exp        1.5    0.996 / 0.951
expm1      2.5    1.99 / 1.54
log        1      0.85 / 0.83
log1p      1      0.83 / 0.84
tanh       3      2.39 / 2.40
sigmoid    3      2.24 / 2.14
softplus   2      1.49 / 1.51
=========  =====  ========================================

Special values follow IEEE/NumPy: NaN in, NaN out; ``exp(-inf) = 0``,
``exp(inf) = inf``, ``log(0) = -inf``, ``log(x < 0) = nan``, ``log1p(-1) =
-inf``, signed zeros kept (``expm1(-0) = -0``, ``tanh(-0) = -0``), overflow to
inf and underflow through the subnormals to 0 at the same thresholds as NumPy.
No floating-point exception flags are promised.

Speed (benchmarks/fastmath.py; figures in benchmarks/notes.md): a loop over
one function runs at SIMD speed, far faster than numba's libm calls.
Exception: in float64, a loop that chains ``fast_exp`` into ``fast_log`` or
``fast_log1p``, as ``fast_softplus`` does, is several times slower than one
function alone. It is vectorized and makes no calls, but LLVM hoists about 40
constant vectors out of the loop and reloads most of them from the stack.
That reload traffic is the suspected cause; it is not confirmed. Polynomials
use Estrin's scheme where Horner's long dependency chain measurably slowed
chained calls (tanh).

Sources: W. J. Cody and W. Waite, *Software Manual for the Elementary
Functions* (1980); Sun fdlibm ``e_log.c``; musl ``logf.c``; S. Moshier, Cephes
``expf.c``.
"""
from __future__ import annotations

import numba
import numpy as np
from numba.core import types
from numba.extending import intrinsic, overload, register_jitable

from .jitting import OPTIONS, cache_on_disk

# Kernels are compiled on their own and inlined by LLVM (``alwaysinline``) into
# whatever calls them; they are only ever called from compiled code, so the cfunc
# wrapper numba would compile beside each one is dead weight.
_helper = register_jitable(forceinline=True, no_cfunc_wrapper=True)

__all__ = ["fast_exp", "fast_expm1", "fast_log", "fast_log1p", "fast_tanh",
           "fast_sigmoid", "fast_softplus"]


# -- bit casts ---------------------------------------------------------------
# Reinterpreting a float's bits as an unsigned integer of the same size (and
# back) is one LLVM ``bitcast``; numba has no scalar form of it. numba widens
# uint32 arithmetic to uint64, so float32 code casts back with _W(...) before
# a bitcast.

def _make_bitcast(src, dst):
    @intrinsic
    def bitcast(typingctx, x):
        if x != src:
            return None

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(dst))
        return dst(src), codegen
    return bitcast


_f64_bits = _make_bitcast(types.float64, types.uint64)
_bits_f64 = _make_bitcast(types.uint64, types.float64)
_f32_bits = _make_bitcast(types.float32, types.uint32)
_bits_f32 = _make_bitcast(types.uint32, types.float32)

# -- float64 constants -------------------------------------------------------
# Every constant is typed (np.float64 / np.uint64) so that numba never mixes
# signed and unsigned integers (which it would compute in float64).
_D = np.float64
_U = np.uint64
_MAGIC64 = _D(6755399441055744.0)             # 1.5 * 2**52
_LOG2E = _D(1.4426950408889634)
_LN2_HI = _D(6.93147180369123816490e-01)      # 0x3fe62e42fee00000 (32 significant bits)
_LN2_LO = _D(1.90821492927058770002e-10)
_EXP_LO, _EXP_HI = _D(-746.0), _D(710.0)      # beyond: exp is 0 / inf
_TINY64 = _D(2.2250738585072014e-308)         # smallest normal
_TWO54 = _D(2.0 ** 54)
_EXPM1_Q64 = tuple(_D(1.0 / np.prod(np.arange(1, k + 1, dtype=np.float64)))
                   for k in range(2, 14))     # 1/2!, ..., 1/13!
_LG64 = (_D(6.666666666666735130e-01), _D(3.999999999940941908e-01),
         _D(2.857142874366239149e-01), _D(2.222219843214978396e-01),
         _D(1.818357216161805012e-01), _D(1.531383769920937332e-01),
         _D(1.479819860511658591e-01))        # fdlibm Lg1..Lg7
_SQRT_HALF_BITS64 = _U(0x3fe6a09e667f3bcd)
_ONE_BITS64 = _U(0x3ff0000000000000)
_MANT64 = _U(0x000fffffffffffff)
_TWO52_BITS = _U(0x4330000000000000)          # 2**52: OR-ing a small integer in adds it
_TWO52_PLUS_BIAS = _D(2.0 ** 52 + 1023)

# -- float32 constants -------------------------------------------------------
_F = np.float32
_W = np.uint32
_MAGIC32 = _F(12582912.0)                     # 1.5 * 2**23
_LOG2E32 = _F(1.44269504088896341)
_C1_32 = _F(0.693359375)                      # Cephes: ln2 = C1 - C2, C1 has 9 bits
_C2_32 = _F(-2.12194440e-4)
_EXP_LO32, _EXP_HI32 = _F(-104.0), _F(89.0)
_TINY32 = _F(1.17549435e-38)
_TWO25 = _F(2.0 ** 25)
_EXPM1_P32 = (_F(5.0000001201e-1), _F(1.6666665459e-1), _F(4.1665795894e-2),
              _F(8.3334519073e-3), _F(1.3981999507e-3), _F(1.9875691500e-4))  # Cephes expf
_LG32 = (_F(0.66666662693), _F(0.40000972152), _F(0.28498786688),
         _F(0.24279078841))                   # musl logf Lg1..Lg4
_LN2_HI32 = _F(6.9313812256e-01)              # 0x3f317180
_LN2_LO32 = _F(9.0580006145e-06)
_SQRT_HALF_BITS32 = _W(0x3f3504f3)
_ONE_BITS32 = _W(0x3f800000)
_MANT32 = _W(0x007fffff)
_TWO23_BITS = _W(0x4b000000)
_TWO23_PLUS_BIAS = _F(2.0 ** 23 + 127)


@_helper
def _clamp(x, lo, hi):
    """min(max(x, lo), hi) that keeps NaN (comparisons with NaN are false)."""
    x = hi if x > hi else x
    return lo if x < lo else x


@_helper
def _copysign_bits64(y, x):
    return _bits_f64(_f64_bits(y) | (_f64_bits(x) & _U(0x8000000000000000)))


@_helper
def _copysign_bits32(y, x):
    return _bits_f32(_W(_f32_bits(y) | (_f32_bits(x) & _W(0x80000000))))


# -- exp family, float64 -----------------------------------------------------

@_helper
def _pow2_64(n):
    """2.0**n for an integral float n in [-1022, 1023].

    The sum's bit pattern holds n + 1023 in its low bits; shifting it left by
    52 moves those 12 bits into the exponent field (and shifts the rest out).
    """
    return _bits_f64(_f64_bits(n + (_MAGIC64 + _D(1023.0))) << _U(52))


@_helper
def _reduce_exp64(x):
    """(n, p) with exp(x) = 2**n * (1 + p), n integral, p = expm1(r), |r| <= ln2/2."""
    n = (x * _LOG2E + _MAGIC64) - _MAGIC64
    r = (x - n * _LN2_HI) - n * _LN2_LO
    # Estrin's scheme: a shallower dependency chain than Horner's, so that the
    # out-of-order core overlaps more loop iterations when calls are chained.
    c = _EXPM1_Q64
    r2 = r * r
    r4 = r2 * r2
    b0 = (c[0] + c[1] * r) + (c[2] + c[3] * r) * r2
    b1 = (c[4] + c[5] * r) + (c[6] + c[7] * r) * r2
    b2 = (c[8] + c[9] * r) + (c[10] + c[11] * r) * r2
    q = (b0 + b1 * r4) + b2 * (r4 * r4)
    return n, r + r2 * q


@_helper
def _scale64(y, n):
    """y * 2**n for integral n in [-1076, 1026], with one rounding."""
    n1 = (n * _D(0.5) + _MAGIC64) - _MAGIC64
    return (y * _pow2_64(n1)) * _pow2_64(n - n1)


@_helper
def _exp64(x):
    n, p = _reduce_exp64(_clamp(x, _EXP_LO, _EXP_HI))
    return _scale64(_D(1.0) + p, n)


@_helper
def _expm1_near64(x):
    """expm1(x) for x <= 709 (not -0): exact scaling, then a sum that does not cancel."""
    n, p = _reduce_exp64(x)
    s = _pow2_64(n)
    return s * p + (s - _D(1.0))


@_helper
def _expm1_64(x):
    n, p = _reduce_exp64(_clamp(x, _D(-50.0), _EXP_HI))
    s = _pow2_64(n)
    near = s * p + (s - _D(1.0))     # as _expm1_near64
    far = _scale64(_D(1.0) + p, n)   # x > 40: expm1 rounds to exp
    r = far if x > _D(40.0) else near
    return x if x == _D(0.0) else r  # keeps -0


# -- log family, float64 -----------------------------------------------------

@_helper
def _log_parts64(x):
    """(k, f) with x = 2**k * (1 + f), 1 + f in [sqrt(2)/2, sqrt(2)), for finite x > 0 normal.

    Adding (1.0 - sqrt(1/2)) in bits carries into the exponent exactly when the
    mantissa is >= sqrt(2)/2's, so the exponent field then holds k + 1023.
    """
    bits = _f64_bits(x) + (_ONE_BITS64 - _SQRT_HALF_BITS64)
    k = _bits_f64((bits >> _U(52)) | _TWO52_BITS) - _TWO52_PLUS_BIAS
    m = _bits_f64((bits & _MANT64) + _SQRT_HALF_BITS64)
    return k, m - _D(1.0)


@_helper
def _log_poly64(k, f, c):
    """log(2**k (1 + f)) + c, fdlibm's evaluation (c is a small correction)."""
    s = f / (_D(2.0) + f)
    z = s * s
    w = z * z
    t1 = w * (_LG64[1] + w * (_LG64[3] + w * _LG64[5]))
    t2 = z * (_LG64[0] + w * (_LG64[2] + w * (_LG64[4] + w * _LG64[6])))
    hfsq = _D(0.5) * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + t1 + t2) + (k * _LN2_LO + c))) - f)


@_helper
def _log_specials64(x, r):
    """r where x is finite and > 0; log's value at 0, negatives, inf and NaN elsewhere."""
    r = r if x > _D(0.0) else (-np.inf if x == _D(0.0) else np.nan)
    return r if x < np.inf else x


@_helper
def _log64(x):
    sub = x < _TINY64
    k, f = _log_parts64(x * _TWO54 if sub else x)
    k = k - _D(54.0) if sub else k
    return _log_specials64(x, _log_poly64(k, f, _D(0.0)))


@_helper
def _log1p64(x):
    u = _D(1.0) + x
    # log(1 + x) = log(u) + log(1 + d/u), d = (1 + x) - u exactly while u < 2**53.
    c = (x - (u - _D(1.0))) / u
    c = c if u < _D(2.0 ** 53) else _D(0.0)
    k, f = _log_parts64(u)
    r = _log_specials64(u, _log_poly64(k, f, c))
    return x if x == _D(0.0) else r


# -- exp family, float32 -----------------------------------------------------

@_helper
def _pow2_32(n):
    """2.0**n for an integral float32 n in [-126, 127] (see `_pow2_64`)."""
    return _bits_f32(_W(_f32_bits(n + (_MAGIC32 + _F(127.0))) << _W(23)))


@_helper
def _reduce_exp32(x):
    n = (x * _LOG2E32 + _MAGIC32) - _MAGIC32
    r = (x - n * _C1_32) - n * _C2_32
    c = _EXPM1_P32
    q = c[0] + r * (c[1] + r * (c[2] + r * (c[3] + r * (c[4] + r * c[5]))))
    return n, r + r * r * q


@_helper
def _scale32(y, n):
    n1 = (n * _F(0.5) + _MAGIC32) - _MAGIC32
    return (y * _pow2_32(n1)) * _pow2_32(n - n1)


@_helper
def _exp32(x):
    n, p = _reduce_exp32(_clamp(x, _EXP_LO32, _EXP_HI32))
    return _scale32(_F(1.0) + p, n)


@_helper
def _expm1_near32(x):
    n, p = _reduce_exp32(x)
    s = _pow2_32(n)
    return s * p + (s - _F(1.0))


@_helper
def _expm1_32(x):
    n, p = _reduce_exp32(_clamp(x, _F(-20.0), _EXP_HI32))
    s = _pow2_32(n)
    near = s * p + (s - _F(1.0))
    far = _scale32(_F(1.0) + p, n)
    r = far if x > _F(20.0) else near
    return x if x == _F(0.0) else r


# -- log family, float32 -----------------------------------------------------

@_helper
def _log_parts32(x):
    bits = _W(_f32_bits(x) + (_ONE_BITS32 - _SQRT_HALF_BITS32))
    k = _bits_f32(_W((bits >> _W(23)) | _TWO23_BITS)) - _TWO23_PLUS_BIAS
    m = _bits_f32(_W((bits & _MANT32) + _SQRT_HALF_BITS32))
    return k, m - _F(1.0)


@_helper
def _log_poly32(k, f, c):
    """musl logf's evaluation of log(2**k (1 + f)) + c."""
    s = f / (_F(2.0) + f)
    z = s * s
    w = z * z
    t1 = w * (_LG32[1] + w * _LG32[3])
    t2 = z * (_LG32[0] + w * _LG32[2])
    hfsq = _F(0.5) * f * f
    return s * (hfsq + t1 + t2) + (k * _LN2_LO32 + c) - hfsq + f + k * _LN2_HI32


@_helper
def _log_specials32(x, r):
    r = r if x > _F(0.0) else (_F(-np.inf) if x == _F(0.0) else _F(np.nan))
    return r if x < _F(np.inf) else x


@_helper
def _log32(x):
    sub = x < _TINY32
    k, f = _log_parts32(x * _TWO25 if sub else x)
    k = k - _F(25.0) if sub else k
    return _log_specials32(x, _log_poly32(k, f, _F(0.0)))


@_helper
def _log1p32(x):
    u = _F(1.0) + x
    c = (x - (u - _F(1.0))) / u
    c = c if u < _F(2.0 ** 24) else _F(0.0)
    k, f = _log_parts32(u)
    r = _log_specials32(u, _log_poly32(k, f, c))
    return x if x == _F(0.0) else r


# -- composites (generic over the dtype through the kernels above) -----------

@_helper
def _tanh64(x):
    # beyond |x| = 20 tanh rounds to 1; expm1(2|x|) then never needs its far branch
    a = abs(x)
    e = _expm1_near64(_D(2.0) * (_D(20.0) if a > _D(20.0) else a))
    t = _copysign_bits64(e / (e + _D(2.0)), x)
    return t if x == x else x


@_helper
def _tanh32(x):
    a = abs(x)
    e = _expm1_near32(_F(2.0) * (_F(10.0) if a > _F(10.0) else a))
    t = _copysign_bits32(e / (e + _F(2.0)), x)
    return t if x == x else x


@_helper
def _sigmoid64(x):
    e = _exp64(-abs(x))
    return (e if x < _D(0.0) else _D(1.0)) / (_D(1.0) + e)


@_helper
def _sigmoid32(x):
    e = _exp32(-abs(x))
    return (e if x < _F(0.0) else _F(1.0)) / (_F(1.0) + e)


@_helper
def _softplus64(x):
    # log1p(e) for e = exp(-|x|) in [0, 1]: u = 1 + e is in [1, 2], never a special
    # value of log, so log1p's selects are left out (they slow this chain down).
    e = _exp64(-abs(x))
    u = _D(1.0) + e
    c = (e - (u - _D(1.0))) / u
    k, f = _log_parts64(u)
    r = (x if x > _D(0.0) else _D(0.0)) + _log_poly64(k, f, c)
    return r if x == x else x


@_helper
def _softplus32(x):
    return (x if x > _F(0.0) else _F(0.0)) + _log1p32(_exp32(-abs(x)))


# -- public entry points -----------------------------------------------------
# Each is a jitted (disk-cached) function, callable from Python on a NumPy
# scalar and from numba code, where LLVM inlines it into the caller's loop. It
# calls a stub whose overload picks the kernel of the argument's dtype.

def _by_dtype(stub, impl64, impl32):
    @overload(stub, jit_options=dict(forceinline=True, no_cfunc_wrapper=True))
    def _select(x):
        if x == types.float32:
            return impl32
        if x == types.float64:
            return impl64
        return None


def _exp(x): ...
def _expm1(x): ...
def _log(x): ...
def _log1p(x): ...
def _tanh(x): ...
def _sigmoid(x): ...
def _softplus(x): ...


def _jit(fn):
    # forceinline: LLVM's `alwaysinline`, so the body is inlined into the caller's
    # loop (and vectorized there) whatever its size.
    return cache_on_disk(numba.njit(forceinline=True, **OPTIONS)(fn))


_by_dtype(_exp, _exp64, _exp32)
_by_dtype(_expm1, _expm1_64, _expm1_32)
_by_dtype(_log, _log64, _log32)
_by_dtype(_log1p, _log1p64, _log1p32)
_by_dtype(_tanh, _tanh64, _tanh32)
_by_dtype(_sigmoid, _sigmoid64, _sigmoid32)
_by_dtype(_softplus, _softplus64, _softplus32)


@_jit
def fast_exp(x):
    """exp(x) for a float32 or float64 scalar, vectorizable."""
    return _exp(x)


@_jit
def fast_expm1(x):
    """exp(x) - 1, accurate near 0."""
    return _expm1(x)


@_jit
def fast_log(x):
    """Natural logarithm."""
    return _log(x)


@_jit
def fast_log1p(x):
    """log(1 + x), accurate near 0."""
    return _log1p(x)


@_jit
def fast_tanh(x):
    """Hyperbolic tangent."""
    return _tanh(x)


@_jit
def fast_sigmoid(x):
    """1 / (1 + exp(-x)), accurate down to the subnormals."""
    return _sigmoid(x)


@_jit
def fast_softplus(x):
    """log(1 + exp(x)) without overflow."""
    return _softplus(x)
