"""Does code loaded from bptt's disk cache run as fast as freshly compiled code?

    python benchmarks/cache_speed.py [--cases rnn-small,rnn-medium,lstm]
                                     [--dtypes float64] [--pairs 5] [--seconds 1.0]
                                     [--bptt-src head|worktree] [--json FILE] [--out FILE.md]

The target of issue #5 ("cached code runs as fast as fresh code"; PyTensor's
ran about 40% slower). ``peers.py`` times one cold and one warm process per
cell: one noisy sample each. This script takes several, interleaved.

Method, per cell type (rnn, lstm) and dtype:

1. fill: a fresh process with an empty cache directory builds
   ``bptt_rnn.bptt_function`` (NUMBA mode) and calls it; that directory is the
   *filled* cache (its own timings are kept in the JSON, not in the summary);
2. ``--pairs`` pairs of fresh processes, the two of a pair run one after the
   other, alternating which goes first: a *fresh* process with its own new,
   empty cache directory (it compiles), and a *cached* process on the filled
   cache (it loads). Each process builds the function, calls it once on each
   selected case of that cell type (the first call on the first case is the
   build time), then per case makes one warm-up call and times calls for about
   ``--seconds`` (at least 3): its result is the median per call;
3. a cached process must have loaded and not compiled: it counts numba's
   ``numba:compile`` events (fired only when numba really compiles, not on a
   cache load) and the cache hits and misses of every dispatcher, and the
   parent counts the files of the filled cache before and after it (a compile
   would write new ones). A cached process that compiled is reported;
4. summary per case and dtype: the median over processes of the fresh and of
   the cached per-call medians, ratio = cached / fresh of those medians, the
   min-max of each, a 95% bootstrap interval of the ratio (resampling
   processes within each arm, 2000 draws, seeded), and the per-pair ratios
   (the two processes of a pair ran seconds apart, under about the same load).

Children are started as ``peers.py`` starts its own (``peers.Runner``): one BLAS
thread, pinned to one CPU, no malloc setting in the environment (bptt's default
malloc tuning applies), bptt and numba caches under the given directory, bptt's
source byte-compiled first and taken from a clean export of HEAD unless
``--bptt-src worktree``. The load average is recorded at the start and end and
before every process.

Cost: a fresh process compiles the cell's function (on a 2-core machine about
10-13 CPU s for the RNN, 20-25 s for the LSTM), so the defaults (5 pairs,
rnn-small and rnn-medium sharing the RNN processes) take about 5 minutes.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import tempfile
import time

import numpy as np

# time the compiled code from the first call, not PY calls while it compiles
os.environ.setdefault("BPTT_COMPILE_IN_BACKGROUND", "0")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import peers  # noqa: E402  (its Runner, export and child helpers)
from impls.cases import CASES, data  # noqa: E402

DEFAULT_CASES = ["rnn-small", "rnn-medium", "lstm"]
DTYPES = ("float64", "float32")
BOOTSTRAP_DRAWS = 2000


# == the child ============================================================================
class CompileCounter:
    """Counts numba's ``numba:compile`` events: real compiles only, not cache loads."""

    def __init__(self):
        from numba.core import event

        counter = self

        class Listener(event.Listener):
            def on_start(self, ev):
                counter.count += 1
                dispatcher = ev.data.get("dispatcher")
                func = getattr(dispatcher, "py_func", None)
                counter.names.append(getattr(func, "__qualname__", repr(dispatcher)))

            def on_end(self, ev):
                pass

        self.count, self.names = 0, []
        self.listener = Listener()
        event.register("numba:compile", self.listener)

    def close(self):
        from numba.core import event

        event.unregister("numba:compile", self.listener)


def cache_stats():
    """Disk-cache hits and misses summed over every numba dispatcher in this process."""
    from numba.core.dispatcher import Dispatcher

    hits = misses = 0
    for obj in gc.get_objects():
        try:
            if not isinstance(obj, Dispatcher):
                continue
        except ReferenceError:   # a weak proxy whose object is gone (isinstance asks it)
            continue
        hits += sum(obj._cache_hits.values())
        misses += sum(obj._cache_misses.values())
    return hits, misses


