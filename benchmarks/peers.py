"""bptt against its peers on forward+backward (BPTT) of a tanh RNN and an LSTM.

    python benchmarks/peers.py [--cases rnn-small,lstm] [--impls bptt,jax]
                               [--dtypes float64] [--rounds 3] [--quick]

Cases (``impls/cases.py``): tanh RNN T=1000 B=1 In=16 H=16, T=200 B=32 In=64
H=128, T=100 B=64 In=256 H=512, and an LSTM T=200 B=32 In=64 H=128;
loss = 0.5 * sum_t sum(h_t ** 2); gradients with respect to every weight and
the initial states; float64 and float32.

Implementations (``impls/``): bptt, hand-written BPTT in NumPy and in numba,
JAX (lax.scan + jit + value_and_grad), PyTorch eager (autograd through a
Python loop) and nn.LSTM, PyTensor (scan, NUMBA mode). One that does not
import is reported as skipped.

Method:

1. every child process runs with one BLAS thread (``*_NUM_THREADS=1``,
   ``torch.set_num_threads(1)``, single-threaded XLA flags) and is pinned to
   one CPU (``os.sched_setaffinity``, where the OS has it): JAX 0.10 ignores
   the XLA flags and ran rnn-large on two threads (CPU time 1.9x its wall
   time), so the flags alone do not make a one-core comparison.
   Python bytecode is as an installed package has it: bptt's source and
   ``benchmarks/`` are byte-compiled once before the first child (``pip``
   does that at install; the libraries in the environment already have
   theirs), and children run without ``PYTHONDONTWRITEBYTECODE``, so the
   modules bptt generates get their ``.pyc`` in the cold process, as on a
   user's machine. (With that flag set, every fresh process compiled bptt's
   source again: about 0.2 s of each warm compile that no user pays);
2. compile: per implementation, cell type and dtype, a fresh process with an
   empty cache directory builds the function and calls it once on the first
   selected case of that cell type (cold), then a second fresh process does
   the same with the cache the first one filled (warm). Both then time calls
   on that case for about ``--seconds`` (median per call): freshly compiled
   code in the cold process, code loaded from the cache in the warm one, so
   the report shows whether cached code runs as fast as fresh code (PyTensor's
   ran about 40% slower). Both write the loss and gradients to .npz files, the
   warm one also for the other cases;
3. check: the parent compares every .npz with the NumPy BPTT run in float64
   on the same (dtype-rounded) data; the error is max|a - ref| / max|ref| per
   output, at most 1e-7 (float64) or 2e-3 (float32). An implementation that
   fails is not timed;
4. peak memory: its own pass, one fresh process per implementation, case and
   dtype, with the cache the warm compile filled. After two warm-up calls the
   peak resident set size is reset (``/proc/self/clear_refs``) and one call is
   made; the number is the rise of VmHWM over the resident size before the
   call. These processes, and only these, run with
   ``MALLOC_MMAP_THRESHOLD_=65536`` and ``BPTT_MALLOC_TUNING=0``: every array
   of 64 KiB or more is its own mapping and goes back to the OS when freed, so
   memory a previous call freed cannot hide the peak of the measured call.
   (bptt's default malloc tuning keeps up to 256 MiB of freed heap resident,
   which would make its rise under-report; the low threshold would in turn
   slow every implementation's timing with page faults, hence separate
   processes);
5. timing: ``--rounds`` rounds; in each round, one fresh process per
   implementation, case and dtype (implementation order rotated every round;
   the process loads the cache of that dtype's warm compile, so nothing is
   compiled while timing) times calls for about ``--seconds`` after two
   warm-up calls. The
   reported time is the median over rounds of each process's median per call,
   and the ratio divides it by the best *other* implementation of the case.
   Timing (and compile) processes run with no malloc setting in their
   environment (``MALLOC_*`` glibc variables and ``BPTT_MALLOC_TUNING`` are
   removed from it): each implementation runs as its users get it. For bptt
   that includes its default glibc tuning (``bptt/link/numba/allocator.py``:
   mmap threshold 32 MiB, trim threshold 256 MiB, set at its first
   compilation); torch, JAX, numba, NumPy and PyTensor run with glibc's
   defaults;
6. GEMM: a fresh single-threaded process times ``numpy.matmul`` of 1024 x
   1024 matrices (best of 5), before compiling and again after timing; the
   better of the two is the machine's GEMM throughput. bptt's achieved
   fraction on the large RNN is the FLOPs of its matrix products
   (``cases.matmul_flops``) over its median time, divided by that throughput.

bptt is imported from a clean export of the committed HEAD (``git archive``),
not from the working tree, unless ``--bptt-src worktree``.

Writes ``results/peers-<date>-<commit>.md`` (tables), ``.json`` (raw numbers) and
``.png`` (ratios), ``-worktree`` appended to the name with ``--bptt-src worktree``.
"""
from __future__ import annotations

