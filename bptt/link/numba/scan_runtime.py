"""Helpers the scan lowering calls from generated loops.

They are jitted once, with the disk cache, so a scan kernel pays for a call
instead of compiling array copies itself: numba compiles array-to-array
setitem in about a second, in every function that contains one.
"""
import warnings

from numba.core.errors import NumbaWarning

from ...scan.profiling import clock as scan_profile_clock
from ...scan.profiling import record as scan_profile_record
from .runtime import jit

# Profiled loops read the clock in object mode; the nogil note numba prints then is noise.
warnings.filterwarnings("ignore", message="Code running in object mode won't allow parallel",
                        category=NumbaWarning)

__all__ = ["copy_into", "scan_profile_clock", "scan_profile_record"]


@jit
def copy_into(dst, src):
    """``dst[...] = src`` for a C-contiguous `dst` and a `src` of the same shape."""
    flat = dst.reshape(-1)
    j = 0
    for x in src.flat:
        flat[j] = x
        j += 1
