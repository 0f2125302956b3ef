"""Peak memory of one forward+backward call of the tanh RNN or the LSTM, against the
forward trace.

    python benchmarks/memory.py [--kind rnn|lstm|gru] [--wrt-x] [--T 200 --B 32 --In 64 --H 128]
                                [--dtype float64] [--impls bptt,bptt-no-savemem,numba]

The loss is 0.5 * sum of h_t ** 2; the gradients are those of every weight and initial
state, and of X too with ``--wrt-x``. Each implementation runs in a fresh subprocess:

* bptt (NUMBA), all rewrites, ``BPTT_REUSE_FORWARD=0`` (the memory-lean plan: the
  backward recomputes the products in chunks);
* bptt (NUMBA) without save-mem (``BPTT_EXCLUDE_REWRITES=scan_save_mem``);
* ``bptt-reuse-forward``: bptt with ``BPTT_REUSE_FORWARD=1`` (the backward reads the
  forward's recorded pre-activation instead, as under the default "auto");
* ``bptt-no-chunk-products``: bptt without ``scan_chunk_seq_products`` (products read as
  sequences, and the push-out's stacked expressions of them, kept T rows long);
* the hand-written numba BPTT of benchmarks/bptt_rnn.py (stores the T x B x H trace;
  not with ``--wrt-x``).

How it measures, and why this way. Arrays allocated by numba-compiled code
go through numba's NRT allocator (malloc), which `tracemalloc` does not see,
and NRT's own statistics (``numba.core.runtime.rtsys.get_allocation_stats()``)
count allocations, not bytes. So the child measures the resident set: it
compiles and runs the function once on tiny inputs (compilation's own peak
is then behind us), makes two warm-up calls on the real inputs (as peers.py's
memory pass does: what a library allocates once, on its first call at a size,
is not the call's memory; without them rnn-large measured 43.3 instead of
30.4 MiB), resets the kernel's peak-RSS mark (``echo 5 >
/proc/self/clear_refs``), makes ONE call on the real inputs (already
allocated), and reports ``VmHWM - VmRSS before the call`` from
/proc/self/status. glibc would otherwise serve freed blocks from its heap
without touching new pages (and raise its mmap threshold dynamically), so the
child runs with ``MALLOC_MMAP_THRESHOLD_=4096``: every array of 4 KiB or more
is its own mapping, returned to the system when freed, and the peak counts
exactly the arrays alive at the same time. (And with ``BPTT_MALLOC_TUNING=0``: bptt's
own tuning would raise the threshold to 32 MiB at its first compile.) Where clear_refs is not allowed,
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

# time the compiled code from the first call, not PY calls while it compiles
os.environ.setdefault("BPTT_COMPILE_IN_BACKGROUND", "0")

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


def gru_function(dtype, wrt_x=False):
    """bptt's GRU (gates z, r and the candidate, each with its own x and h matrices), its
    loss 0.5 * sum of h_t ** 2 and the gradients of every weight and h0 (and X)."""
    import bptt
    T = bptt.tensor

    X, h0 = T.tensor3("X", dtype=dtype), T.matrix("h0", dtype=dtype)
    Ws = [T.matrix(n, dtype=dtype) for n in ("Wz", "Wr", "Wn", "Uz", "Ur", "Un")]
    b = T.vector("b", dtype=dtype)

    def step(x, h, Wz, Wr, Wn, Uz, Ur, Un, b):
        z = T.nnet.sigmoid(T.dot(x, Wz) + T.dot(h, Uz))
        r = T.nnet.sigmoid(T.dot(x, Wr) + T.dot(h, Ur) + b)
        c = T.tanh(T.dot(x, Wn) + r * T.dot(h, Un))
        return (1 - z) * c + z * h

    hs, _ = bptt.scan(step, sequences=X, outputs_info=h0, non_sequences=Ws + [b], name="gru")
    loss = 0.5 * (hs ** 2).sum()
    params = Ws + [b, h0] + ([X] if wrt_x else [])
    return bptt.function([X, h0] + Ws + [b], [loss] + bptt.grad(loss, params))


def gru_data(t, bsz, nin, nh, dtype, seed=0):
    """Inputs ``[X, h0, Wz, Wr, Wn, Uz, Ur, Un, b]`` of `gru_function`."""
    rng = np.random.default_rng(seed)
    ws = [rng.standard_normal((nin, nh)) / np.sqrt(nin) for _ in range(3)]
    us = [rng.standard_normal((nh, nh)) / np.sqrt(nh) for _ in range(3)]
    args = [rng.standard_normal((t, bsz, nin)), 0.1 * rng.standard_normal((bsz, nh)), *ws, *us,
            0.1 * rng.standard_normal(nh)]
    return [a.astype(dtype) for a in args]


def child(impl, kind, wrt_x, t, bsz, nin, nh, dtype):
    from bptt_rnn import bptt_function, data, numba_references

    if impl == "numba" and (wrt_x or kind == "gru"):
        raise SystemExit("the hand-written numba BPTT has no GRU and no gradient of X")
    if kind == "gru":
        fn, data = gru_function(dtype, wrt_x), (lambda _, *sizes: gru_data(*sizes))
    else:
        fn = numba_references()[kind] if impl == "numba" else bptt_function(kind, dtype, wrt_x)
    fn(*data(kind, 3, 2, nin, nh, dtype))           # compile on tiny inputs
    args = data(kind, t, bsz, nin, nh, dtype)
    for _ in range(2):   # warm-up at the real size: first-use allocations are not the call's
        fn(*args)
    exact = _reset_peak()
    before = _status_kib("VmRSS") if exact else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = fn(*args)
    peak = _status_kib("VmHWM") if exact else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    del out
    print(json.dumps({"peak_kib": peak - before, "exact": exact}))


def measure(impl, kind, wrt_x, t, bsz, nin, nh, dtype):
    # BPTT_MALLOC_TUNING=0: bptt's own tuning (mallopt at its first compile) would raise the
    # mmap threshold to 32 MiB and let the call reuse heap memory the compile freed.
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="4096", BPTT_MALLOC_TUNING="0",
               PYTHONPATH=os.path.dirname(HERE))
    if impl == "bptt-no-savemem":
        extra = [n for n in env.get("BPTT_EXCLUDE_REWRITES", "").split(",") if n]
        env["BPTT_EXCLUDE_REWRITES"] = ",".join(extra + ["scan_save_mem"])
    env["BPTT_REUSE_FORWARD"] = "1" if impl == "bptt-reuse-forward" else "0"
    if impl == "bptt-no-chunk-products":
        extra = [n for n in env.get("BPTT_EXCLUDE_REWRITES", "").split(",") if n]
        env["BPTT_EXCLUDE_REWRITES"] = ",".join(extra + ["scan_chunk_seq_products"])
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
    p.add_argument("--kind", default="rnn", choices=["rnn", "lstm", "gru"])
    p.add_argument("--wrt-x", action="store_true", help="the gradient of X too")
    p.add_argument("--child", default=None)
    p.add_argument("--impls", default="bptt,bptt-no-savemem,numba")
    a = p.parse_args()
    if a.child:
        return child(a.child, a.kind, a.wrt_x, a.T, a.B, a.In, a.H, a.dtype)
    states = 2 if a.kind == "lstm" else 1       # the LSTM's h and c traces
    trace = states * a.T * a.B * a.H * np.dtype(a.dtype).itemsize
    name = {"lstm": "LSTM", "gru": "GRU", "rnn": "tanh RNN"}[a.kind]
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