def time_calls(run, args, seconds):
    """One warm-up call, then calls for about `seconds` (at least 3).

    Median wall seconds per call, median CPU seconds of this thread per call (the
    process runs on one CPU with one BLAS thread, so that is the call's work,
    without the time other jobs held the CPU), and the number of calls.
    """
    run(*args)
    wall, cpu = [], []
    end = time.perf_counter() + seconds
    while len(wall) < 3 or time.perf_counter() < end:
        c0, t0 = time.thread_time(), time.perf_counter()
        run(*args)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
    return {"median": float(np.median(wall)), "cpu": float(np.median(cpu)), "calls": len(wall)}


def child(cases, dtype, seconds):
    counter = CompileCounter()
    kind = CASES[cases[0]][0]
    module = peers.load("bptt")
    inputs = {case: peers._case_args(case, dtype) for case in cases}
    start = peers._clock()
    built = module.build(kind, dtype)
    first = built.run(*inputs[cases[0]])
    build = peers._since(start)
    losses = {cases[0]: float(first[0])}
    for case in cases[1:]:
        losses[case] = float(built.run(*inputs[case])[0])
    compiles, names = counter.count, counter.names[:20]
    hits, misses = cache_stats()
    counter.close()
    per_call = {}
    for case in cases:
        per_call[case] = time_calls(built.run, inputs[case], seconds)
    return {"build": build, "compiles": compiles, "compiled": names, "cache_hits": hits,
            "cache_misses": misses, "per_call": per_call, "loss": losses,
            "malloc_tuned": peers._malloc_tuned("bptt")}


def child_main(argv):
    peers._pin_to_one_cpu()
    cases, dtype, seconds = argv
    print("RESULT " + json.dumps(child(cases.split(","), dtype, float(seconds))))


# == the parent ===========================================================================
class Runner(peers.Runner):
    script = os.path.abspath(__file__)


def count_files(folder):
    return sum(len(files) for _, _, files in os.walk(folder))


def load1():
    return round(os.getloadavg()[0], 2)


def run_cell(runner, kind, cases, dtype, pairs, seconds, log):
    """Fill, then `pairs` interleaved (fresh, cached) processes: the cell's raw results."""
    argv = [",".join(cases), dtype, str(seconds)]
    filled = tempfile.mkdtemp(prefix=f"filled-{kind}-{dtype}-", dir=runner.work_dir)
    cell = {"kind": kind, "dtype": dtype, "cases": cases, "fresh": [], "cached": []}
    load = load1()
    cell["fill"] = dict(runner.run(argv, filled), load=load)
    log(f"  {kind} {dtype} fill: build {cell['fill']['build']['cpu']:.1f} CPU s, "
        f"{cell['fill']['compiles']} numba compiles (load {load})")
    for i in range(pairs):
        order = ("fresh", "cached") if i % 2 == 0 else ("cached", "fresh")
        for arm in order:
            load = load1()
            if arm == "fresh":
                cache = tempfile.mkdtemp(prefix=f"fresh-{kind}-{dtype}-", dir=runner.work_dir)
                res = dict(runner.run(argv, cache), load=load)
            else:
                before = count_files(filled)
                res = dict(runner.run(argv, filled), load=load)
                res["new_cache_files"] = count_files(filled) - before
            res["pair"] = i
            cell[arm].append(res)
            calls = ", ".join(f"{c} {res['per_call'][c]['median'] * 1e3:.3f} ms "
                              f"(cpu {res['per_call'][c]['cpu'] * 1e3:.3f})" for c in cases)
            log(f"  pair {i + 1} {arm:>6}: build {res['build']['cpu']:5.2f} CPU s, "
                f"{res['compiles']} compiles, cache hits {res['cache_hits']} misses "
                f"{res['cache_misses']}; {calls} (load {load})")
    return cell


def bootstrap_ratio(fresh, cached, draws=BOOTSTRAP_DRAWS, seed=0):
    """95% interval of median(cached) / median(fresh), resampling each arm's processes."""
    rng = np.random.default_rng(seed)
    f = np.asarray(fresh, float)[rng.integers(0, len(fresh), (draws, len(fresh)))]
    c = np.asarray(cached, float)[rng.integers(0, len(cached), (draws, len(cached)))]
    ratios = np.median(c, axis=1) / np.median(f, axis=1)
    lo, hi = np.percentile(ratios, [2.5, 97.5])
    return float(lo), float(hi)