import argparse
import compileall
import importlib.util
import json
import os
import platform
import re
import subprocess
import sys
import tarfile
import tempfile
import time

import numpy as np

# time the compiled code from the first call, not PY calls while it compiles
os.environ.setdefault("BPTT_COMPILE_IN_BACKGROUND", "0")

THREAD_ENV = {
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}
#: Added to the environment of the peak-memory processes only (method, point 4).
MEMORY_ENV = {"MALLOC_MMAP_THRESHOLD_": "65536", "BPTT_MALLOC_TUNING": "0"}

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from impls import MODULES, load  # noqa: E402
from impls.cases import CASES, data, matmul_flops, output_names  # noqa: E402
from peers_report import markdown, result_stem, write_outputs  # noqa: E402,F401  (tests use all)

DTYPES = ("float64", "float32")
TOL = {"float64": 1e-7, "float32": 2e-3}
LIBRARY = {"bptt": "bptt", "numba": "numba", "numpy": "numpy", "jax": "jax",
           "torch": "torch", "torch-nn": "torch", "pytensor": "pytensor"}


# == children: run in fresh processes =====================================================
def _clock():
    return time.perf_counter(), time.process_time()


def _since(start):
    wall, cpu = _clock()
    return {"wall": wall - start[0], "cpu": cpu - start[1]}


def _case_args(case, dtype):
    kind, *dims = CASES[case]
    return data(kind, *dims, dtype)


def _save(built, result, path):
    np.savez(path, *built.to_numpy(result))


def child_compile(impl, cases, dtype, out_dir, tag, seconds):
    """Build + first call on cases[0] (timed), its time per call, then the other cases.

    The time per call after the build is what proves cached code as fast as
    fresh code (method, 2): the cold process times the code it compiled, the
    warm one the code it loaded.
    """
    kind = CASES[cases[0]][0]
    module = load(impl)  # the library itself is imported by build(): timed below
    args = _case_args(cases[0], dtype)
    start = _clock()
    built = module.build(kind, dtype)
    prepared = built.prepare(args)
    result = built.run(*prepared)
    compiled = _since(start)
    _save(built, result, os.path.join(out_dir, f"{impl}.{cases[0]}.{dtype}.{tag}.npz"))
    per_call, _ = _median_call(built.run, prepared, seconds)
    for case in cases[1:]:
        result = built.run(*built.prepare(_case_args(case, dtype)))
        _save(built, result, os.path.join(out_dir, f"{impl}.{case}.{dtype}.{tag}.npz"))
    return {"compile": compiled, "per_call": per_call, "source": _source_of(impl)}


def _source_of(impl):
    if impl != "bptt":
        return None
    import bptt
    return os.path.dirname(bptt.__file__)


def _status():
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0]) * 1024
    return fields


def peak_memory(run, prepared):
    """Rise of the peak resident set over the resident set during one call (bytes)."""
    import gc

    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # reset VmHWM to VmRSS
    except OSError:
        return None
    before = _status()["VmRSS"]
    run(*prepared)
    return _status()["VmHWM"] - before


