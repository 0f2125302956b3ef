"""Timing helpers shared by the benchmarks."""
from __future__ import annotations

import time

import numpy as np


def median_time(fn, args, repeat):
    """Median wall time of `repeat` calls of ``fn(*args)``."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))
