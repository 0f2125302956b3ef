"""Timing helpers shared by the benchmarks."""
from __future__ import annotations

import datetime
import os
import subprocess
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def result_stamp():
    """(today's date, the checkout's short commit): what a result file is named by."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE,
                            capture_output=True, text=True).stdout.strip() or "unknown"
    return datetime.date.today().isoformat(), commit


def load_text(load):
    """A load average triple as the result files print it."""
    return ", ".join(f"{x:.1f}" for x in load)


def median_time(fn, args, repeat):
    """Median wall time of `repeat` calls of ``fn(*args)``."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return float(np.median(times))