def child_time(impl, case, dtypes, seconds):
    """Per dtype: median seconds per call over about `seconds` of calls (at least 3)."""
    kind = CASES[case][0]
    module, out = load(impl), {}
    for dtype in dtypes:
        built = module.build(kind, dtype)
        prepared = built.prepare(_case_args(case, dtype))
        built.run(*prepared)  # compiles or loads from the cache
        median, n = _median_call(built.run, prepared, seconds)
        out[dtype] = {"median": median, "calls": n, "malloc_tuned": _malloc_tuned(impl)}
    return out


def _median_call(run, prepared, seconds):
    """Median seconds per call over about `seconds` of calls (3 to 1000), after one more."""
    one = _timed(lambda: run(*prepared))
    n = int(min(1000, max(3, seconds / max(one, 1e-6))))
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        run(*prepared)
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), n


def child_memory(impl, case, dtype):
    """Peak-memory rise of one call after two warm-up calls (run with MEMORY_ENV)."""
    built = load(impl).build(CASES[case][0], dtype)
    prepared = built.prepare(_case_args(case, dtype))
    built.run(*prepared)  # compiles or loads from the cache
    built.run(*prepared)
    return {"peak_mem": peak_memory(built.run, prepared), "malloc_tuned": _malloc_tuned(impl)}


def _malloc_tuned(impl):
    """For bptt: whether it raised glibc's thresholds in this process (None for others)."""
    if impl != "bptt":
        return None
    try:
        from bptt.link.numba.allocator import tune_malloc
    except ImportError:  # a bptt without the allocator module
        return False
    return tune_malloc()  # already decided at the first compilation: only reports it


def child_gemm(n=1024, repeat=5):
    out = {}
    for dtype in DTYPES:
        a = np.random.default_rng(0).standard_normal((n, n)).astype(dtype)
        a @ a
        best = min(_timed(lambda: a @ a) for _ in range(repeat))
        out[dtype] = 2 * n ** 3 / best / 1e9
    return out


