"""Global settings, read once from the environment and changeable at run time.

``floatX``
    Default float dtype ("float64" unless ``BPTT_FLOATX`` says otherwise).
``cache_dir``
    Where compiled numba code is kept between processes (``BPTT_CACHE_DIR``,
    default ``~/.cache/bptt``). Set ``BPTT_CACHE_DIR=""`` to disable the disk cache.
``mode``
    Default compilation mode, "NUMBA" or "PY" (``BPTT_MODE``).
``dump_source``
    Print generated numba source when a function is compiled (``BPTT_DUMP_SOURCE=1``).
``check_ir``
    Verify graph invariants after every rewrite pass and every grad (``BPTT_CHECK_IR=1``).
``exclude_rewrites``
    Names of rewrite passes (`bptt/compile/passes.py`) that `bptt.function` skips
    (``BPTT_EXCLUDE_REWRITES=name1,name2``); tests compare results with and without a pass.
``rewrites``
    Whether `bptt.function` rewrites graphs at all (``BPTT_REWRITES=0`` skips every pass
    of `bptt/compile/passes.py`, step graphs included: the graph runs as `scan` and
    `grad` built it). The reference every rewrite is checked against: a program must
    give the same values with and without rewrites, in both modes.
``malloc_tuning``
    Raise glibc's mmap and trim thresholds when the numba backend first compiles,
    so large arrays freed by one call are reused by the next without page faults
    (``BPTT_MALLOC_TUNING=0`` to keep glibc's defaults; see link/numba/allocator.py).
``chunk_rows``
    Stacked rows per chunk of a backward loop's weight-gradient sums
    (``BPTT_CHUNK_ROWS``, default 256; `scan_chunk_accumulators`), and of the
    products a loop computes for its sequences (`scan_chunk_seq_products`): each chunk of
    about ``chunk_rows / batch`` steps keeps its step cotangents (``chunk_rows`` rows)
    and adds them to the gradients with one matrix product. Fewer rows use less
    memory and run the product in smaller, slower pieces. 256 rather than 1024: a
    quarter of the staging memory at the same time within noise on a large RNN
    (docs/scan-internals.md has the measurement). Read when a
    function is compiled, so it is part of the compiled code (and of the graph memo's key).
``reuse_forward``
    Whether a backward loop reads the products its forward loop computed (the LSTM's
    pre-activation ``x_t @ Wx + h_{t-1} @ Wh + b``, recorded as a T x B x 4H array:
    `scan_reuse_forward`) instead of recomputing them (in chunks of steps where
    `scan_chunk_seq_products` applies). ``"auto"``, the default: record a value where
    that saves work, that is where recomputing it costs a matrix product over an
    inner size not known to be below ``reuse.MIN_INNER`` (each recorded element then
    saves that many multiply-adds per step for one store and one load); elementwise
    work is recomputed. ``True`` records every product value, ``False`` none
    (``BPTT_REUSE_FORWARD=auto|1|0``). The record costs memory: on an LSTM about
    twice its h and c traces, for about a fifth less time (docs/scan-internals.md has
    the figures); ``False`` is the memory-lean plan. Part of the graph memo's key.
``blas_threads``
    Threads of the BLAS products bptt calls (``BPTT_BLAS_THREADS``). 0, the default:
    one thread for a product under 2**23 multiply-adds (the products inside loops),
    and for a larger one the cores the other processes leave free, so a busy machine
    runs every product on one thread (bptt/link/blas_threads.py). ``n`` runs every
    product on ``n`` threads. Read at every call: no recompilation.
``compile_in_background``
    Default of `bptt.function`'s ``compile_in_background``; on unless
    ``BPTT_COMPILE_IN_BACKGROUND=0``. A NUMBA function not in the disk cache runs
    in PY mode at once while a child process compiles it, when a core is idle for
    the child, then switches to the compiled code (bptt/compile/background.py): a
    training script shows its first results as soon as PY mode could, instead of
    after numba's cold compile. The first calls' values are PY mode's (equal to
    rounding, not bit for bit). Turn it off to time the compiled code from the
    first call, or call ``f.wait_for_compile()`` before timing.
"""
from __future__ import annotations

import os


#: settings the compiled code does not depend on (read at each call, or deciding only
#: how a function gets compiled): the graph memo's key leaves them out
NOT_IN_COMPILED_CODE = ("blas_threads", "compile_in_background")


class _Config:
    def __init__(self):
        self.floatX = os.environ.get("BPTT_FLOATX", "float64")
        default_cache = os.path.join(os.path.expanduser("~"), ".cache", "bptt")
        self.cache_dir = os.environ.get("BPTT_CACHE_DIR", default_cache)
        self.mode = os.environ.get("BPTT_MODE", "NUMBA").upper()
        self.dump_source = os.environ.get("BPTT_DUMP_SOURCE", "") not in ("", "0")
        self.check_ir = os.environ.get("BPTT_CHECK_IR", "") not in ("", "0")
        self.exclude_rewrites = tuple(
            n for n in os.environ.get("BPTT_EXCLUDE_REWRITES", "").split(",") if n)
        self.rewrites = os.environ.get("BPTT_REWRITES", "1") not in ("", "0")
        self.malloc_tuning = os.environ.get("BPTT_MALLOC_TUNING", "1") not in ("", "0")
        self.chunk_rows = _int_from_env("BPTT_CHUNK_ROWS", 256)
        self.reuse_forward = _reuse_from_env(os.environ.get("BPTT_REUSE_FORWARD", "auto"))
        self.blas_threads = _int_from_env("BPTT_BLAS_THREADS", 0)
        self.compile_in_background = os.environ.get(
            "BPTT_COMPILE_IN_BACKGROUND", "1") not in ("", "0")

    def __setattr__(self, name, value):
        if name == "floatX" and value not in ("float32", "float64"):
            raise ValueError(f"floatX must be 'float32' or 'float64', got {value!r}")
        if name == "mode" and value not in ("NUMBA", "PY"):
            raise ValueError(f"mode must be 'NUMBA' or 'PY', got {value!r}")
        if name == "chunk_rows" and (isinstance(value, bool) or not isinstance(value, int)
                                     or value < 1):
            raise ValueError(f"chunk_rows must be an int of at least 1, got {value!r} "
                             "(BPTT_CHUNK_ROWS sets it from the environment)")
        if name == "reuse_forward" and value not in ("auto", True, False):
            raise ValueError(f"reuse_forward must be 'auto', True or False, got {value!r} "
                             "(BPTT_REUSE_FORWARD=auto|1|0 sets it from the environment)")
        if name == "blas_threads" and (isinstance(value, bool) or not isinstance(value, int)
                                       or value < 0):
            raise ValueError(f"blas_threads must be an int of at least 0 (0: bptt chooses), "
                             f"got {value!r} (BPTT_BLAS_THREADS sets it from the environment)")
        object.__setattr__(self, name, value)


def _reuse_from_env(text):
    values = {"": "auto", "auto": "auto", "1": True, "0": False}
    if text.lower() not in values:
        raise ValueError(f"BPTT_REUSE_FORWARD={text!r}: expected auto, 1 or 0")
    return values[text.lower()]


def _int_from_env(name, default):
    text = os.environ.get(name, "")
    try:
        return int(text) if text else default
    except ValueError:
        raise ValueError(f"{name}={text!r} is not an integer") from None


config = _Config()
