"""Peak memory of one forward+backward call of the tanh RNN or the LSTM, against the
forward trace.

    python benchmarks/memory.py [--kind rnn|lstm] [--wrt-x] [--T 200 --B 32 --In 64 --H 128]
                                [--dtype float64] [--impls bptt,bptt-no-savemem,numba]

The loss is 0.5 * sum of h_t ** 2; the gradients are those of every weight and initial
state, and of X too with ``--wrt-x``. Each implementation runs in a fresh subprocess:

* bptt (NUMBA), all rewrites;
* bptt (NUMBA) without save-mem (``BPTT_EXCLUDE_REWRITES=scan_save_mem``);
* ``bptt-reuse-forward``: bptt with ``BPTT_REUSE_FORWARD=1`` (the backward reads the
  forward's recorded pre-activation instead of recomputing it in chunks);
* the hand-written numba BPTT of benchmarks/bptt_rnn.py (stores the T x B x H trace;
  not with ``--wrt-x``).

How it measures, and why this way. Arrays allocated by numba-compiled code
go through numba's NRT allocator (malloc), which `tracemalloc` does not see,
and NRT's own statistics (``numba.core.runtime.rtsys.get_allocation_stats()``)
count allocations, not bytes. So the child measures the resident set: it
compiles and runs the function once on tiny inputs (compilation's own peak
is then behind us), resets the kernel's peak-RSS mark (``echo 5 >
/proc/self/clear_refs``), makes ONE call on the real inputs (already
allocated), and reports ``VmHWM - VmRSS before the call`` from
/proc/self/status. glibc would otherwise serve freed blocks from its heap
without touching new pages (and raise its mmap threshold dynamically), so the
child runs with ``MALLOC_MMAP_THRESHOLD_=4096``: every array of 4 KiB or more
is its own mapping, returned to the system when freed, and the peak counts
exactly the arrays alive at the same time. Where clear_refs is not allowed,
it falls back to ``ru_maxrss`` (then compile memory may hide the call).

Reported: peak extra memory of the call in MiB and in units of the forward
trace (T x B x H values of the dtype).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _status_kib(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def _reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def child(impl, kind, wrt_x, t, bsz, nin, nh, dtype):
    from bptt_rnn import bptt_function, data, numba_references

    if impl == "numba" and wrt_x:
        raise SystemExit("the hand-written numba BPTT has no gradient of X")
    fn = numba_references()[kind] if impl == "numba" else bptt_function(kind, dtype, wrt_x)
    fn(*data(kind, 3, 2, nin, nh, dtype))           # compile on tiny inputs
    args = data(kind, t, bsz, nin, nh, dtype)
    exact = _reset_peak()
    before = _status_kib("VmRSS") if exact else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = fn(*args)
    peak = _status_kib("VmHWM") if exact else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    del out
    print(json.dumps({"peak_kib": peak - before, "exact": exact}))


def measure(impl, kind, wrt_x, t, bsz, nin, nh, dtype):
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="4096", PYTHONPATH=os.path.dirname(HERE))
    if impl == "bptt-no-savemem":
        extra = [n for n in env.get("BPTT_EXCLUDE_REWRITES", "").split(",") if n]
        env["BPTT_EXCLUDE_REWRITES"] = ",".join(extra + ["scan_save_mem"])
    if impl == "bptt-reuse-forward":
        env["BPTT_REUSE_FORWARD"] = "1"
    cmd = [sys.executable, os.path.abspath(__file__), "--child", impl, "--kind", kind,
           *(["--wrt-x"] if wrt_x else []), "--T", str(t),
           "--B", str(bsz), "--In", str(nin), "--H", str(nh), "--dtype", dtype]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"{impl} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--T", type=int, default=200)
    p.add_argument("--B", type=int, default=32)
    p.add_argument("--In", type=int, default=64)
    p.add_argument("--H", type=int, default=128)
    p.add_argument("--dtype", default="float64")
    p.add_argument("--kind", default="rnn", choices=["rnn", "lstm"])
    p.add_argument("--wrt-x", action="store_true", help="the gradient of X too")
    p.add_argument("--child", default=None)
    p.add_argument("--impls", default="bptt,bptt-no-savemem,numba")
    a = p.parse_args()
    if a.child:
        return child(a.child, a.kind, a.wrt_x, a.T, a.B, a.In, a.H, a.dtype)
    states = 2 if a.kind == "lstm" else 1       # the LSTM's h and c traces
    trace = states * a.T * a.B * a.H * np.dtype(a.dtype).itemsize
    name = "LSTM" if a.kind == "lstm" else "tanh RNN"
    print(f"{name} T={a.T} B={a.B} In={a.In} H={a.H} {a.dtype}"
          f"{', gradient of X too' if a.wrt_x else ''}: forward trace "
          f"({states} x T x B x H) = {trace / 2 ** 20:.2f} MiB; per-step state (B x H) = "
          f"{a.B * a.H * np.dtype(a.dtype).itemsize / 2 ** 10:.0f} KiB")
    print(f"{'implementation':<18} {'peak extra MiB':>15} {'x trace':>8}  method")
    for impl in a.impls.split(","):
        r = measure(impl, a.kind, a.wrt_x, a.T, a.B, a.In, a.H, a.dtype)
        mib = r["peak_kib"] / 2 ** 10
        how = "VmHWM after clear_refs" if r["exact"] else "ru_maxrss (includes compile)"
        print(f"{impl:<18} {mib:15.2f} {mib * 2 ** 20 / trace:8.2f}  {how}")


if __name__ == "__main__":
    main()
