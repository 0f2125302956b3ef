"""Helpers the scan lowering calls from generated loops.

They are jitted once, with the disk cache, so a scan kernel pays for a call
instead of compiling string formatting and array copies itself: numba
compiles ``raise ValueError("..." + str(n))`` and array-to-array setitem in
about a second each, in every function that contains them.
"""
import warnings

from numba.core.errors import NumbaWarning

from ...scan.profiling import clock as scan_profile_clock
from ...scan.profiling import record as scan_profile_record
from .runtime import jit

# Profiled loops read the clock in object mode; the nogil note numba prints then is noise.
warnings.filterwarnings("ignore", message="Code running in object mode won't allow parallel",
                        category=NumbaWarning)

__all__ = ["copy_into", "fail1", "fail2", "fail3", "fail_row_shape", "scan_profile_clock",
           "scan_profile_record"]


@jit
def copy_into(dst, src):
    """``dst[...] = src`` for a C-contiguous `dst` and a `src` of the same shape."""
    flat = dst.reshape(-1)
    j = 0
    for x in src.flat:
        flat[j] = x
        j += 1


@jit
def fail1(s0, i0, s1):
    raise ValueError(s0 + str(i0) + s1)


@jit
def fail2(s0, i0, s1, i1, s2):
    raise ValueError(s0 + str(i0) + s1 + str(i1) + s2)


@jit
def fail3(s0, i0, s1, i1, s2, i2, s3):
    raise ValueError(s0 + str(i0) + s1 + str(i1) + s2 + str(i2) + s3)


@jit
def fail_row_shape(s0, step, s1, got, s2, want, s3):
    raise ValueError(s0 + str(step) + s1 + str(got) + s2 + str(want) + s3)
