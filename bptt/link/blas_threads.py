"""How many threads the BLAS products bptt calls may use.

OpenBLAS runs a product of more than about 262,144 multiply-adds on all its
threads (``OPENBLAS_NUM_THREADS``, default: every core), and its threads
wait for each other at every product. On a machine whose cores are busy a
waiting thread is descheduled for milliseconds, so the small products inside
a loop, hundreds per call, each pay that wait, and a training step runs many
times slower than on one thread (benchmarks/blas_threads.py; figures in
benchmarks/notes.md). The rule here:

* a product of fewer than `LARGE` multiply-adds (m * n * k) runs on one thread;
* a larger one runs on `large_threads()` threads: the cores the other
  processes leave free (the machine's busy CPU time over the last half
  second, from ``/proc/stat``, less this process's own), at least 1 and at
  most the cores this process may run on and the threads OpenBLAS has at
  that moment (``OPENBLAS_NUM_THREADS``, threadpoolctl). On a loaded machine
  that is one thread for every product;
* ``bptt.config.blas_threads = n`` (``BPTT_BLAS_THREADS=n``) runs every
  product on ``n`` threads instead; 0 (the default) is the rule above.

The NUMBA backend applies it per product: `gemm_into` (link/numba/blas.py)
reads `RULE` (three integers whose address generated code knows as the LLVM
symbol ``bptt_blas_threads_rule``), sets OpenBLAS's threads around the call
when they differ (``openblas_set_num_threads``, a cheap call) and restores
them, so NumPy's own products keep their settings. `refresh`, run by the
call glue of every compiled function, writes `RULE`. The PY backend runs
each call under `large_threads()` threads (`threads`), and NumPy's OpenBLAS
keeps its own one-thread rule for products under 262,144 multiply-adds.
Only NumPy's bundled OpenBLAS is controlled (blas_library.py); elsewhere the
BLAS keeps its own settings.

`LARGE` is where two threads were measurably faster than one on an idle
2-core machine: ``python benchmarks/blas_threads.py --sweep`` measures it.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import time

from ..config import config
from .numba.blas_library import numpy_openblas_threads

__all__ = ["LARGE", "RULE", "refresh", "threads_for", "large_threads", "threads",
           "get_threads", "set_threads", "others_busy"]

# Products with at least this many multiply-adds may use more than one thread.
LARGE = 1 << 23
# What generated code reads: (threads of a large product, the least m * n * k of a large
# product, 1 where config.blas_threads forces the count); see `_write_rule`.
RULE = (ctypes.c_int64 * 3)(1, LARGE, 0)
RULE_ADDRESS = ctypes.addressof(RULE)
# How often the machine's load is sampled (seconds); between samples `refresh` only
# reads the clock, a small part of a compiled function's call overhead.
INTERVAL = 0.5

_functions = numpy_openblas_threads()
if _functions is not None:
    set_threads = ctypes.CFUNCTYPE(None, ctypes.c_int)(_functions[0])
    get_threads = ctypes.CFUNCTYPE(ctypes.c_int)(_functions[1])
else:
    def set_threads(n):
        """No BLAS whose threads bptt controls: nothing to set."""

    def get_threads():
        return 1


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _busy_cpu_seconds():
    """(the machine's busy CPU seconds, this process's CPU seconds), or None off Linux."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    # cpu  user nice system idle iowait irq softirq steal ...
    ticks = [int(v) for v in fields[1:9]]
    busy = sum(ticks) - ticks[3] - ticks[4]
    own = os.times()
    return busy / os.sysconf("SC_CLK_TCK"), own.user + own.system


class _Load:
    """The other processes' busy cores, smoothed over the last few samples."""

    def __init__(self):
        self.cores = _cores()
        self.last = (time.monotonic(), _busy_cpu_seconds())
        self.others = self._from_loadavg()
        self.measured = False      # `others` is the load average's guess until a sample
        self.due = 0.0

    def _from_loadavg(self):
        try:
            return min(max(0.0, os.getloadavg()[0] - 1), self.cores)   # less this process
        except OSError:
            return 0.0

    def sample(self, now):
        then, before = self.last
        after = _busy_cpu_seconds()
        self.last = (now, after)
        if before is None or after is None or now - then <= 0:
            self.others = self._from_loadavg()
            return
        busy = min(max((after[0] - before[0] - (after[1] - before[1])) / (now - then), 0.0),
                   self.cores)
        # The load average trails the machine by minutes (a run that just ended still
        # counts): the first measured interval replaces it instead of being averaged in.
        self.others = 0.5 * self.others + 0.5 * busy if self.measured else busy
        self.measured = True


_load = _Load()
_state = {"forced": None, "large": 1}


def others_busy():
    """The cores the other processes keep busy, as the rule last saw it."""
    return _load.others


def others_busy_now(min_interval=0.2, first_interval=0.05):
    """The cores the other processes keep busy, sampled now unless the last sample is
    younger than `min_interval` seconds (a shorter window is mostly clock-tick noise).

    Before the first sample `others` is the load average's guess, which still counts
    a run that ended a minute ago: a decision taken soon after import (whether to
    compile in the background) would see an idle machine as busy. So the first
    sample is taken at once, over the time since import, waiting for the rest of
    `first_interval` seconds if less has passed."""
    now = time.monotonic()
    if not _load.measured and _load.last[1] is not None:
        wait = _load.last[0] + first_interval - now
        if wait > 0:
            time.sleep(wait)
        _load.sample(time.monotonic())
    elif now - _load.last[0] >= min_interval:
        _load.sample(now)
    return _load.others


def machine_cores():
    """The cores this process may run on."""
    return _load.cores


def large_threads():
    """Threads for a product of at least `LARGE` multiply-adds under the automatic rule."""
    free = round(_load.cores - _load.others)
    return max(1, min(free, _load.cores, get_threads()))


def threads_for(m, n, k):
    """Threads the product of an ``m x k`` and a ``k x n`` matrix runs on (the rule the
    generated code applies, written in Python: tests and the PY backend)."""
    forced, large, least = RULE[2], RULE[0], RULE[1]
    want = large if m * n * k >= least else 1
    return want if forced else min(want, get_threads())


def refresh():
    """Bring `RULE` up to date: config.blas_threads, and the load every `INTERVAL` s."""
    forced = config.blas_threads
    now = time.monotonic()
    if forced == _state["forced"] and now < _load.due:
        return
    if now >= _load.due:
        _load.due = now + INTERVAL
        _load.sample(now)
    _state["forced"] = forced
    _write_rule(forced)


def _write_rule(forced):
    if forced:
        RULE[0], RULE[1], RULE[2] = forced, 0, 1
    else:
        RULE[0], RULE[1], RULE[2] = large_threads(), LARGE, 0


@contextlib.contextmanager
def threads():
    """Run the body with OpenBLAS on the rule's threads for a large product (PY mode)."""
    refresh()
    have = get_threads()
    want = RULE[0] if RULE[2] else min(RULE[0], have)
    if want == have:
        yield
        return
    set_threads(want)
    try:
        yield
    finally:
        set_threads(have)
