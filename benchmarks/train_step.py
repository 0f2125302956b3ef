"""One training step of a character-level LSTM LM: bptt against PyTorch, one thread each.

The model is Embedding(V, E) -> LSTM(E, H) -> Linear(H, V) on (T, B) windows of
character ids, cross-entropy from logits, gradients clipped to global norm 1,
Adam; bptt carries the LSTM state in shared variables (truncated BPTT),
PyTorch detaches it. Defaults: B = 32, T = 64, E = 64, H = 256, V = 96.

Each measurement runs in its own child process with one thread
(OMP/OPENBLAS/MKL/NUMBA_NUM_THREADS=1, torch.set_num_threads(1)):

- bptt cold: a new empty disk cache, so ``bptt.function`` compiles everything;
- bptt cached: a second process on that cache (what every run after the first pays);
- per-step time: the median of `--steps` calls after 3 warm-up calls;
- peak memory: the child's peak resident set (``ru_maxrss``), which includes
  the interpreter and the libraries (an import-only child is reported as the floor).

    python benchmarks/train_step.py [--steps 30] [--dtypes float32,float64] [--H 256]

Writes benchmarks/results/train_step-<date>-<commit>.{md,json}.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

# time the compiled code from the first call, not PY calls while it compiles
os.environ.setdefault("BPTT_COMPILE_IN_BACKGROUND", "0")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ONE_THREAD = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                               "NUMBA_NUM_THREADS")}


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def batches(args, n):
    rng = np.random.default_rng(0)
    return [(rng.integers(0, args.V, (args.T, args.B)), rng.integers(0, args.V, (args.T, args.B)))
            for _ in range(n)]


def time_steps(step, data):
    for x, y in data[:3]:
        step(x, y)
    times = []
    for x, y in data[3:]:
        t0 = time.perf_counter()
        step(x, y)
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times)


def bptt_step_graph(args, lr=1e-3):
    """The bptt training step's graph for `args`: ``([x, y], loss, updates, params)``."""
    import bptt
    import bptt.nn as nn
    import bptt.tensor as T

    dt = args.dtype
    emb = nn.Embedding(args.V, args.E, rng=0, dtype=dt)
    lstm = nn.LSTM(args.E, args.H, rng=1, dtype=dt)
    out = nn.Dense(args.H, args.V, rng=2, dtype=dt)
    params = emb.params() + lstm.params() + out.params()
    h = bptt.shared(np.zeros((1, args.B, args.H), dt), name="h")
    c = bptt.shared(np.zeros((1, args.B, args.H), dt), name="c")
    x, y = T.lmatrix("x"), T.lmatrix("y")
    states, (h_n, c_n) = lstm(emb(x), (h, c))
    loss = nn.cross_entropy(out(states), y)
    grads = nn.clip_by_global_norm(bptt.grad(loss, params), 1.0)
    updates = nn.adam(grads, params, lr)
    updates[h], updates[c] = h_n, c_n
    return [x, y], loss, updates, params


def build_bptt(args):
    """The bptt training step ``step(x, y) -> loss`` for `args` (compiled)."""
    import bptt

    inputs, loss, updates, _ = bptt_step_graph(args)
    return bptt.function(inputs, loss, updates=updates)


