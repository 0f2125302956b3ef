"""Cold compile of small indexing graphs and their gradients, optionally against another tree.

Each graph (a matrix ``x``; `GRAPHS`) is built, compiled in NUMBA mode and called
once in a fresh process with empty bptt and numba cache directories, without and
with its gradient (``grad(sum(out * out), x)``); the child's user+system CPU
seconds (``os.wait4``) are printed, the median of ``--rounds`` processes.
``trivial`` (``x * 2``) is the floor: importing bptt and one elementwise loop.
With ``--against DIR`` (a copy of another bptt source tree, e.g. from
``git archive``) each process of this tree alternates with one of DIR and the
ratio is printed: on a loaded machine only alternated figures compare.

Usage: python benchmarks/compile_indexing.py [--only slice,roll-diff] [--rounds 2]
                                             [--against DIR]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

#: name -> (what it computes, for the table); built by `_build`
GRAPHS = {
    "trivial": "x * 2",
    "slice": "x[1:-1]",
    "reverse": "x[::-1]",
    "int-index": "x[i]",
    "set-slice": "set_subtensor(x[1:3], y)",
    "inc-int": "inc_subtensor(x[i], v)",
    "embedding": "x[idx] (its gradient: AdvancedIncSubtensor)",
    "concatenate": "concatenate([x, x * 2])",
    "roll-diff": "diff(roll(x, 2, axis=1), axis=1)",
    "fill-diagonal": "fill_diagonal(x, 3.0)",
}


def _build(name, grad):
    import numpy as np

    import bptt
    import bptt.tensor as T

    x, i, y, v = T.dmatrix("x"), T.lscalar("i"), T.dmatrix("y"), T.dvector("v")
    idx = T.lvector("idx")
    rng = np.random.default_rng(0)
    inputs = [x, i, y, v, idx]
    values = [rng.normal(size=(7, 4)), 2, rng.normal(size=(2, 4)), rng.normal(size=4),
              np.array([1, 3, 3, 0])]
    out = {"trivial": lambda: x * 2, "slice": lambda: x[1:-1], "reverse": lambda: x[::-1],
           "int-index": lambda: x[i], "set-slice": lambda: T.set_subtensor(x[1:3], y),
           "inc-int": lambda: T.inc_subtensor(x[i], v), "embedding": lambda: x[idx],
           "concatenate": lambda: T.concatenate([x, x * 2], axis=0),
           "roll-diff": lambda: T.diff(T.roll(x, 2, axis=1), axis=1),
           "fill-diagonal": lambda: T.fill_diagonal(x, 3.0)}[name]()
    if grad:
        out = bptt.grad(T.sum(out * out), x)
    bptt.function(inputs, out, mode="NUMBA", on_unused_input="ignore")(*values)


def _cpu_seconds(tree, name, grad):
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, BPTT_CACHE_DIR=os.path.join(tmp, "bptt"),
                   NUMBA_CACHE_DIR=os.path.join(tmp, "numba"), BPTT_COMPILE_IN_BACKGROUND="0",
                   PYTHONPATH=tree)
        p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child", name,
                              str(int(grad))], env=env, cwd=HERE, stderr=subprocess.PIPE)
        err = p.stderr.read()
        _, status, usage = os.wait4(p.pid, 0)
        if status:
            raise RuntimeError(f"{name} in {tree} failed:\n{err.decode()[-3000:]}")
        return usage.ru_utime + usage.ru_stime


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--only", default="")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--against", default=None, help="another bptt source tree, alternated")
    p.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        return _build(a.child[0], a.child[1] == "1")
    trees = [ROOT] + ([os.path.abspath(a.against)] if a.against else [])
    print(f"load average {os.getloadavg()[0]:.1f}; CPU s of a cold process, median of "
          f"{a.rounds}; columns: this tree" + (f", {trees[1]}, ratio" if a.against else ""))
    for name in [n for n in a.only.split(",") if n] or list(GRAPHS):
        for grad in (False, True):
            times = [[] for _ in trees]
            for _ in range(a.rounds):
                for k, tree in enumerate(trees):
                    times[k].append(_cpu_seconds(tree, name, grad))
            cells = [statistics.median(t) for t in times]
            ratio = f"  {cells[0] / cells[1]:.2f}" if a.against else ""
            label = f"{name}{' grad' if grad else ''}"
            print(f"{label:20s} " + "  ".join(f"{c:6.2f}" for c in cells) + ratio
                  + f"   {GRAPHS[name]}", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
