"""Show the scan oracle catches a broken version of every rewrite pass.

    PYTHONPATH=. python tools/scan_oracle_mutations.py --count 300

Draws the first ``--count`` programs of a seeded draw (the CI test's strategy and
count), evaluates each without rewrites (the reference) and with every rewrite in
PY mode while recording which passes edit its graphs. Then, for each pass of
`bptt.compile.passes.pm`, compiles again the programs on which that pass fired
with the pass broken (`tests/scan/oracle/mutate.py`: every value it puts into a
graph is off by a little; plus the targeted mutations of `mutate.TARGETED`) and
reports the first program whose outputs or gradients then differ from the
reference. Prints a table: pass, mutation, programs it fired on, caught at
(the program's index in the draw).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
os.environ.setdefault("BPTT_CHECK_IR", "1")

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import seed as hseed  # noqa: E402


def draw_programs(count, seed, restrict):
    from tests.scan.oracle.strategy import programs

    out = []

    @hseed(seed)
    @settings(max_examples=count, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(programs(restrict=restrict))
    def collect(prog):
        out.append(prog)

    collect()
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tries", type=int, default=25, help="firing programs tried per pass")
    ap.add_argument("--restrict", default="")
    ap.add_argument("--only", default="", help="comma-separated pass names")
    args = ap.parse_args(argv)

    from bptt.compile.passes import pm
    from tests.scan.oracle import mutate
    from tests.scan.oracle.build import input_values, make_values
    from tests.scan.oracle.check import _close, _graph, _run, _tolerance, no_rewrites

    t0 = time.time()
    restrict = tuple(r for r in args.restrict.split(",") if r)
    progs = draw_programs(args.count, args.seed, restrict)
    cases = []     # (index, prog, built, named, args, values, ref, fired)
    for k, prog in enumerate(progs):
        values = make_values(prog)
        try:
            b, named = _graph(prog, values, grads=True, second=False)
            call = input_values(prog, values)
            with no_rewrites():
                ref = _run(b, named, call, "PY", values)
            with mutate.tracking() as fired:
                got = _run(b, named, call, "PY", values)
        except Exception as exc:  # noqa: BLE001
            print(f"program {k}: skipped ({type(exc).__name__}: {str(exc)[:100]})")
            continue
        if not _agree(got, ref, _tolerance(prog), _close):
            print(f"program {k}: rewritten != reference without any mutation: skipped")
            continue
        cases.append((k, prog, b, named, call, values, ref, set(fired)))
    print(f"{len(cases)} programs evaluated in {time.time() - t0:.0f} s")

    names = list(dict.fromkeys(pm.names()))
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    rows = []
    for name in names:
        firing = [c for c in cases if name in c[7]]
        mutations = [("values it writes off by 1e-3 / 1", lambda: mutate.corrupting(name))]
        if name in mutate.TARGETED:
            mutations.append((mutate.TARGETED[name].__doc__.split(":")[0].strip(),
                              mutate.TARGETED[name]))
        for label, make in mutations:
            pool = firing if label.startswith("values") else cases
            caught, tried = None, 0
            for k, prog, b, named, call, values, ref, _ in pool[:args.tries]:
                tried += 1
                try:
                    with make():
                        got = _run(b, named, call, "PY", values)
                except Exception:  # noqa: BLE001 - a crash is caught too
                    caught = k
                    break
                if not _agree(got, ref, _tolerance(prog), _close):
                    caught = k
                    break
            rows.append((name, label, len(firing), tried, caught))
            print(f"{name:<26} {label[:50]:<50} fired on {len(firing):4d}  "
                  f"caught at {caught if caught is not None else '-'} (tried {tried})", flush=True)
    print("\n| pass | mutation | fired on (programs) | caught at program |")
    print("| --- | --- | --- | --- |")
    for name, label, n, tried, caught in rows:
        print(f"| {name} | {label} | {n} | {caught if caught is not None else 'NOT CAUGHT'} |")
    missed = [r[0] for r in rows if r[4] is None]
    print(f"\n{len(rows)} mutations, {len(rows) - len(missed)} caught; not caught: {missed} "
          f"({time.time() - t0:.0f} s)")
    return 0


def _agree(got, ref, tol, close):
    (vals, sh), (rvals, rsh) = got, ref
    if any(not close(g, r, *tol) for g, r in zip(vals, rvals)):
        return False
    return rsh is None or close(sh, rsh, *tol)


if __name__ == "__main__":
    sys.exit(main())
