"""Helpers the scan lowering calls from generated loops.

Row copies are `copy_into`, an intrinsic written into the loop (numba's
array-to-array setitem is slow to compile, in every function that contains one).
`ring_in_time_order` puts a ring buffer's rows back in step order after the
loop: compiled once per array type and called `separately`, instead of two
loops written into every scan function and compiled with each.
"""
import warnings

from numba.core.errors import NumbaWarning

from ...scan.profiling import clock as scan_profile_clock
from ...scan.profiling import record as scan_profile_record
from .alloc_runtime import alloc_empty, copy_into  # noqa: F401  (intrinsics)
from .jitting import jit
from .separate import separately

# Profiled loops read the clock in object mode; the nogil note numba prints then is noise.
warnings.filterwarnings("ignore", message="Code running in object mode won't allow parallel",
                        category=NumbaWarning)

__all__ = ["copy_into", "ring_in_time_order_call", "scan_profile_clock", "scan_profile_record"]


@jit
def ring_in_time_order(buf, total, rows):
    """The rows of ring `buf` (`rows` rows) that received `total` rows, oldest first."""
    if total < rows:
        return buf[:total]
    r = total % rows if rows > 0 else 0
    if r == 0:
        return buf
    out = alloc_empty(buf.shape, buf.dtype)      # rows r.. then rows ..r
    copy_into(out[:rows - r], buf[r:])
    copy_into(out[rows - r:], buf[:r])
    return out


ring_in_time_order_call = separately(ring_in_time_order)