def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _pin_to_one_cpu():
    """Run this process on one CPU, whatever threads its libraries start (method, 1)."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def child_main(argv):
    _pin_to_one_cpu()
    kind = argv[0]
    if kind == "compile":
        impl, cases, dtype, out_dir, tag, seconds = argv[1:]
        result = child_compile(impl, cases.split(","), dtype, out_dir, tag, float(seconds))
    elif kind == "time":
        impl, case, dtypes, seconds = argv[1:]
        result = child_time(impl, case, dtypes.split(","), float(seconds))
    elif kind == "memory":
        impl, case, dtype = argv[1:]
        result = child_memory(impl, case, dtype)
    else:
        result = child_gemm()
    print("RESULT " + json.dumps(result))


# == the parent ===========================================================================
class Runner:
    """Starts children with one BLAS thread, a cache directory and bptt's source.

    A child is ``script --child argv...`` (another benchmark can subclass with its own
    script, which must print ``RESULT <json>``).
    """

    script = os.path.abspath(__file__)

    def __init__(self, bptt_src, work_dir):
        self.bptt_src, self.work_dir = bptt_src, work_dir

    def env(self, cache=None, memory=False):
        """One BLAS thread; malloc settings: MEMORY_ENV if `memory`, else none at all."""
        env = {k: v for k, v in os.environ.items()
               if not _is_malloc_setting(k, v) and k != "PYTHONDONTWRITEBYTECODE"}
        env.update(THREAD_ENV, **(MEMORY_ENV if memory else {}))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (self.bptt_src, HERE) if p)
        if cache:
            env.update(BENCH_CACHE_DIR=cache, BPTT_CACHE_DIR=os.path.join(cache, "bptt"),
                       NUMBA_CACHE_DIR=os.path.join(cache, "numba"),
                       PYTENSOR_FLAGS=f"base_compiledir={os.path.join(cache, 'pytensor')}")
        return env

    def run(self, argv, cache=None, timeout=900, memory=False):
        """The child's RESULT, or raise ChildFailed with the end of its stderr."""
        cmd = [sys.executable, self.script, "--child", *argv]
        try:
            proc = subprocess.run(cmd, env=self.env(cache, memory), capture_output=True,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise ChildFailed(f"timed out after {timeout} s")
        for line in reversed(proc.stdout.splitlines()):
            if line.startswith("RESULT "):
                return json.loads(line[len("RESULT "):])
        raise ChildFailed(_error_line(proc.stderr) or f"exit code {proc.returncode}")


def _is_malloc_setting(key, value):
    """glibc's MALLOC_*_ variables, GLIBC_TUNABLES with malloc tunables, bptt's switch."""
    return (key.startswith("MALLOC_") or key == "BPTT_MALLOC_TUNING"
            or (key == "GLIBC_TUNABLES" and "malloc" in value))


class ChildFailed(Exception):
    pass


def _error_line(stderr):
    """The last ``SomeError: message`` line of a traceback (numba ends with context lines)."""
    lines = [s.strip() for s in stderr.splitlines() if s.strip()]
    errors = [s for s in lines if re.match(r"^[\w.]+(Error|Exception)\b", s)]
    return (errors or lines or [None])[-1]


def export_head(dest):
    """A clean copy of the committed ``bptt/`` package (no one's uncommitted edits)."""
    os.makedirs(dest, exist_ok=True)
    archive = os.path.join(dest, "bptt.tar")
    subprocess.run(["git", "-C", ROOT, "archive", "-o", archive, "HEAD", "bptt"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(dest, filter="data")
    return dest


def byte_compile(*folders):
    """Write the ``.pyc`` of every module under `folders`, as ``pip install`` does (method, 1)."""
    for folder in folders:
        compileall.compile_dir(folder, quiet=1)


def git_describe():
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    subject = subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%s"],
                             capture_output=True, text=True).stdout.strip()
    return head, subject


def availability(impls):
    """impl -> None if its library can be found, else the reason it is skipped."""
    # bptt comes from its own source directory (PYTHONPATH of the children)
    return {impl: None if impl == "bptt" or importlib.util.find_spec(LIBRARY[impl]) else
            f"skipped: {LIBRARY[impl]} is not installed" for impl in impls}


def kinds_to_cases(cases):
    grouped = {}
    for case in cases:
        grouped.setdefault(CASES[case][0], []).append(case)
    return grouped


def compile_and_check(runner, impls, cases, dtypes, seconds, status, log):
    """Cold and warm compile per (impl, kind, dtype); returns (compile times, cache dirs)."""
    compiles, caches = {}, {}
    for dtype in dtypes:
        for impl in impls:
            if status[impl]:
                continue
            module_kinds = load_kinds(impl)
            for kind, kcases in kinds_to_cases(cases).items():
                if kind not in module_kinds:
                    continue
                cache = tempfile.mkdtemp(prefix=f"{impl}-{kind}-{dtype}-", dir=runner.work_dir)
                key = (impl, kind, dtype)
                try:
                    cold = runner.run(["compile", impl, kcases[0], dtype, runner.work_dir,
                                       "cold", str(seconds)], cache)
                    warm = runner.run(["compile", impl, ",".join(kcases), dtype,
                                       runner.work_dir, "warm", str(seconds)], cache)
                except ChildFailed as e:
                    compiles[key] = {"error": str(e)}
                    log(f"  {impl} {kind} {dtype}: FAILED: {e}")
                    continue
                compiles[key] = {"cold": cold["compile"], "warm": warm["compile"],
                                 "fresh_call": cold["per_call"], "cached_call": warm["per_call"],
                                 "source": cold.get("source")}
                caches[key] = cache
                log(f"  {impl:>8} {kind:>4} {dtype}: cold {cold['compile']['wall']:6.2f} s "
                    f"(cpu {cold['compile']['cpu']:5.2f}), warm {warm['compile']['wall']:5.2f} s "
                    f"(cpu {warm['compile']['cpu']:5.2f}); per call fresh "
                    f"{cold['per_call'] * 1e3:.2f} ms, cached {warm['per_call'] * 1e3:.2f} ms")
    return compiles, caches


def load_kinds(impl):
    try:
        return load(impl).KINDS
    except ImportError:
        return ()


def reference(case, dtype):
    """NumPy BPTT in float64 on the dtype-rounded data of `case`."""
    from impls.numpy_ref import lstm, rnn

    kind = CASES[case][0]
    args = [a.astype(np.float64) for a in _case_args(case, dtype)]
    return (rnn if kind == "rnn" else lstm)(*args)


def relative_errors(outputs, ref):
    """max|a - ref| / max|ref| of each output (inf on a shape mismatch)."""
    errs = []
    for a, e in zip(outputs, ref):
        a, e = np.asarray(a, np.float64), np.asarray(e, np.float64)
        if a.shape != e.shape:
            errs.append(float("inf"))
            continue
        scale = max(float(np.max(np.abs(e))), np.finfo(np.float64).tiny)
        errs.append(float(np.max(np.abs(a - e))) / scale)
    return errs


def check(work_dir, impl, case, dtype):
    """(max relative error, message or None) of every .npz this impl wrote for the case."""
    ref = reference(case, dtype)
    worst, names = 0.0, output_names(CASES[case][0])
    for tag in ("cold", "warm"):
        path = os.path.join(work_dir, f"{impl}.{case}.{dtype}.{tag}.npz")
        if not os.path.exists(path):
            continue
        with np.load(path) as f:
            outputs = [f[f"arr_{i}"] for i in range(len(f.files))]
        if len(outputs) != len(ref):
            return float("inf"), f"{tag}: {len(outputs)} outputs, expected {len(ref)}"
        errs = relative_errors(outputs, ref)
        worst = max(worst, *errs)
        bad = [f"{n} {e:.1e}" for n, e in zip(names, errs) if not e <= TOL[dtype]]
        if bad:
            return worst, f"mismatch ({tag}): " + ", ".join(bad)
    return worst, None


def timing_rounds(runner, rows, caches, rounds, seconds, log):
    """Fill rows[(case, dtype, impl)]['times'] over interleaved rounds.

    One process per implementation, case and dtype, with the cache the warm
    compile of that dtype filled: nothing is compiled while timing.
    """
    groups = {}
    for (case, dtype, impl), row in rows.items():
        if row["status"] == "ok":
            groups.setdefault((case, dtype), []).append(impl)
    for r in range(rounds):
        for (case, dtype), impls in groups.items():
            order = impls[r % len(impls):] + impls[:r % len(impls)]
            for impl in order:
                row = rows[(case, dtype, impl)]
                if row["status"] != "ok":  # failed in an earlier round
                    continue
                cache = caches[(impl, CASES[case][0], dtype)]
                try:
                    res = runner.run(["time", impl, case, dtype, str(seconds)], cache)[dtype]
                except ChildFailed as e:
                    row["status"] = f"failed while timing: {e}"
                    log(f"  round {r + 1} {case:>10} {dtype} {impl:>8}: FAILED: {e}")
                    continue
                row["times"].append(res["median"])
                row.setdefault("malloc_tuned_timing", []).append(res.get("malloc_tuned"))
                log(f"  round {r + 1} {case:>10} {dtype} {impl:>8}: "
                    f"{res['median'] * 1e3:.2f} ms x{res['calls']}")


def memory_pass(runner, rows, caches, log):
    """rows[...]['mem']: one process per (case, dtype, impl) with MEMORY_ENV."""
    for (case, dtype, impl), row in rows.items():
        if row["status"] != "ok":
            continue
        cache = caches[(impl, CASES[case][0], dtype)]
        try:
            out = runner.run(["memory", impl, case, dtype], cache, memory=True)
        except ChildFailed as e:
            log(f"  memory {case:>10} {dtype} {impl:>8}: FAILED: {e}")
            continue
        row["mem"].append(out["peak_mem"])
        row["malloc_tuned_memory"] = out.get("malloc_tuned")
        mem = out["peak_mem"]
        log(f"  memory {case:>10} {dtype} {impl:>8}: " +
            ("-" if mem is None else f"{mem / 2 ** 20:.1f} MB"))


def summarize(rows):
    """Median over rounds and the ratio to the best other implementation of (case, dtype)."""
    for row in rows.values():
        times = [t for t in row.get("times", []) if t is not None]
        mems = [m for m in row.get("mem", []) if m is not None]
        row["median"] = float(np.median(times)) if times and row["status"] == "ok" else None
        row["peak_mem"] = float(np.median(mems)) if mems else None
    for (case, dtype, impl), row in rows.items():
        others = [o["median"] for (c, d, i), o in rows.items()
                  if c == case and d == dtype and i != impl and o["median"] is not None]
        row["ratio"] = row["median"] / min(others) if row["median"] and others else None
    return rows


def versions(impls):
    out = {"numpy": np.__version__}
    for impl in impls:
        lib = LIBRARY[impl]
        if lib in out or not importlib.util.find_spec(lib):
            continue
        try:
            from importlib.metadata import version
            out[lib] = version(lib)
        except Exception:  # noqa: BLE001  (a library without metadata)
            out[lib] = "?"
    return out


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default=None, help=f"comma-separated, from {','.join(CASES)}")
    p.add_argument("--impls", default=None, help=f"comma-separated, from {','.join(MODULES)}")
    p.add_argument("--dtypes", default=None, help="comma-separated: float64,float32")
    p.add_argument("--rounds", type=int, default=None, help="timing rounds (default 3)")
    p.add_argument("--seconds", type=float, default=None,
                   help="seconds of calls per timing process and dtype (default 0.5)")
    p.add_argument("--quick", action="store_true",
                   help="rnn-small, float64, 1 round, 0.2 s (unless given explicitly)")
    p.add_argument("--bptt-src", choices=("head", "worktree"), default="head")
    p.add_argument("--out", default=os.path.join(HERE, "results"))
    a = p.parse_args(argv)
    a.cases = _split(a.cases, ["rnn-small"] if a.quick else list(CASES), CASES)
    a.impls = _split(a.impls, list(MODULES), MODULES)
    a.dtypes = _split(a.dtypes, ["float64"] if a.quick else list(DTYPES), DTYPES)
    a.rounds = a.rounds or (1 if a.quick else 3)
    a.seconds = a.seconds or (0.2 if a.quick else 0.5)
    return a


def _split(text, default, allowed):
    names = default if text is None else [s.strip() for s in text.split(",") if s.strip()]
    unknown = [n for n in names if n not in allowed]
    if unknown:
        raise SystemExit(f"unknown {unknown}; choose from {', '.join(allowed)}")
    return names


def log(msg):
    print(msg, flush=True)


def log_load():
    """Print the load average now (marked when a timing would carry other jobs' load)."""
    load = tuple(round(x, 2) for x in os.getloadavg())
    log(f"load average {load} on {os.cpu_count()} CPUs" +
        ("  -> timings taken under SHARED LOAD" if load[0] > 1.5 else ""))
    return load


def main(argv=None):
    a = parse_args(argv)
    started = time.perf_counter()
    load_start = log_load()
    with tempfile.TemporaryDirectory(prefix="bptt-peers-") as work_dir:
        bptt_src = export_head(os.path.join(work_dir, "src")) if a.bptt_src == "head" else ROOT
        byte_compile(os.path.join(bptt_src, "bptt"), HERE)
        runner = Runner(bptt_src, work_dir)
        status = availability(a.impls)
        for impl, why in status.items():
            if why:
                log(f"{impl}: {why}")
        loads = {}

        def phase(key, what):
            loads[key] = round(os.getloadavg()[0], 2)
            log(f"{what} (1-min load {loads[key]}) ...")

        phase("gemm", "GEMM (numpy matmul, one thread)")
        gemm = runner.run(["gemm"])
        phase("compile", "compile (cold, warm) and outputs")
        compiles, caches = compile_and_check(runner, a.impls, a.cases, a.dtypes, a.seconds,
                                             status, log)
        rows = {}
        for case in a.cases:
            kind = CASES[case][0]
            for dtype in a.dtypes:
                for impl in a.impls:
                    row = rows[(case, dtype, impl)] = {"status": status[impl], "times": [],
                                                       "mem": [], "err": None}
                    if row["status"]:
                        continue
                    if kind not in load_kinds(impl):
                        row["status"] = f"skipped: no {kind}"
                    elif "error" in compiles.get((impl, kind, dtype), {}):
                        row["status"] = "failed: " + compiles[(impl, kind, dtype)]["error"]
                    else:
                        row["err"], problem = check(work_dir, impl, case, dtype)
                        row["status"] = problem or "ok"
                    if row["status"] != "ok":
                        log(f"  {case} {dtype} {impl}: {row['status']}")
        log("outputs checked against the NumPy float64 reference; only agreeing ones are timed")
        phase("memory", "peak memory")
        log("  own processes: MALLOC_MMAP_THRESHOLD_=65536, BPTT_MALLOC_TUNING=0")
        memory_pass(runner, rows, caches, log)
        phase("timing", "timing")
        log("  no malloc setting in the environment (bptt: its default tuning)")
        timing_rounds(runner, rows, caches, a.rounds, a.seconds, log)
        phase("gemm_again", "GEMM again (the better of the two is reported)")
        gemm_runs = [gemm, runner.run(["gemm"])]
        gemm = {d: max(g[d] for g in gemm_runs) for d in gemm}
        source = next((c.get("source") for k, c in compiles.items() if k[0] == "bptt"), None)
    summarize(rows)
    head, subject = git_describe()
    load_end = tuple(round(x, 2) for x in os.getloadavg())
    results = {
        "meta": {"commit": head, "subject": subject, "date": time.strftime("%Y-%m-%d %H:%M"),
                 "python": platform.python_version(), "cpus": os.cpu_count(),
                 "bptt_src": ("a clean export of HEAD (git archive)" if a.bptt_src == "head"
                              else "the working tree") + (f", {source}" if source else ""),
                 "command": "python benchmarks/peers.py " + " ".join(sys.argv[1:]),
                 "rounds": a.rounds, "seconds": a.seconds, "dtypes": a.dtypes,
                 "load_start": load_start, "load_end": load_end, "loads": loads,
                 "shared": max(load_start[0], load_end[0], *loads.values()) > 1.5,
                 "versions": versions(a.impls),
                 "elapsed": time.perf_counter() - started},
        "gemm": gemm, "gemm_runs": gemm_runs,
        "gemm_fraction": gemm_fraction(rows, gemm),
        "compile": [{"impl": i, "kind": k, "dtype": d, **c} for (i, k, d), c in compiles.items()],
        "rows": [{"case": c, "dtype": d, "impl": i, **r} for (c, d, i), r in rows.items()],
    }
    base = write_outputs(results, a.out)
    print()
    print(markdown(results))
    print(f"\nwrote {base}.md, .json and .png")
    return results


def gemm_fraction(rows, gemm):
    out = {}
    for (case, dtype, impl), row in rows.items():
        if case == "rnn-large" and impl == "bptt" and row.get("median"):
            gflops = matmul_flops(*CASES[case]) / row["median"] / 1e9
            out[dtype] = {"gflops": gflops, "fraction": gflops / gemm[dtype]}
    return out


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child_main(sys.argv[2:])
    else:
        main()
