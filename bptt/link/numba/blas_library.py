"""Which BLAS library generated code calls: NumPy's own OpenBLAS when NumPy bundles one.

NumPy's wheels ship OpenBLAS built as ``scipy-openblas`` (functions named
``scipy_dgemm_64_`` taking 64-bit integers, or ``scipy_dgemm_`` in the 32-bit
integer build), loaded with NumPy itself. Generated code calls that library
where it exists, rather than the one scipy's wheels ship (which numba's
``np.dot`` uses):

* NumPy's copy is the newer build, and faster in float32 on a loop's small
  products (equal in float64; benchmarks/dot.py, figures in benchmarks/notes.md);
* one thread pool for NumPy and bptt, set together (``OPENBLAS_NUM_THREADS``,
  threadpoolctl).

Elsewhere (NumPy linked to MKL, Accelerate or a system BLAS) the generated code
calls scipy's ``cython_blas`` functions, as numba does. The choice is part of
the disk cache's key (`abi`), because the integer width is compiled into the
calls.

This module imports nothing but the standard library and NumPy, so the cache
can name the choice without loading the BLAS runtime.
"""
from __future__ import annotations

import ctypes
import functools
import glob
import os

import numpy as np

_NAMES = ("dgemm", "sgemm")
_TEMPLATES = (("scipy_{}_64_", 64), ("scipy_{}_", 32))
# OpenBLAS's C thread functions, ``void set(int)`` and ``int get(void)``, in the
# scipy-openblas naming of each integer width (bptt/link/blas_threads.py).
_THREAD_NAMES = {64: ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
                 32: ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads")}


@functools.lru_cache(maxsize=None)
def numpy_openblas():
    """``(path, symbol template, integer bits)`` of NumPy's bundled OpenBLAS, or None."""
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for template, bits in _TEMPLATES:
            if all(hasattr(lib, template.format(n)) for n in _NAMES):
                return path, template, bits
    return None


def numpy_openblas_addresses(names):
    """Addresses of `names` (e.g. ``"dgemm"``) in NumPy's OpenBLAS; None without one."""
    found = numpy_openblas()
    if found is None:
        return None
    path, template, _ = found
    lib = ctypes.CDLL(path)
    return {n: ctypes.cast(getattr(lib, template.format(n)), ctypes.c_void_p).value
            for n in names}


@functools.lru_cache(maxsize=None)
def numpy_openblas_threads():
    """``(set address, get address)`` of OpenBLAS's ``openblas_set_num_threads`` and
    ``openblas_get_num_threads`` in NumPy's bundled OpenBLAS, or None without them."""
    found = numpy_openblas()
    if found is None:
        return None
    lib = ctypes.CDLL(found[0])
    names = _THREAD_NAMES[found[2]]
    if not all(hasattr(lib, n) for n in names):
        return None
    return tuple(ctypes.cast(getattr(lib, n), ctypes.c_void_p).value for n in names)


def abi():
    """What the compiled BLAS calls depend on: the library kind, its integer width and
    whether generated code sets its threads."""
    found = numpy_openblas()
    if found is None:
        return "scipy cython_blas, 32-bit integers"
    threads = ", threads set" if numpy_openblas_threads() else ""
    return f"numpy {os.path.basename(found[0])}, {found[2]}-bit integers{threads}"


def _numpy_library_folders():
    """The folders NumPy's wheels put their shared libraries in (Linux and Windows:
    ``numpy.libs`` beside the package; macOS: ``numpy/.dylibs``)."""
    folder = os.path.dirname(np.__file__)
    return [os.path.realpath(os.path.join(folder, os.pardir, "numpy.libs")),
            os.path.realpath(os.path.join(folder, ".dylibs"))]


def _candidates():
    """Files that may be NumPy's OpenBLAS: the ones of NumPy's library folders this
    process loaded (Linux), then every one in those folders.

    Only NumPy's folders count: scipy's wheels ship a ``scipy_openblas`` of their own
    (32-bit integers, in ``scipy.libs``), loaded when scipy is imported before bptt
    names its BLAS. Taking that one would make the choice, and with it the disk
    cache's keys, depend on what the process imported first.
    """
    folders = _numpy_library_folders()
    found = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                parts = line.split(maxsplit=5)
                if len(parts) == 6 and "scipy_openblas" in os.path.basename(parts[5]):
                    path = parts[5].strip()
                    if os.path.dirname(os.path.realpath(path)) in folders:
                        found.append(path)
    except OSError:
        pass
    for folder in folders:
        found += sorted(glob.glob(os.path.join(folder, "*scipy_openblas*")))
    return list(dict.fromkeys(found))
