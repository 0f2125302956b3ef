"""Compile time of user-shaped graphs: cold, as a new graph after the first, from the cache.

For each graph of benchmarks/user_graphs.py (the char-LM training step with each
cell and its evaluation function, a digit classifier, a 2-layer bidirectional
LSTM, a scan with `until`, a nested scan, the seeds' examples) it measures the
CPU seconds of a fresh process that imports bptt, builds the graph's
`bptt.function` and calls it once:

* ``cold``: NUMBA mode, empty bptt and numba cache directories;
* ``new graph``: NUMBA mode, cache directories holding what one other graph
  (``--warm-with``, the char-LM RNN training step; the GRU one for that graph
  itself) left there: bptt's runtime helpers (BLAS calls, chunk products, ...) are
  compiled, the graph's own functions are not. What a user pays for a new
  graph, or the same graph after changing a hyperparameter that is part of it,
  on a machine that has compiled once;
* ``cache``: the same directories again, after ``new graph`` stored the graph;
* ``PY``: PY mode (no compilation), the same build and first call.

CPU seconds are the child's user+system time from ``os.wait4`` (every thread of
it, numba's compile included), like benchmarks/compile_profile.py;
``import bptt`` alone is measured the same way and printed as the floor, and so
is numba's own floor for code from a disk cache: a process that imports numba and
calls one trivial ``@njit(cache=True)`` function its cache holds. The
targets of issue 23 are checked: <= 5 s cold, <= 2 s new graph, <= 0.5 s from
the cache. ``--jobs`` runs that many graphs' processes at once (their CPU time
is their own; on a loaded machine it only shortens the wall time).

Usage: python benchmarks/compile_user_graphs.py [--only NAME,...] [--jobs 1] [--skip-py]
Writes benchmarks/results/compile-user-graphs-<date>-<commit>.md.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from timing import result_stamp  # noqa: E402  benchmarks/timing.py (run as a script)

# time the compiled code from the first call, not PY calls while it compiles
os.environ.setdefault("BPTT_COMPILE_IN_BACKGROUND", "0")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TARGETS = {"cold": 5.0, "new graph": 2.0, "cache": 0.5}
WARM_WITH = "charlm-rnn-train"


def child(name, mode):
    if name == "numba-floor":
        return _numba_floor()
    import bptt

    bptt.config.mode = mode
    if name == "import":
        return
    sys.path.insert(0, HERE)
    from user_graphs import GRAPHS

    f, args = GRAPHS[name]()
    f(*args)


def _numba_floor():
    import numba
    import numpy as np

    @numba.njit(cache=True)
    def total(x):
        return x.sum()

    total(np.ones(3))


def run_child(name, mode, cache):
    """(CPU seconds, wall seconds) of one fresh process building and calling graph `name`."""
    env = dict(os.environ, BPTT_CACHE_DIR=os.path.join(cache, "bptt"),
               NUMBA_CACHE_DIR=os.path.join(cache, "numba"),
               PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", name, mode],
                         env=env, cwd=HERE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{name} ({mode}) failed:\n{stderr.decode()[-3000:]}")
    return usage.ru_utime + usage.ru_stime, wall


def measure(name, warm_dirs, skip_py):
    """{column: (CPU s, wall s)} of graph `name`, each in its own fresh process."""
    row = {}
    with tempfile.TemporaryDirectory() as cold:
        row["cold"] = run_child(name, "NUMBA", cold)
    with tempfile.TemporaryDirectory() as tmp:
        warm = os.path.join(tmp, "cache")
        shutil.copytree(warm_dirs[name == WARM_WITH], warm)
        row["new graph"] = run_child(name, "NUMBA", warm)
        row["cache"] = run_child(name, "NUMBA", warm)
    if not skip_py:
        with tempfile.TemporaryDirectory() as empty:
            row["PY"] = run_child(name, "PY", empty)
    print(name, {k: round(v[0], 2) for k, v in row.items()}, flush=True)
    return row


def table(rows):
    cols = ["cold", "new graph", "cache", "PY"]
    lines = ["| graph | " + " | ".join(f"{c} CPU s" for c in cols) + " | targets met |",
             "| --- |" + " ---: |" * len(cols) + " --- |"]
    for name, row in rows.items():
        cells = [f"{row[c][0]:.2f}" if c in row else "-" for c in cols]
        missed = [c for c, limit in TARGETS.items() if row[c][0] > limit]
        lines.append(f"| {name} | " + " | ".join(cells) + " | "
                     + ("yes" if not missed else "no: " + ", ".join(missed)) + " |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", nargs=2, metavar=("NAME", "MODE"))
    parser.add_argument("--only", default="")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--skip-py", action="store_true")
    a = parser.parse_args()
    if a.child:
        return child(*a.child)
    sys.path.insert(0, HERE)
    from user_graphs import GRAPHS

    names = [n for n in a.only.split(",") if n] or list(GRAPHS)
    load_before = os.getloadavg()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        floor = run_child("import", "NUMBA", os.path.join(tmp, "import"))
        run_child("numba-floor", "NUMBA", os.path.join(tmp, "floor"))   # fills its cache
        numba_floor = run_child("numba-floor", "NUMBA", os.path.join(tmp, "floor"))
        warm_dirs = {False: os.path.join(tmp, "warm-a"), True: os.path.join(tmp, "warm-b")}
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
            warming = [pool.submit(run_child, WARM_WITH, "NUMBA", warm_dirs[False]),
                       pool.submit(run_child, "charlm-gru-train", "NUMBA", warm_dirs[True])]
            for w in warming:
                w.result()
            futures = {n: pool.submit(measure, n, warm_dirs, a.skip_py) for n in names}
            rows = {n: futures[n].result() for n in names}
    load_after = os.getloadavg()
    date, commit = result_stamp()
    out = [f"# Compile time of user-shaped graphs ({date}, {commit})", "",
           f"CPU seconds of a fresh process (import, build, first call); `import bptt` alone: "
           f"{floor[0]:.2f} CPU s; numba's floor from its cache (import numba, call one "
           f"cached `@njit` function): {numba_floor[0]:.2f} CPU s. New graph: after `{WARM_WITH}` "
           f"(`charlm-gru-train` for that graph). Targets: <= 5 s cold, <= 2 s new graph, "
           f"<= 0.5 s from the cache.", "",
           f"Load average (1, 5, 15 min): {', '.join(f'{x:.1f}' for x in load_before)} before, "
           f"{', '.join(f'{x:.1f}' for x in load_after)} after, on {os.cpu_count()} cores; "
           f"{a.jobs} graph(s) measured at once; {time.perf_counter() - started:.0f} s wall.", ""]
    out += table(rows) + [""]
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    path = os.path.join(HERE, "results", f"compile-user-graphs-{date}-{commit}.md")
    with open(path, "w") as f:
        f.write("\n".join(out))
    with open(path[:-3] + ".json", "w") as f:
        json.dump({"load": [load_before, load_after], "import": floor,
                   "numba_floor": numba_floor, "rows": rows}, f, indent=1)
    print("\n".join(out))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