def loaded_cleanly(res):
    """Whether a cached process compiled nothing and wrote nothing to the cache."""
    return res["compiles"] == 0 and res["cache_misses"] == 0 and not res.get("new_cache_files")


METRICS = {"median": "wall-clock", "cpu": "CPU time of the calling thread"}


def compare(cell, case, metric):
    """Fresh against cached per-call medians of one case: the row's numbers for `metric`."""
    fresh = [r["per_call"][case][metric] for r in cell["fresh"] if metric in r["per_call"][case]]
    cached = [r["per_call"][case][metric] for r in cell["cached"]
              if metric in r["per_call"][case]]
    out = {"fresh": fresh, "cached": cached}
    if fresh and cached:
        by_pair = {r["pair"]: r["per_call"][case][metric] for r in cell["fresh"]}
        pair_ratios = [r["per_call"][case][metric] / by_pair[r["pair"]]
                       for r in cell["cached"] if r["pair"] in by_pair]
        out.update(fresh_median=float(np.median(fresh)), cached_median=float(np.median(cached)),
                   ratio=float(np.median(cached) / np.median(fresh)),
                   ci=bootstrap_ratio(fresh, cached), pair_ratios=pair_ratios,
                   cached_slower=sum(p > 1 for p in pair_ratios))
    return out


def summarize(cells):
    """One row per (case, dtype) from the cells' per-process results."""
    rows = []
    for cell in cells:
        for case in cell["cases"]:
            row = {"case": case, "dtype": cell["dtype"]}
            for metric in METRICS:
                row[metric] = compare(cell, case, metric)
            row["fresh_build_cpu"] = [r["build"]["cpu"] for r in cell["fresh"]]
            row["cached_build_cpu"] = [r["build"]["cpu"] for r in cell["cached"]]
            row["unclean"] = sum(not loaded_cleanly(r) for r in cell["cached"])
            row["loads"] = [r["load"] for r in cell["fresh"] + cell["cached"]]
            losses = {r["loss"][case] for r in cell["fresh"] + cell["cached"]}
            row["same_loss"] = len(losses) <= 1
            rows.append(row)
    return rows


def _range(values, scale=1.0, spec=".3f"):
    return f"{min(values) * scale:{spec}}-{max(values) * scale:{spec}}" if values else "-"


