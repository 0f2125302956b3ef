"""The BLAS calls of one train_step.py step: bptt's, counted, and timed in two BLAS libraries.

bptt's generated code reaches ``?gemm`` through the symbols ``bptt_sgemm`` and
``bptt_dgemm`` (bptt/link/numba/blas.py). This script points them at a ctypes
shim before bptt loads its BLAS, runs one training step of train_step.py's
char-LM, and records every call's BLAS arguments (transposes, M, N, K, leading
dimensions, whether beta is 0). Each distinct call is then timed, one thread,
thread CPU time, alternated round by round:

- ``openblas``: the very call, in the library bptt calls (NumPy's OpenBLAS);
- ``torch``: ``torch.mm`` (``addmm_`` where beta is not 0) on tensors laid out
  as that call's column-major operands, so torch's BLAS (MKL) gets the same
  problem.

The per-step totals say how much of a training step the products cost in each
library. PyTorch's own step does not call these: its LSTM runs in oneDNN's
fused RNN primitive (``torch.profiler`` shows ``mkldnn_rnn_layer``), so its
step time is the bar for bptt's products plus everything else.

    python benchmarks/train_step_gemms.py [--dtype float32] [--rounds 5] [--H 256]
"""
from __future__ import annotations

import argparse
import collections
import ctypes
import os
import statistics
import sys
import time

for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_k] = "1"
os.environ["BPTT_COMPILE_IN_BACKGROUND"] = "0"

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import train_step  # noqa: E402

_P = ctypes.c_void_p
_GEMM = ctypes.CFUNCTYPE(None, *([_P] * 13))
_CTYPES = {"sgemm": ctypes.c_float, "dgemm": ctypes.c_double}


class Recorder:
    """ctypes shims standing in for ?gemm: count each call's BLAS arguments while on."""

    def __init__(self):
        from bptt.link.numba import blas_library

        found = blas_library.numpy_openblas()
        if found is None or found[2] != 64:
            raise SystemExit("needs NumPy's bundled OpenBLAS with 64-bit integers")
        self.real = blas_library.numpy_openblas_addresses(["dgemm", "sgemm"])
        self.calls = collections.Counter()
        self.on = False
        self._keep = []
        blas_library.numpy_openblas_addresses = self._addresses   # before bptt's blas.py loads

    def _addresses(self, names):
        return {n: self._shim(n) for n in names}

    def _shim(self, name):
        real = _GEMM(self.real[name])
        scalar = ctypes.POINTER(_CTYPES[name])

        def shim(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
            if self.on:
                ints = [ctypes.cast(p, ctypes.POINTER(ctypes.c_int64))[0]
                        for p in (m, n, k, lda, ldb, ldc)]
                flags = [ctypes.cast(p, ctypes.POINTER(ctypes.c_char))[0].decode()
                         for p in (ta, tb)]
                self.calls[(name, *flags, *ints, ctypes.cast(beta, scalar)[0] != 0)] += 1
            real(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)

        fn = _GEMM(shim)
        self._keep.append(fn)
        return ctypes.cast(fn, _P).value


def _int(v):
    return ctypes.byref(ctypes.c_int64(v))


def _timed(fn, reps, rounds_out):
    fn()
    t0 = time.thread_time()
    for _ in range(reps):
        fn()
    rounds_out.append((time.thread_time() - t0) / reps * 1e6)


def time_call(real, call, rounds):
    """(openblas us, torch us) per call of one recorded ``(name, ta, tb, m, n, k, lda, ldb,
    ldc, beta != 0)``."""
    import torch

    name, ta, tb, m, n, k, lda, ldb, ldc, beta = call
    dtype = np.float32 if name == "sgemm" else np.float64
    rows_a, cols_a = (m, k) if ta == "N" else (k, m)
    rows_b, cols_b = (k, n) if tb == "N" else (n, k)
    rng = np.random.default_rng(0)
    # a column-major r x c matrix with leading dimension ld is a C (c, ld) array
    a, b, c = (rng.random((cols, ld)).astype(dtype)
               for cols, ld in ((cols_a, lda), (cols_b, ldb), (n, ldc)))
    one, scale = _CTYPES[name](1.0), _CTYPES[name](1.0 if beta else 0.0)
    flags = [ctypes.c_char(f.encode()) for f in (ta, tb)]
    args = [ctypes.byref(flags[0]), ctypes.byref(flags[1]), _int(m), _int(n), _int(k),
            ctypes.byref(one), a.ctypes.data, _int(lda), b.ctypes.data, _int(ldb),
            ctypes.byref(scale), c.ctypes.data, _int(ldc)]
    gemm = _GEMM(real[name])
    at = torch.from_numpy(a)[:, :rows_a].T
    bt = torch.from_numpy(b)[:, :rows_b].T
    ct = torch.from_numpy(c.copy())[:, :m].T
    op_a, op_b = (at if ta == "N" else at.T), (bt if tb == "N" else bt.T)

    def with_torch():
        if beta:
            ct.addmm_(op_a, op_b)
        else:
            torch.mm(op_a, op_b, out=ct)

    reps = max(3, int(2e8 / max(m * n * k, 1)))
    ours, theirs = [], []
    for _ in range(rounds):
        _timed(lambda: gemm(*args), reps, ours)
        _timed(with_torch, reps, theirs)
    return statistics.median(ours), statistics.median(theirs)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dtype", default="float32")
    p.add_argument("--rounds", type=int, default=5)
    for k, v in dict(B=32, T=64, E=64, H=256, V=96).items():
        p.add_argument(f"--{k}", type=int, default=v)
    args = p.parse_args()
    recorder = Recorder()
    import torch

    torch.set_num_threads(1)
    step = train_step.build_bptt(args)
    data = train_step.batches(args, 2)
    step(*data[0])
    recorder.on = True
    step(*data[1])
    recorder.on = False
    print(f"load {os.getloadavg()[0]:.2f}; one {args.dtype} training step of train_step.py, "
          f"B={args.B} T={args.T} E={args.E} H={args.H} V={args.V}\n")
    print("| calls | BLAS call (trans, M, N, K, lda, ldb, ldc, beta) | M mul-adds "
          "| openblas us | torch us | ratio |")
    print("| ---: | --- | ---: | ---: | ---: | ---: |")
    totals = [0.0, 0.0, 0]
    for call, count in sorted(recorder.calls.items(), key=lambda kv: -kv[1] * np.prod(kv[0][3:6])):
        ours, theirs = time_call(recorder.real, call, args.rounds)
        madds = int(np.prod(call[3:6]))
        totals[0] += count * ours
        totals[1] += count * theirs
        totals[2] += count * madds
        print(f"| {count} | {call[0]} {call[1]}{call[2]} {call[3:9]} beta {int(call[9])} | "
              f"{madds / 1e6:.1f} | {ours:.1f} | {theirs:.1f} | {ours / theirs:.2f} |")
    print(f"\n{sum(recorder.calls.values())} calls, {totals[2] / 1e9:.2f} G multiply-adds per step: "
          f"{totals[0] / 1e3:.1f} ms in NumPy's OpenBLAS, {totals[1] / 1e3:.1f} ms through "
          f"torch.mm (load {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
