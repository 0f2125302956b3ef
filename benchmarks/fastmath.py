"""ns per element of exp/log/tanh/... : bptt's fast math vs numba's libm calls vs NumPy.

For each function and dtype, over 10**6 elements (values in the function's
useful range), it times

- ``fast``:  a ``numba.njit`` loop ``out[i] = fast_exp(x[i])`` (bptt/link/numba/fastmath.py);
- ``libm``:  the same loop calling ``np.exp(x[i])``, which numba lowers to the C library;
- ``numpy``: NumPy's ufunc ``np.exp(x, out=out)``.

Each number is the median over ``--repeats`` runs of the best of 5 calls,
divided by the number of elements. Also printed: the largest error of the fast
loop in ulp against NumPy's long double result. Run::

    python benchmarks/fastmath.py            # --n 1000000 --repeats 7
"""
from __future__ import annotations

import argparse
import time

import numba
import numpy as np

from bptt.link.numba import runtime  # noqa: F401  (loads fastmath, as generated code does)
from bptt.link.numba import fastmath as fm

#: name: (fast function, NumPy reference on arrays, libm scalar form in numba, value range)
CASES = {
    "exp": (fm.fast_exp, np.exp, "np.exp(v)", (-80.0, 80.0)),
    "expm1": (fm.fast_expm1, np.expm1, "np.expm1(v)", (-10.0, 10.0)),
    "log": (fm.fast_log, np.log, "np.log(v)", (1e-3, 1e3)),
    "log1p": (fm.fast_log1p, np.log1p, "np.log1p(v)", (-0.9, 10.0)),
    "tanh": (fm.fast_tanh, np.tanh, "np.tanh(v)", (-5.0, 5.0)),
    "sigmoid": (fm.fast_sigmoid, lambda x, out=None: np.divide(1, 1 + np.exp(-x), out=out),
                "1 / (1 + np.exp(-v))", (-10.0, 10.0)),
    "softplus": (fm.fast_softplus,
                 lambda x, out=None: np.add(np.maximum(x, 0), np.log1p(np.exp(-np.abs(x))),
                                            out=out),
                 "max(v, 0) + np.log1p(np.exp(-abs(v)))", (-10.0, 10.0)),
}


def _loop(body, fn=None):
    """A numba loop ``out[i] = body(x[i])``; `fn` is bound as ``f`` in its namespace."""
    ns = {"np": np, "f": fn}
    exec(f"def loop(x, out):\n    for i in range(x.shape[0]):\n        v = x[i]\n"
         f"        out[i] = {body}\n", ns)  # noqa: S102 (fixed text)
    return numba.njit(error_model="numpy")(ns["loop"])


def _time(call, repeats):
    per = []
    for _ in range(repeats):
        best = np.inf
        for _ in range(5):
            t = time.perf_counter()
            call()
            best = min(best, time.perf_counter() - t)
        per.append(best)
    return float(np.median(per))


def _max_ulp(y, ref, dtype):
    ref_r = ref.astype(dtype)
    ulp = np.spacing(np.abs(ref_r)).astype(np.longdouble)
    return float(np.max(np.abs(y.astype(np.longdouble) - ref) / ulp))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10 ** 6)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"numba {numba.__version__}, numpy {np.__version__}, n = {args.n}; ns per element "
          f"(median of {args.repeats} x best of 5)")
    print(f"{'function':10s} {'dtype':8s} {'fast':>7s} {'libm':>7s} {'numpy':>7s} "
          f"{'libm/fast':>9s} {'numpy/fast':>10s} {'max ulp':>8s}")
    for name, (fast, ref, libm_body, (lo, hi)) in CASES.items():
        fast_loop, libm_loop = _loop("f(v)", fast), _loop(libm_body)
        for dtype in (np.float64, np.float32):
            x = rng.uniform(lo, hi, args.n).astype(dtype)
            out = np.empty_like(x)
            fast_loop(x, out), libm_loop(x, out)          # compile
            t_fast = _time(lambda: fast_loop(x, out), args.repeats)
            y = out.copy()
            t_libm = _time(lambda: libm_loop(x, out), args.repeats)
            t_np = _time(lambda: ref(x, out=out), args.repeats)
            err = _max_ulp(y, ref(x.astype(np.longdouble)), dtype)
            ns = [1e9 * t / args.n for t in (t_fast, t_libm, t_np)]
            print(f"{name:10s} {np.dtype(dtype).name:8s} {ns[0]:7.2f} {ns[1]:7.2f} {ns[2]:7.2f} "
                  f"{ns[1] / ns[0]:9.1f} {ns[2] / ns[0]:10.1f} {err:8.2f}")


if __name__ == "__main__":
    main()