def table(rows, metric="median"):
    lines = ["| case | dtype | pairs | fresh ms | (min-max) | cached ms | (min-max) | "
             "cached / fresh | 95% bootstrap | pair ratios | cached slower |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in rows:
        r = row[metric]
        if "ratio" not in r:
            lines.append(f"| {row['case']} | {row['dtype']} | 0 | - | - | - | - | - | - | - | - |")
            continue
        lines.append(
            f"| {row['case']} | {row['dtype']} | {len(r['pair_ratios'])} | "
            f"{r['fresh_median'] * 1e3:.3f} | {_range(r['fresh'], 1e3)} | "
            f"{r['cached_median'] * 1e3:.3f} | {_range(r['cached'], 1e3)} | "
            f"{r['ratio']:.3f} | {r['ci'][0]:.3f}-{r['ci'][1]:.3f} | "
            f"{_range(r['pair_ratios'])} | {r['cached_slower']}/{len(r['pair_ratios'])} |")
    return lines


def build_table(rows):
    lines = ["| case | dtype | fresh build CPU s | cached build CPU s | cached processes that "
             "compiled | same loss in all | 1-min load |",
             "| --- | --- | ---: | ---: | ---: | --- | ---: |"]
    for r in rows:
        fb, cb = r["fresh_build_cpu"], r["cached_build_cpu"]
        lines.append(
            f"| {r['case']} | {r['dtype']} | "
            f"{np.median(fb) if fb else float('nan'):.2f} ({_range(fb, spec='.2f')}) | "
            f"{np.median(cb) if cb else float('nan'):.2f} ({_range(cb, spec='.2f')}) | "
            f"{r['unclean']}/{len(cb)} | {'yes' if r['same_loss'] else 'NO'} | "
            f"{_range(r['loads'], spec='.1f')} |")
    return lines


def markdown(results):
    meta = results["meta"]
    out = [f"# Cached code against fresh code, commit {meta['commit']}", "",
           f"Command: `{meta['command']}` ({meta['pairs']} pairs, about {meta['seconds']} s "
           f"of calls per case and process; total {meta['elapsed'] / 60:.1f} min). "
           f"bptt from {meta['bptt_src']}; Python {meta['python']}, numba {meta['numba']}, "
           f"{meta['cpus']} CPUs, one BLAS thread per process, each pinned to one CPU.", "",
           f"Load average at start {tuple(meta['load_start'])}, at end "
           f"{tuple(meta['load_end'])}.", "",
           "Per call: median over processes of each process's median per call; ratio = "
           "cached / fresh of those medians; the bootstrap interval resamples processes "
           "within each arm; pair ratios: cached / fresh of the two processes of a pair; "
           "cached slower: pairs where the cached process was slower."]
    for metric, what in METRICS.items():
        out += ["", f"## Per call, {what}", ""] + table(results["rows"], metric)
    out += ["", "## Build", "",
            "First call, CPU s, median and min-max over processes. A cached "
            "process counts as compiled if numba fired a compile event, missed its disk "
            "cache, or wrote a file to the cache.", ""]
    out += build_table(results["rows"]) + [""]
    return "\n".join(out)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    p.add_argument("--cases", default=",".join(DEFAULT_CASES),
                   help=f"comma-separated, from {','.join(CASES)}")
    p.add_argument("--dtypes", default="float64", help="comma-separated: float64,float32")
    p.add_argument("--pairs", type=int, default=5, help="(fresh, cached) pairs per cell")
    p.add_argument("--seconds", type=float, default=1.0,
                   help="seconds of timed calls per case and process")
    p.add_argument("--bptt-src", choices=("head", "worktree"), default="head")
    p.add_argument("--json", default=None, help="write every number here")
    p.add_argument("--out", default=None, help="write the markdown report here")
    a = p.parse_args(argv)
    a.cases = peers._split(a.cases, DEFAULT_CASES, CASES)
    a.dtypes = peers._split(a.dtypes, ["float64"], DTYPES)
    if a.pairs < 1 or a.seconds <= 0:
        p.error("--pairs must be at least 1 and --seconds positive")
    return a


def main(argv=None):
    a = parse_args(argv)
    started = time.perf_counter()
    log = peers.log
    load_start = peers.log_load()
    cells = []
    with tempfile.TemporaryDirectory(prefix="bptt-cache-speed-") as work_dir:
        bptt_src = (peers.export_head(os.path.join(work_dir, "src")) if a.bptt_src == "head"
                    else peers.ROOT)
        peers.byte_compile(os.path.join(bptt_src, "bptt"), HERE)
        runner = Runner(bptt_src, work_dir)
        for dtype in a.dtypes:
            for kind, cases in peers.kinds_to_cases(a.cases).items():
                log(f"{kind} {dtype}: cases {', '.join(cases)}")
                cells.append(run_cell(runner, kind, cases, dtype, a.pairs, a.seconds, log))
    import numba

    head, _ = peers.git_describe()
    results = {
        "meta": {"commit": head, "date": time.strftime("%Y-%m-%d %H:%M"),
                 "python": platform.python_version(), "numba": numba.__version__,
                 "cpus": os.cpu_count(),
                 "bptt_src": ("a clean export of HEAD" if a.bptt_src == "head"
                              else "the working tree"),
                 "command": "python benchmarks/cache_speed.py " + " ".join(sys.argv[1:]),
                 "pairs": a.pairs, "seconds": a.seconds, "load_start": load_start,
                 "load_end": tuple(round(x, 2) for x in os.getloadavg()),
                 "elapsed": time.perf_counter() - started},
        "rows": summarize(cells), "cells": cells}
    text = markdown(results)
    print()
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return results


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child_main(sys.argv[2:])
    else:
        main()
