"""bptt's BLAS threads rule against fixed thread counts, on a busy and on an idle machine.

Three graphs: the char-LM LSTM training step (benchmarks/user_graphs.py, T=64 B=32
H=128), and the rnn-small and rnn-large forward+backward of benchmarks/impls/cases.py
(rnn-large: T=100 B=64 In=256 H=512, whose step product 64 x 512 @ 512 x 512 is
above the rule's `LARGE`). Each is timed per call under three settings, the
repetitions interleaved so a change of the machine's load hits all three:

* ``bptt``: ``bptt.config.blas_threads = 0``, the rule of bptt/link/blas_threads.py;
* ``1 thread``: ``blas_threads = 1``;
* ``2 threads``: ``blas_threads = 2``, every product on OpenBLAS's two threads
  (what OpenBLAS's default does with the products above its own threshold).

Two phases: ``busy``, with two busy-loop processes started by the benchmark (stopped
at the phase's end; each stops by itself after 30 minutes), and ``idle``, without them. The
machine's load average and the rule's view of the other processes' busy cores
are printed with each phase: on a shared machine ``idle`` is only as idle as the
others leave it. ``--sweep`` also times NumPy's product on one and two threads
over sizes, which is how `LARGE` is chosen (run it on an idle machine).

Usage: python benchmarks/blas_threads.py [--repeat 15] [--sweep] [--phases busy,idle]
                                         [--settings "bptt,1 thread,2 threads"]
Writes benchmarks/results/blas-threads-<date>-<commit>.md.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time

import numpy as np

from timing import result_stamp  # noqa: E402  benchmarks/timing.py (run as a script)

# time the compiled code from the first call, not PY calls while it compiles
os.environ.setdefault("BPTT_COMPILE_IN_BACKGROUND", "0")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SETTINGS = (("bptt", 0), ("1 thread", 1), ("2 threads", 2))


def _busy_loop(seconds):
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        x += 1


def build_graphs():
    import bptt
    from bptt_rnn import bptt_function
    from impls.cases import CASES, data
    from user_graphs import charlm_train

    bptt.config.mode = "NUMBA"
    graphs = {}
    f, args = charlm_train("lstm")
    graphs["lstm train step"] = (f, args)
    for name in ("rnn-small", "rnn-large"):
        kind, t, b, n_in, h = CASES[name]
        graphs[name] = (bptt_function(kind, "float64"), data(kind, t, b, n_in, h, "float64"))
    for f, args in graphs.values():   # compile, and the first call's allocations
        f(*args)
    return graphs


def time_settings(graphs, repeat, settings):
    """{graph: {setting: [seconds per call]}}, settings interleaved call by call.

    The order rotates from one repetition to the next: OpenBLAS's threads spin for a
    while after a product on two threads, and slow down whatever call comes next."""
    import bptt

    times = {g: {s: [] for s, _ in settings} for g in graphs}
    for g, (f, args) in graphs.items():
        for r in range(repeat):
            for s, n in settings[r % len(settings):] + settings[:r % len(settings)]:
                bptt.config.blas_threads = n
                t0 = time.perf_counter()
                f(*args)
                times[g][s].append(time.perf_counter() - t0)
    bptt.config.blas_threads = 0
    return times


def load_line():
    from bptt.link import blas_threads

    one, five, _ = os.getloadavg()
    return (f"load average {one:.2f} (1 min), {five:.2f} (5 min); the rule sees "
            f"{blas_threads.others_busy():.2f} cores busy with other processes and gives "
            f"a large product {blas_threads.large_threads()} thread(s)")


def run_phase(name, graphs, repeat, seconds, settings):
    from bptt.link import blas_threads

    workers = []
    if name == "busy":
        workers = [multiprocessing.Process(target=_busy_loop, args=(seconds,), daemon=True)
                   for _ in range(2)]
        for w in workers:
            w.start()
    settle = time.monotonic() + 2.0      # the rule's load samples see the new processes
    while time.monotonic() < settle:
        blas_threads.refresh()
        time.sleep(0.1)
    before = load_line()
    times = time_settings(graphs, repeat, settings)
    after = load_line()
    for w in workers:
        w.terminate()
        w.join()
    return before, after, times


def phase_table(times):
    lines = ["| graph | setting | median ms | min ms | max ms | median vs 1 thread |",
             "| --- | --- | ---: | ---: | ---: | ---: |"]
    for g, by_setting in times.items():
        one = np.median(by_setting["1 thread"])
        for s, ts in by_setting.items():
            ms = 1e3 * np.asarray(ts)
            lines.append(f"| {g} | {s} | {np.median(ms):.1f} | {ms.min():.1f} | {ms.max():.1f} "
                         f"| {np.median(ts) / one:.2f} |")
    return lines


def sweep():
    """NumPy's float64 product on one and two threads, over sizes (m, n, k)."""
    from bptt.link import blas_threads

    have = blas_threads.get_threads()
    lines = ["| m x k @ k x n | m n k | 1 thread us | 2 threads us | 2 / 1 |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for m, n, k in [(8, 256, 64), (16, 256, 128), (32, 256, 128), (32, 512, 128),
                    (64, 256, 256), (64, 512, 256), (128, 512, 256),
                    (64, 512, 512), (128, 512, 512), (256, 512, 512), (512, 512, 512)]:
        a, b = np.random.rand(m, k), np.random.rand(k, n)
        best = {}
        for threads in (1, 2):
            blas_threads.set_threads(threads)
            reps = max(3, int(5e7 / (m * n * k)))
            runs = []
            for _ in range(7):
                t0 = time.perf_counter()
                for _ in range(reps):
                    a @ b
                runs.append((time.perf_counter() - t0) / reps)
            best[threads] = 1e6 * min(runs)
        lines.append(f"| {m} x {k} @ {k} x {n} | {m * n * k:,} | {best[1]:.0f} | {best[2]:.0f} "
                     f"| {best[2] / best[1]:.2f} |")
    blas_threads.set_threads(have)
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--phases", default="busy,idle")
    parser.add_argument("--settings", default="bptt,1 thread,2 threads",
                        help="which of: bptt, 1 thread, 2 threads (comma-separated)")
    a = parser.parse_args()
    from bptt.link import blas_threads

    chosen = a.settings.split(",")
    settings = [(s, n) for s, n in SETTINGS if s in chosen]
    graphs = build_graphs()
    date, commit = result_stamp()
    out = [f"# BLAS threads: bptt's rule against fixed counts ({date}, {commit})", "",
           f"{os.cpu_count()} cores; OpenBLAS on {blas_threads.get_threads()} threads; "
           f"LARGE = {blas_threads.LARGE:,} multiply-adds; {a.repeat} calls per setting.", ""]
    for phase in a.phases.split(","):
        seconds = 1800.0   # the busy processes stop at the phase's end, or after this bound
        before, after, times = run_phase(phase, graphs, a.repeat, seconds, settings)
        out += [f"## {phase}" + (" (two busy-loop processes)" if phase == "busy" else ""), "",
                f"- before: {before}", f"- after: {after}", ""] + phase_table(times) + [""]
        print("\n".join(out[-(len(times) * len(settings) + 6):]), flush=True)
    if a.sweep:
        out += ["## NumPy's product on one and two threads", "", f"- {load_line()}", ""]
        out += sweep() + [""]
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    path = os.path.join(HERE, "results", f"blas-threads-{date}-{commit}.md")
    with open(path, "w") as f:
        f.write("\n".join(out))
    print("\n".join(out))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
