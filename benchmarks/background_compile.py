"""Compiling in `bptt.function` against compiling in the background, on training graphs.

For each graph of benchmarks/user_graphs.py given, and each way of running it:

* ``numba``: NUMBA mode, compiled in `bptt.function` (the default);
* ``background``: NUMBA mode with ``compile_in_background=True`` (PY-mode calls
  until the child process has compiled, then the compiled code);
* ``py``: PY mode throughout;

a fresh process with an empty cache directory builds the function and calls it
``--calls`` times, as a training loop would. It reports the wall seconds to the
first result, to the last, and the call at which the background function
switched to compiled code. Wall time (not CPU time) is what a user waits; the
machine's load average is printed with the table, since a busy machine slows
the child's compile and the calls alike.

Usage: python benchmarks/background_compile.py [--graphs charlm-lstm-train,...]
       [--calls 1000] [--ways numba,background,py]
Writes benchmarks/results/background-compile-<date>-<commit>.md.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from timing import result_stamp  # benchmarks/timing.py (run as a script)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {here!r})
import bptt
from bptt.config import config
way, name, calls = {way!r}, {name!r}, {calls}
config.mode = "PY" if way == "py" else "NUMBA"
config.compile_in_background = way == "background"
import user_graphs
f, args = user_graphs.GRAPHS[name]()
first = switched = None
for k in range(calls):
    f(*args)
    if k == 0:
        first = time.perf_counter() - t0
    if switched is None and f.running_mode == "NUMBA":
        switched = k
print(json.dumps({{"first": first, "last": time.perf_counter() - t0, "switched": switched}}))
"""


def run(way, name, calls):
    with tempfile.TemporaryDirectory(prefix="bptt-bg-bench-") as cache:
        env = dict(os.environ, BPTT_CACHE_DIR=cache, PYTHONPATH=ROOT)
        env.pop("BPTT_CHECK_IR", None)
        code = _CHILD.format(here=HERE, way=way, name=name, calls=calls)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default="charlm-lstm-train,digits-gru,seed-taps")
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--ways", default="numba,background,py")
    args = ap.parse_args(argv)
    load0 = os.getloadavg()
    rows = []
    for name in args.graphs.split(","):
        for way in args.ways.split(","):
            r = run(way, name, args.calls)
            rows.append((name, way, r))
            print(f"{name:<20} {way:<11} first {r['first']:7.2f} s  last {r['last']:8.2f} s  "
                  f"switched at call {r['switched']}", flush=True)
    date, commit = result_stamp()
    lines = [f"# Compiling in the background ({date}, {commit})", "",
             f"Wall seconds from process start, empty cache, {args.calls} calls per run. "
             f"Load average (1, 5, 15 min) before: {', '.join(f'{x:.1f}' for x in load0)}; "
             f"after: {', '.join(f'{x:.1f}' for x in os.getloadavg())}; "
             f"{os.cpu_count()} cores.", "",
             "| graph | way | first result s | last result s | compiled from call |",
             "| --- | --- | ---: | ---: | ---: |"]
    for name, way, r in rows:
        sw = "-" if way == "py" else (0 if way == "numba" else r["switched"])
        lines.append(f"| {name} | {way} | {r['first']:.2f} | {r['last']:.2f} | {sw} |")
    path = os.path.join(HERE, "results", f"background-compile-{date}-{commit}.md")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines) + f"\n\nwritten to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
