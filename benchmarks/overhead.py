"""Per-call overhead and compile time of ``f(x) = x + 1`` on a 10-element vector.

    python benchmarks/overhead.py [--repeats 5] [--json out.json] [--plot out.png]

Rows:

* ``numpy``: a plain Python function ``lambda x: x + 1`` (the floor).
* ``numba.njit``: the same function jitted with ``cache=True``.
* ``bptt NUMBA`` and ``bptt PY``: ``bptt.function([x], x + 1)``.

Columns:

* ``per call``: median over repeats of the mean time of one call, measured in
  this process after a warm-up call.
* ``cold compile``: in a fresh process with an empty cache directory, the
  time from nothing to a callable that has been called once (for bptt:
  building the graph, `bptt.function`, the first call). numba's one-time
  initialisation happens inside it and is also shown on its own
  (``numba init``: the first compilation of a trivial function in a process).
* ``warm compile``: the same in a fresh process whose cache directory a
  previous process filled (numba loads machine code instead of compiling).
* ``import``: importing the package in the fresh process (numba for
  ``numba.njit``; bptt and, in NUMBA mode, numba for bptt).

Every compile-time number is the median over `--repeats` fresh processes;
wall-clock and CPU (process) time are both reported because a busy machine
inflates wall time.
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
import timeit

# time the compiled code from the first call, not PY calls while it compiles
os.environ.setdefault("BPTT_COMPILE_IN_BACKGROUND", "0")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

NJIT_MODULE = """\
import numba

@numba.njit(cache=True)
def inc(x):
    return x + 1
"""


# -- workers: run in fresh processes -----------------------------------------
def _clock():
    return time.perf_counter(), time.process_time()


def _since(start):
    wall, cpu = _clock()
    return {"wall": wall - start[0], "cpu": cpu - start[1]}


def worker_bptt(mode):
    import numpy as np

    t = _clock()
    import bptt
    import bptt.tensor as T
    if mode == "NUMBA":
        import bptt.link.numba.linker  # noqa: F401  (imports numba)
    imported = _since(t)
    t = _clock()
    x = T.vector("x")
    f = bptt.function([x], x + 1, mode=mode)
    f(np.arange(10.0))
    return {"import": imported, "compile": _since(t)}


def worker_njit(folder):
    import numpy as np

    t = _clock()
    import numba  # noqa: F401
    imported = _since(t)
    sys.path.insert(0, folder)
    t = _clock()
    from njit_inc import inc

    inc(np.arange(10.0))
    return {"import": imported, "compile": _since(t)}


def worker_numba_init():
    import numba
    import numpy as np

    t = _clock()
    numba.njit(lambda a: a)(np.zeros(1))
    return {"compile": _since(t)}


WORKERS = {"bptt": worker_bptt, "njit": worker_njit, "init": worker_numba_init}


# -- the driver --------------------------------------------------------------
def fresh_process(kind, arg, env):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", kind, arg]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def compile_times(kind, arg, repeats, env_for):
    """Median cold and warm numbers over `repeats` pairs of fresh processes."""
    cold, warm = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="bptt-bench-") as cache:
            env = env_for(cache)
            cold.append(fresh_process(kind, arg, env))
            warm.append(fresh_process(kind, arg, env))
    return _median(cold), _median(warm)


def _median(reports):
    out = {}
    for key in reports[0]:
        out[key] = {c: statistics.median(r[key][c] for r in reports) for c in ("wall", "cpu")}
    return out


def per_call_us(fn, arg, repeats=7, number=20000):
    fn(arg)
    runs = timeit.repeat(lambda: fn(arg), number=number, repeat=repeats)
    return statistics.median(runs) / number * 1e6


def measure(repeats):
    import numpy as np

    sys.path.insert(0, ROOT)
    base = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    rows = {}
    a = np.arange(10.0)

    rows["numpy"] = {"call": per_call_us(lambda v: v + 1, a)}

    def njit_env(cache):
        with open(os.path.join(cache, "njit_inc.py"), "w") as f:
            f.write(NJIT_MODULE)
        return dict(base, NUMBA_CACHE_DIR=os.path.join(cache, "numba"))

    cold, warm = compile_times("njit", "", repeats, lambda c: dict(njit_env(c), BENCH_DIR=c))
    import numba

    inc = numba.njit(lambda x: x + 1)
    rows["numba.njit"] = {"call": per_call_us(inc, a), "cold": cold, "warm": warm}

    import bptt
    import bptt.tensor as T

    for mode in ("NUMBA", "PY"):
        cold, warm = compile_times("bptt", mode, repeats,
                                   lambda c: dict(base, BPTT_CACHE_DIR=c))
        with tempfile.TemporaryDirectory(prefix="bptt-bench-") as cache:
            bptt.config.cache_dir = cache
            x = T.vector("x")
            f = bptt.function([x], x + 1, mode=mode)
            rows[f"bptt {mode}"] = {"call": per_call_us(f, a), "cold": cold, "warm": warm}

    init = [fresh_process("init", "", base) for _ in range(repeats)]
    rows["numba init"] = {"cold": _median(init)}
    return rows


def _fmt(r, key, part, clock):
    if key not in r or part not in r[key]:
        return "-"
    return f"{r[key][part][clock]:.3f}"


def table(rows):
    head = (f"{'':12s} {'per call':>10s} | {'cold compile':>14s} {'warm compile':>14s} | "
            f"{'import':>8s}")
    sub = f"{'':12s} {'us':>10s} | {'wall / cpu s':>14s} {'wall / cpu s':>14s} | {'wall s':>8s}"
    lines = [head, sub, "-" * len(head)]
    for name, r in rows.items():
        call = f"{r['call']:.2f}" if "call" in r else "-"
        cold = f"{_fmt(r, 'cold', 'compile', 'wall')} / {_fmt(r, 'cold', 'compile', 'cpu')}"
        warm = f"{_fmt(r, 'warm', 'compile', 'wall')} / {_fmt(r, 'warm', 'compile', 'cpu')}"
        lines.append(f"{name:12s} {call:>10s} | {cold:>14s} {warm:>14s} | "
                     f"{_fmt(r, 'cold', 'import', 'wall'):>8s}")
    return "\n".join(lines)


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n in rows if "call" in rows[n]]
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.barh(names, [rows[n]["call"] for n in names])
    ax.set_xlabel("per-call time of f(x) = x + 1, 10 elements (us)")
    fig.tight_layout()
    fig.savefig(path)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=5, help="fresh processes per compile number")
    p.add_argument("--json", help="also write the numbers to this file")
    p.add_argument("--plot", help="also draw per-call times to this image (needs matplotlib)")
    p.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        kind, arg = args.worker
        if kind == "njit":
            arg = os.environ["BENCH_DIR"]
        print(json.dumps(WORKERS[kind](*([arg] if arg else []))))
        return
    rows = measure(args.repeats)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpu(s); medians over "
          f"{args.repeats} fresh processes (compile) and 7 x 20000 calls (per call)\n")
    print(table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    if args.plot:
        plot(rows, args.plot)


if __name__ == "__main__":
    main()
