"""Compiling in `bptt.function` against compiling in the background, on training graphs.

For each graph of benchmarks/user_graphs.py given, and each way of running it:

* ``numba``: NUMBA mode, compiled in `bptt.function` (the default);
* ``background``: NUMBA mode with ``compile_in_background=True`` (PY-mode calls
  until the child process has compiled, then the compiled code);
* ``py``: PY mode throughout (``--py-calls`` calls: only its first result is
  compared);

a fresh process with an empty cache directory builds the function and calls it
``--calls`` times, as a training loop would. It reports the wall seconds to the
first result, to the last, and the call at which the background function
switched to compiled code. Wall time (not CPU time) is what a user waits; the
machine's load average is printed with the table, since a busy machine slows
the child's compile and the calls alike. ``--repeat`` runs every way that
many times, the ways alternated within each round (graph by graph), and the
table gives medians (and the range); the first result of ``background`` is
also given as a ratio to PY mode's of the same round.

``--assume-idle-core`` makes the background path ignore the machine's load
(`background.free_cores` says one core is free): on a machine other work keeps
busy, `bptt.function` would otherwise compile at once, and ``background``
would measure ``numba`` again.

Usage: python benchmarks/background_compile.py [--graphs charlm-lstm-train,...]
       [--calls 1000] [--py-calls 3] [--ways numba,background,py] [--repeat 1]
       [--assume-idle-core]
Writes benchmarks/results/background-compile-<date>-<commit>.md.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from timing import load_text, result_stamp  # benchmarks/timing.py (run as a script)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {here!r})
import bptt
from bptt.config import config
from bptt.compile import background
way, name, calls = {way!r}, {name!r}, {calls}
config.mode = "PY" if way == "py" else "NUMBA"
config.compile_in_background = way == "background"
if {idle!r}:
    background.free_cores = lambda: 1.0
import user_graphs
f, args = user_graphs.GRAPHS[name]()
first = switched = None
for k in range(calls):
    f(*args)
    if k == 0:
        first = time.perf_counter() - t0
    if switched is None and f.running_mode == "NUMBA":
        switched = k
print(json.dumps({{"first": first, "last": time.perf_counter() - t0, "switched": switched,
                  "mode": f.running_mode}}))
"""


def run(way, name, calls, idle):
    with tempfile.TemporaryDirectory(prefix="bptt-bg-bench-") as cache:
        env = dict(os.environ, BPTT_CACHE_DIR=cache, PYTHONPATH=ROOT)
        env.pop("BPTT_CHECK_IR", None)
        code = _CHILD.format(here=HERE, way=way, name=name, calls=calls, idle=idle)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _cell(values, digits=2):
    med = statistics.median(values)
    if len(values) == 1:
        return f"{med:.{digits}f}"
    return f"{med:.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def _switched(way, runs):
    if way == "py":
        return "-"
    if way == "numba":
        return "0"
    calls = [r["switched"] for r in runs]
    return ", ".join("never" if c is None else str(c) for c in calls)


def table(rows, ways):
    """Markdown lines: one row per graph and way, medians over the rounds."""
    lines = ["| graph | way | first result s | first / PY's | last result s | compiled from call |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    for name, by_way in rows.items():
        for way in ways:
            runs = by_way[way]
            ratio = "-"
            if way == "background" and "py" in by_way:
                ratio = _cell([r["first"] / p["first"] for r, p in zip(runs, by_way["py"])])
            lines.append(f"| {name} | {way} | {_cell([r['first'] for r in runs])} | {ratio} | "
                         f"{_cell([r['last'] for r in runs], 1)} | {_switched(way, runs)} |")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default="charlm-lstm-train,digits-gru,seed-taps")
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--py-calls", type=int, default=3)
    ap.add_argument("--ways", default="numba,background,py")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--assume-idle-core", action="store_true")
    args = ap.parse_args(argv)
    ways, names = args.ways.split(","), args.graphs.split(",")
    load0, started = os.getloadavg(), time.perf_counter()
    rows = {name: {way: [] for way in ways} for name in names}
    for rnd in range(args.repeat):
        for name in names:
            for way in ways:
                calls = args.py_calls if way == "py" else args.calls
                r = run(way, name, calls, args.assume_idle_core)
                rows[name][way].append(r)
                print(f"round {rnd + 1} {name:<20} {way:<11} first {r['first']:7.2f} s  "
                      f"last {r['last']:8.2f} s  switched at call {r['switched']}  "
                      f"load {load_text(os.getloadavg()[:1])}", flush=True)
    date, commit = result_stamp()
    lines = [f"# Compiling in the background ({date}, {commit})", "",
             f"Wall seconds from process start, empty cache; {args.calls} calls per run "
             f"({args.py_calls} in PY mode: only its first result is compared); "
             f"{args.repeat} round(s), the ways alternated in each, medians (range). "
             f"Load average (1, 5, 15 min) before: {load_text(load0)}; after: "
             f"{load_text(os.getloadavg())}; {os.cpu_count()} cores; "
             f"{time.perf_counter() - started:.0f} s in all."
             + (" The background path assumed an idle core (`--assume-idle-core`)."
                if args.assume_idle_core else ""), ""]
    lines += table(rows, ways)
    path = os.path.join(HERE, "results", f"background-compile-{date}-{commit}.md")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    with open(path[:-3] + ".json", "w") as fh:
        json.dump({"args": vars(args), "load": [load0, os.getloadavg()], "rows": rows}, fh,
                  indent=1)
    print("\n".join(lines) + f"\n\nwritten to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
