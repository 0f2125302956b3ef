"""Run the scan oracle (tests/scan/oracle) on any number of random programs.

    PYTHONPATH=. python tools/scan_oracle_soak.py --count 10000 --seed 1

Each program is run by the NumPy interpreter, by bptt in PY mode without
rewrites and with every rewrite (outputs and gradients), with finite
differences and a Hessian-vector product on every 8th, and in NUMBA mode on
every ``--numba-every``-th (a compile costs seconds). Every mismatch is printed
with the program and a reproducer; the last line is ``N programs, M mismatches``.
``--restrict`` takes names of `strategy.RESTRICTIONS` (e.g. the known-bug flags).
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
os.environ.setdefault("BPTT_CHECK_IR", "1")

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import seed as hseed  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--numba-every", type=int, default=50,
                    help="also run NUMBA on every k-th program (0: never)")
    ap.add_argument("--no-grad", action="store_true")
    ap.add_argument("--restrict", default="", help="comma-separated strategy.RESTRICTIONS")
    ap.add_argument("--progress", type=int, default=500, help="print a line every k programs")
    args = ap.parse_args(argv)

    from tests.scan.oracle.check import check_program, reproducer
    from tests.scan.oracle.strategy import RESTRICTIONS, programs

    restrict = tuple(r for r in args.restrict.split(",") if r)
    unknown = [r for r in restrict if r not in RESTRICTIONS]
    if unknown:
        ap.error(f"unknown restriction(s) {unknown}; known: {sorted(RESTRICTIONS)}")
    state = {"n": 0, "bad": 0, "t0": time.time()}
    kinds = collections.Counter()

    @hseed(args.seed)
    @settings(max_examples=args.count, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(programs(restrict=restrict))
    def run(prog):
        state["n"] += 1
        k = state["n"]
        modes = ("PY", "NUMBA") if args.numba_every and k % args.numba_every == 0 else ("PY",)
        found = check_program(prog, modes=modes, grads=not args.no_grad,
                              fd=not args.no_grad and k % 8 == 0,
                              second=not args.no_grad and k % 8 == 4)
        if found:
            state["bad"] += 1
            kinds.update({f"{m.stage}: {m.what[:80]}" for m in found})
            print(f"\n=== mismatch in program {k} ===", flush=True)
            for m in found:
                print(m)
            print(prog.describe())
            print("reproducer:\n" + reproducer(prog), flush=True)
        if args.progress and k % args.progress == 0:
            print(f"... {k} programs, {state['bad']} mismatches, "
                  f"{time.time() - state['t0']:.0f} s", flush=True)

    run()
    if kinds:
        print("\nmismatch kinds:")
        for what, c in kinds.most_common():
            print(f"  {c:5d}  {what}")
    print(f"{state['n']} programs, {state['bad']} mismatches "
          f"({time.time() - state['t0']:.0f} s, seed {args.seed}, restrict {list(restrict)})")
    return 1 if state["bad"] else 0


if __name__ == "__main__":
    sys.exit(main())