def build_torch(args):
    """The PyTorch training step ``step(x, y) -> loss`` for `args` (one thread)."""
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    dt = getattr(torch, args.dtype)
    emb = torch.nn.Embedding(args.V, args.E).to(dt)
    lstm = torch.nn.LSTM(args.E, args.H).to(dt)
    out = torch.nn.Linear(args.H, args.V).to(dt)
    params = list(emb.parameters()) + list(lstm.parameters()) + list(out.parameters())
    opt = torch.optim.Adam(params, lr=1e-3)
    state = [torch.zeros(1, args.B, args.H, dtype=dt)] * 2

    def step(x, y):
        nonlocal state
        opt.zero_grad()
        ys, (h_n, c_n) = lstm(emb(torch.from_numpy(x)), tuple(state))
        loss = torch.nn.functional.cross_entropy(out(ys).reshape(-1, args.V),
                                                 torch.from_numpy(y).reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        state = [h_n.detach(), c_n.detach()]
        return loss.item()

    return step


def child_bptt(args):
    t0, c0 = time.perf_counter(), time.process_time()
    step = build_bptt(args)
    compile_s, compile_cpu = time.perf_counter() - t0, time.process_time() - c0
    return dict(compile_s=compile_s, compile_cpu_s=compile_cpu,
                step_ms=time_steps(step, batches(args, args.steps + 3)), peak_mb=peak_mb())


def child_torch(args):
    step = build_torch(args)
    return dict(step_ms=time_steps(step, batches(args, args.steps + 3)), peak_mb=peak_mb())


def child_floor(args):
    import bptt  # noqa: F401
    import bptt.nn  # noqa: F401

    return dict(peak_mb=peak_mb())


def run_child(args, which, dtype, cache):
    env = dict(os.environ, **ONE_THREAD, BPTT_CACHE_DIR=cache,
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    cmd = [sys.executable, __file__, "--child", which, "--dtype", dtype, "--steps",
           str(args.steps)] + [f"--{k}={getattr(args, k)}" for k in "BTEHV"]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if res.returncode:
        return {"error": res.stderr.strip().splitlines()[-1:]}
    return json.loads(res.stdout.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--child", choices=["bptt", "torch", "floor"])
    p.add_argument("--dtype", default="float32")
    p.add_argument("--dtypes", default="float32,float64")
    p.add_argument("--steps", type=int, default=30)
    for k, v in dict(B=32, T=64, E=64, H=256, V=96).items():
        p.add_argument(f"--{k}", type=int, default=v)
    args = p.parse_args()
    if args.child:
        fn = {"bptt": child_bptt, "torch": child_torch, "floor": child_floor}[args.child]
        print(json.dumps(fn(args)))
        return
    rows = []
    for dtype in args.dtypes.split(","):
        cache = tempfile.mkdtemp(prefix="bptt-train-step-")
        cold = run_child(args, "bptt", dtype, cache)
        warm = run_child(args, "bptt", dtype, cache)
        torch_r = run_child(args, "torch", dtype, cache)
        rows.append(dict(dtype=dtype, cold=cold, cached=warm, torch=torch_r))
        print(json.dumps(rows[-1]), flush=True)
    floor = run_child(args, "floor", "float64", tempfile.mkdtemp())
    stamp = datetime.date.today().isoformat()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=HERE,
                            capture_output=True, text=True).stdout.strip() or "unknown"
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    base = os.path.join(HERE, "results", f"train_step-{stamp}-{commit}")
    with open(base + ".json", "w") as f:
        json.dump(dict(args=vars(args), rows=rows, floor=floor), f, indent=1)
    lines = [f"# Training step, char-LM LSTM (B={args.B}, T={args.T}, E={args.E}, H={args.H}, "
             f"V={args.V}), {stamp}, commit {commit}", "",
             "| dtype | bptt ms/step | torch ms/step | compile cold s (CPU s) | from cache s "
             "| bptt peak MB | torch peak MB |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        c, w, t = r["cold"], r["cached"], r["torch"]
        lines.append(f"| {r['dtype']} | {w.get('step_ms', float('nan')):.1f} | "
                     f"{t.get('step_ms', float('nan')):.1f} | {c.get('compile_s', float('nan')):.1f} "
                     f"({c.get('compile_cpu_s', float('nan')):.1f}) | "
                     f"{w.get('compile_s', float('nan')):.2f} | {w.get('peak_mb', float('nan')):.0f} | "
                     f"{t.get('peak_mb', float('nan')):.0f} |")
    lines.append(f"\nImport-only floor: {floor.get('peak_mb', float('nan')):.0f} MB.")
    with open(base + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
