"""Per-scan statistics: ``scan(..., name="rnn", profile=True)``.

A profiled Scan op owns a `ScanProfile` that counts calls, executed steps
and seconds spent in the loop. PY mode records from ``perform``; NUMBA mode
from the generated loop, which reads the clock and reports through two short
object-mode blocks per call (never per step). Object-mode code cannot be
cached on disk, so only loops that ask for a profile pay that.

The statistics belong to the op, as in Theano: every function compiled
from the same scan adds to them.
"""
from __future__ import annotations

import itertools
import time

_registry = {}
_keys = itertools.count(1)


class ScanProfile:
    """Calls, executed steps and loop time of one scan."""

    def __init__(self, name):
        self.name = name
        self.calls = 0
        self.steps = 0
        self.seconds = 0.0
        self.key = next(_keys)
        _registry[self.key] = self

    def record(self, steps, seconds):
        self.calls += 1
        self.steps += int(steps)
        self.seconds += float(seconds)

    def summary(self):
        per_step = self.seconds / self.steps * 1e6 if self.steps else 0.0
        return (f"scan {self.name!r}: {self.calls} calls, {self.steps} steps, "
                f"{self.seconds:.6f} s in the loop ({per_step:.2f} us/step)")

    __str__ = summary


def clock():
    """Seconds from a monotonic clock (called from generated object-mode blocks)."""
    return time.perf_counter()


def record(key, steps, start):
    """Credit `steps` and the time since `start` to the profile registered as `key`."""
    _registry[key].record(steps, time.perf_counter() - start)


def profiles(obj):
    """The `ScanProfile`s of the profiled scans in a compiled function or graph."""
    fgraph = getattr(obj, "fgraph", obj)
    found = []
    for node in fgraph.toposort():
        prof = getattr(node.op, "profile", None)
        if isinstance(prof, ScanProfile) and prof not in found:
            found.append(prof)
    return found
