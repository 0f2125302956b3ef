"""The report of a `peers.py` run: its markdown tables, plot and result files.

`peers.py` measures and gathers a results dict (its "meta", "compile", "rows",
"gemm" entries); this module only formats it.
"""
from __future__ import annotations

import importlib.util
import json
import os

from impls.cases import CASES, trace_bytes  # benchmarks/impls (run from benchmarks/)


def _fmt(value, spec, empty="-"):
    return empty if value is None else format(value, spec)


def compile_table(results):
    lines = ["| implementation | cell | dtype | cold wall s | cold cpu s | warm wall s | warm cpu s "
             "| fresh ms/call | cached ms/call | cached / fresh |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for c in results["compile"]:
        if "error" in c:
            lines.append(f"| {c['impl']} | {c['kind']} | {c['dtype']} | failed: {c['error']} "
                         "| | | | | | |")
            continue
        fresh, cached = c.get("fresh_call"), c.get("cached_call")
        calls = (f"{fresh * 1e3:.2f} | {cached * 1e3:.2f} | {cached / fresh:.2f}"
                 if fresh and cached else "- | - | -")
        lines.append(f"| {c['impl']} | {c['kind']} | {c['dtype']} | {c['cold']['wall']:.2f} | "
                     f"{c['cold']['cpu']:.2f} | {c['warm']['wall']:.2f} | {c['warm']['cpu']:.2f} "
                     f"| {calls} |")
    return lines


def timing_table(results, dtype):
    lines = ["| case | implementation | median ms | ratio to best other | peak MB | "
             "trace MB | max rel. error | note |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for row in results["rows"]:
        if row["dtype"] != dtype:
            continue
        kind, *dims = CASES[row["case"]]
        trace = trace_bytes(kind, *dims, dtype) / 2 ** 20
        ms = None if row.get("median") is None else row["median"] * 1e3
        mem = None if row.get("peak_mem") is None else row["peak_mem"] / 2 ** 20
        note = "" if row["status"] == "ok" else row["status"]
        lines.append(f"| {row['case']} | {row['impl']} | {_fmt(ms, '.2f')} | "
                     f"{_fmt(row.get('ratio'), '.2f')} | {_fmt(mem, '.1f')} | {trace:.1f} | "
                     f"{_fmt(row.get('err'), '.1e')} | {note} |")
    return lines


def gemm_lines(results):
    lines = []
    for dtype, gflops in results.get("gemm", {}).items():
        runs = "/".join(f"{g[dtype]:.1f}" for g in results.get("gemm_runs", []))
        line = (f"- numpy matmul 1024x1024, one thread, {dtype}: {gflops:.1f} GFLOP/s"
                + (f" (better of {runs}: before compiling, after timing)" if runs else ""))
        frac = results.get("gemm_fraction", {}).get(dtype)
        if frac is not None:
            line += (f"; bptt on rnn-large: {frac['gflops']:.1f} GFLOP/s of matrix products = "
                     f"{100 * frac['fraction']:.0f}% of it")
        lines.append(line)
    return lines


def summary_table(results):
    lines = ["| case | dtype | bptt ms | best other | its ms | ratio | bptt peak MB | "
             "its peak MB |", "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |"]
    rows = results["rows"]
    for dtype in results["meta"]["dtypes"]:
        for case in dict.fromkeys(r["case"] for r in rows):
            mine = next((r for r in rows if (r["case"], r["dtype"], r["impl"]) ==
                         (case, dtype, "bptt")), None)
            others = [r for r in rows if r["case"] == case and r["dtype"] == dtype
                      and r["impl"] != "bptt" and r.get("median")]
            if mine is None:
                continue
            best = min(others, key=lambda r: r["median"]) if others else None

            def ms(r):
                return None if r is None or not r.get("median") else r["median"] * 1e3

            def mb(r):
                return None if r is None or r.get("peak_mem") is None else r["peak_mem"] / 2 ** 20

            lines.append(f"| {case} | {dtype} | {_fmt(ms(mine), '.2f')} | "
                         f"{best['impl'] if best else '-'} | {_fmt(ms(best), '.2f')} | "
                         f"{_fmt(mine.get('ratio'), '.2f')} | {_fmt(mb(mine), '.1f')} | "
                         f"{_fmt(mb(best), '.1f')} |")
    return lines


def _tuning_note(results):
    """What bptt's processes reported about its malloc tuning (checked, not assumed)."""
    timing, memory = set(), set()
    for r in results["rows"]:
        if r["impl"] == "bptt":
            timing.update(t for t in r.get("malloc_tuned_timing", []) if t is not None)
            if r.get("malloc_tuned_memory") is not None:
                memory.add(r["malloc_tuned_memory"])
    if not timing and not memory:
        return ""
    def say(values):
        return "/".join("on" if v else "off" for v in sorted(values)) or "-"
    return (f" Reported by bptt's processes: tuning {say(timing)} while timing, "
            f"{say(memory)} while measuring memory.")


def markdown(results):
    meta = results["meta"]
    out = [f"# bptt against its peers: forward+backward, commit {meta['commit']}", "",
           f"Commit `{meta['commit']}` ({meta['subject']}); bptt imported from "
           f"{meta['bptt_src']}. {meta['date']}, Python {meta['python']}, "
           f"{meta['cpus']} CPUs, one BLAS thread per process, each pinned to one CPU.", "",
           f"Command: `{meta['command']}` ({meta['rounds']} rounds, about {meta['seconds']} s "
           f"of calls per process and dtype; total {meta.get('elapsed', 0) / 60:.1f} min).", "",
           f"Load average at start {meta['load_start']}, at end {meta.get('load_end')}" +
           ("; 1-minute load before each phase: " +
            ", ".join(f"{k} {v}" for k, v in meta["loads"].items()) if meta.get("loads") else "")
           + "."]
    out += ["", "Memory and timing are measured in different processes. Peak memory: "
            "`MALLOC_MMAP_THRESHOLD_=65536` and `BPTT_MALLOC_TUNING=0` for every "
            "implementation, so freed arrays leave the resident set. Timing and compile: no "
            "malloc setting in the environment, each implementation as its users get it: "
            "**bptt tunes glibc malloc by default** (at its first compilation: mmap threshold "
            "32 MiB, trim threshold 256 MiB, so traces and step temporaries are reused between "
            "calls without page faults; `BPTT_MALLOC_TUNING=0` turns it off), while torch, "
            "JAX, numba, NumPy and PyTensor run with glibc's defaults." +
            _tuning_note(results)]
    if meta.get("shared"):
        out += ["", "**Timings were taken under shared load** (load average above 1.5 on "
                f"{meta['cpus']} CPUs): absolute times are inflated, ratios within one run "
                "are more meaningful."]
    out += ["", "Versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()), ""]
    out += ["## GEMM throughput", ""] + gemm_lines(results) + [""]
    out += ["## bptt against the best other implementation", "",
            "ratio = bptt's time / the best other's time (below 1: bptt fastest).", ""]
    out += summary_table(results) + [""]
    for dtype in meta["dtypes"]:
        out += [f"## Per call, {dtype}", "", "Median over rounds of each process's median; "
                "ratio = this time / the best other implementation's time for the case "
                "(below 1: fastest). Peak MB: rise of the peak resident set during one call "
                "after warm-up (memory processes, see above); trace MB: T x B x H per state.",
                ""]
        out += timing_table(results, dtype) + [""]
    out += ["## Compile (build + first call, fresh process)", "",
            "Cold: empty cache directory; warm: the cache the cold process filled. Measured "
            "on the first selected case of each cell type. Per call: the median time of that "
            "case's calls right after the build, in the cold process (freshly compiled code) "
            "and in the warm one (code loaded from the cache); one process each, so the "
            "ratio carries the machine's noise. Python bytecode as installed: bptt and the "
            "benchmark modules byte-compiled beforehand, children free to write `.pyc` "
            "(bptt's generated modules get theirs in the cold process).", ""]
    out += compile_table(results) + [""]
    return "\n".join(out)


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dtypes = results["meta"]["dtypes"]
    fig, axes = plt.subplots(1, len(dtypes), figsize=(6 * len(dtypes), 4.5), squeeze=False)
    impls = list(dict.fromkeys(r["impl"] for r in results["rows"]))
    for ax, dtype in zip(axes[0], dtypes):
        cases = list(dict.fromkeys(r["case"] for r in results["rows"] if r["dtype"] == dtype))
        width = 0.8 / max(1, len(impls))
        for k, impl in enumerate(impls):
            xs, ys = [], []
            for j, case in enumerate(cases):
                for r in results["rows"]:
                    if (r["case"], r["dtype"], r["impl"]) == (case, dtype, impl) and r.get("ratio"):
                        xs.append(j + (k - (len(impls) - 1) / 2) * width)
                        ys.append(r["ratio"])
            ax.bar(xs, ys, width, label=impl)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xticks(range(len(cases)), cases)
        ax.set_title(f"{dtype}: time / best other implementation")
        ax.set_ylabel("ratio (log scale, below 1 = fastest)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle(f"forward+backward, commit {results['meta']['commit']}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def result_stem(results):
    """``peers-<date>-<commit>``: a run's files are named by its day and bptt's commit
    (``-worktree`` appended when the working tree was measured)."""
    meta = results["meta"]
    stem = f"peers-{meta['date'][:10]}-{meta['commit']}"
    return stem + ("-worktree" if meta["bptt_src"].startswith("the working tree") else "")


def write_outputs(results, out_dir):
    """Write the run's .md, .json and .png into `out_dir`; returns their path without suffix."""
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, result_stem(results))
    with open(base + ".md", "w") as f:
        f.write(markdown(results))
    with open(base + ".json", "w") as f:
        json.dump(results, f, indent=1)
    if importlib.util.find_spec("matplotlib"):
        plot(results, base + ".png")
    else:
        print("matplotlib is not installed: no plot (pip install -e '.[bench]')")
    return base
