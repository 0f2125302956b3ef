"""Let the C heap keep large freed arrays for the next call (glibc).

numba allocates every array with ``malloc``. glibc serves a request above
``M_MMAP_THRESHOLD`` (128 KiB at start) with fresh pages from ``mmap`` and
unmaps them on ``free``, and it gives the top of the heap back to the OS
once more than ``M_TRIM_THRESHOLD`` is free there. A compiled BPTT call
allocates and frees the same large buffers at every call: the forward trace
(T x B x H per state) and step temporaries of a few times B x H, which pass
the threshold at moderate sizes. Every fresh page costs a page fault and the
kernel zeroing it, at every call: a large share of a call's time
(benchmarks/notes.md).

`tune_malloc` raises both thresholds once per process, when the numba
backend compiles its first function. It changes the process's allocator,
which is why it is a setting: ``BPTT_MALLOC_TUNING=0`` (or
``bptt.config.malloc_tuning = False`` before the first compilation) leaves
glibc's defaults. The cost is memory kept by the process: up to
``TRIM_THRESHOLD`` of freed heap stays mapped for reuse instead of going
back to the OS. Elsewhere than glibc nothing is changed.
"""
from __future__ import annotations

import ctypes
import platform
import sys

from ...config import config

__all__ = ["tune_malloc"]

# glibc's <malloc.h> parameter numbers.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

#: Requests up to this size come from the heap (glibc's largest allowed value on 64-bit).
MMAP_THRESHOLD = 32 * 2 ** 20
#: Free memory at the top of the heap kept for reuse, not given back to the OS.
TRIM_THRESHOLD = 256 * 2 ** 20

_state = {"done": False, "tuned": False}


def tune_malloc():
    """Raise glibc's mmap and trim thresholds once; return whether they are raised."""
    if _state["done"]:
        return _state["tuned"]
    _state["done"] = True
    if not config.malloc_tuning or not sys.platform.startswith("linux"):
        return False
    if platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    # mallopt returns 1 on success; a refused value leaves glibc's default.
    ok = mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    ok = mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 and ok
    _state["tuned"] = ok
    return ok
