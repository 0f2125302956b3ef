"""Show the scan oracle catches a broken version of every rewrite pass.

    PYTHONPATH=. python tools/scan_oracle_mutations.py --write tests/scan/oracle/caught.py

Draws the programs CI's `test_programs_py` draws (by running that test with a
collector: same strategy, settings, count and derandomized seed), evaluates each
without rewrites (the reference) and with every rewrite in PY mode while recording
which passes edit its graphs. Then, for each pass of `bptt.compile.passes.pm` and
each of its mutations (`tests/scan/oracle/mutate.py`: every value it puts into a
graph off by a little, plus the targeted bug of `mutate.TARGETED`), compiles again
the programs on which that pass fired with the pass broken and reports the first
whose outputs or gradients then differ from the reference (programs already
catching another mutation are tried first, so CI replays few). A pass off by
default (`mutate.ENABLING`) is evaluated turned on. Prints a table: pass,
mutation, programs it fired on, caught at (the program's index in the draw);
``--write`` saves the catching programs for tests/scan/test_oracle_mutations.py.
About 10 minutes.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
os.environ.setdefault("BPTT_CHECK_IR", "1")

import json  # noqa: E402


def draw_programs(count):
    """The first `count` programs `test_programs_py` draws in CI, in its order.

    Runs that very test (so its strategy, settings and derandomized seed, which
    hypothesis takes from the test's source) with the comparison replaced by a
    collector: the draw cannot drift from CI's.
    """
    from tests.scan import test_oracle

    out = []
    keep = test_oracle._assert_agree
    test_oracle._assert_agree = lambda prog, **_: out.append(prog)
    try:
        test_oracle.test_programs_py()
    finally:
        test_oracle._assert_agree = keep
    return out[:count]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=None,
                    help="first programs of CI's draw (default: all test_programs_py draws)")
    ap.add_argument("--tries", type=int, default=25, help="firing programs tried per pass")
    ap.add_argument("--only", default="", help="comma-separated pass names")
    ap.add_argument("--save", default="", help="write the fired sets and the catches (JSON)")
    ap.add_argument("--write", default="",
                    help="write the catching programs as a Python module (caught.py)")
    ap.add_argument("--fired", default="",
                    help="a --save file of an earlier run: evaluate only the programs on "
                         "which a pass of --only fired there")
    args = ap.parse_args(argv)

    from bptt.compile.passes import pm
    from tests.scan.oracle import mutate

    t0 = time.time()
    progs = draw_programs(args.count)
    print(f"{len(progs)} programs drawn (CI's draw)")
    only = [n for n in args.only.split(",") if n]
    wanted = None
    if args.fired:
        with open(args.fired) as fh:
            earlier = json.load(fh)["fired"]
        wanted = {int(k) for k, names in earlier.items() if not only or set(names) & set(only)}
    cases = _evaluate(progs, wanted, lambda: mutate.enabled(None))
    print(f"{len(cases)} programs evaluated in {time.time() - t0:.0f} s", flush=True)

    names = list(dict.fromkeys(pm.names()))
    if only:
        names = [n for n in names if n in only]
    rows, chosen = [], set()
    for name in names:
        if name in mutate.ENABLING:   # off by default: the draw evaluated again with it on
            print(f"{name} is off by default: evaluating the programs with it on", flush=True)
            firing = [c for c in _evaluate(progs, wanted, lambda: mutate.enabled(name))
                      if name in c[3]]
        else:
            firing = [c for c in cases if name in c[3]]
        # programs already catching another mutation first: the CI test then replays fewer
        for kind, make in mutate.mutations(name):
            # a targeted bug of a pass that edits no graph of the draw acts on every graph
            pool = firing if firing or kind != "targeted" else cases
            pool = sorted(pool, key=lambda c: (c[0] not in chosen, c[0]))[:args.tries]
            caught, tried = None, 0
            for k, ev, ref, _ in pool:
                tried += 1
                if mutate.caught(ev, ref, make):
                    caught = k
                    break
            if caught is not None:
                chosen.add(caught)
            rows.append((name, kind, mutate.describe(make), len(firing), tried, caught))
            print(f"{name:<32} {kind:<8} fired on {len(firing):4d}  "
                  f"caught at {caught if caught is not None else '-'} (tried {tried})", flush=True)
    print("\n| pass | mutation | fired on (programs) | caught at program |")
    print("| --- | --- | --- | --- |")
    for name, kind, label, n, tried, caught in rows:
        print(f"| {name} | {label} | {n} | {caught if caught is not None else 'NOT CAUGHT'} |")
    missed = [(r[0], r[1]) for r in rows if r[5] is None]
    print(f"\n{len(rows)} mutations, {len(rows) - len(missed)} caught; not caught: {missed} "
          f"({time.time() - t0:.0f} s)")
    if args.save:
        with open(args.save, "w") as fh:
            json.dump({"fired": {c[0]: sorted(c[3]) for c in cases},
                       "rows": rows}, fh, indent=1)
    if args.write:
        with open(args.write, "w") as fh:
            fh.write(_module(rows, progs))
    return 0


def _evaluate(progs, wanted, context):
    """[(index, Evaluation, reference result, passes that fired)] of the programs of
    `progs` (those in `wanted` when given) whose rewritten run agrees with the reference,
    the rewritten run made in the context `context()` gives."""
    from tests.scan.oracle import mutate
    from tests.scan.oracle.check import Evaluation, agree

    cases = []
    for k, prog in enumerate(progs):
        if wanted is not None and k not in wanted:
            continue
        try:
            ev = Evaluation(prog)
            ref = ev.reference()
            with context(), mutate.tracking() as fired:
                got = ev.run()
        except Exception as exc:  # noqa: BLE001
            print(f"program {k}: skipped ({type(exc).__name__}: {str(exc)[:300]})")
            continue
        if not agree(got, ref, prog):
            print(f"program {k}: rewritten != reference without any mutation: skipped")
            continue
        cases.append((k, ev, ref, set(fired)))
    return cases


def _module(rows, progs):
    """The Python of tests/scan/oracle/caught.py for `rows`."""
    from tests.scan.oracle.program import pretty

    used = sorted({r[5] for r in rows if r[5] is not None})
    lines = [f'"""{CAUGHT_DOC}"""', "from .program import E, NonSeq, Out, Program, Seq", "",
             "#: (pass, mutation, index in test_programs_py's draw of the program catching it,",
             "#: programs of the draw on which the pass fired)", "CATCHES = ["]
    lines += [f"    ({name!r}, {kind!r}, {caught}, {n})," for name, kind, _, n, _, caught in rows
              if caught is not None]
    lines += ["]", "", "#: index in test_programs_py's draw -> the program", "PROGRAMS = {"]
    for k in used:
        lines.append(f"    {k}: " + pretty(progs[k], 4) + ",")
    lines += ["}", ""]
    return "\n".join(lines)


CAUGHT_DOC = """The programs of CI's oracle draw that catch each broken rewrite pass.

Written by ``tools/scan_oracle_mutations.py --write tests/scan/oracle/caught.py``
(do not edit by hand): for each pass of `bptt.compile.passes.pm` and each of its
mutations (`mutate.mutations`), the first program of `test_programs_py`'s draw,
among those on which the pass fires, whose outputs or gradients the broken pass
makes wrong. tests/scan/test_oracle_mutations.py replays them.
"""


if __name__ == "__main__":
    sys.exit(main())
