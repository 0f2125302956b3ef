"""Dump the numba source generated for a corpus of graphs, to prove a lowering refactor
changes nothing: run it before and after the change, then `--compare` the two dumps.

    PYTHONPATH=. python tools/lowering_corpus.py before.txt [test files...]
    PYTHONPATH=. python tools/lowering_corpus.py --compare before.txt after.txt

The corpus is the user graphs of benchmarks/user_graphs.py (tiny and full size), the
benchmark RNN and LSTM (benchmarks/bptt_rnn.py, float64 and float32, with and without
the gradient of X), and every graph the given test files compile in NUMBA mode. Nothing
is compiled by numba: each NUMBA graph's module source (and every kernel it adds) is
recorded, and the graph then runs in PY mode, so the tests run quickly (tests that read
numba specifics may fail here; that does not matter, only the sources are compared).
The output is the sorted set of distinct sources, so test order and repeats do not
matter. `--compare` compares two dumps as sets, with the generated modules' names
masked (they hash more than the source: a tree elsewhere names them otherwise), and
prints the sources found in one only.
"""
from __future__ import annotations

import os
import re
import sys
import tempfile

os.environ.setdefault("BPTT_CACHE_DIR", tempfile.mkdtemp(prefix="bptt-corpus-"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))

SOURCES = set()


def _install():
    import bptt.compile.function  # noqa: F401  (the package exports a `function` too)
    from bptt.link.numba import linker
    from bptt.link.python import make_python_callable

    real_add_kernel = linker.ModuleBuilder.add_kernel

    def add_kernel(self, kernel):
        SOURCES.add(f"# kernel {kernel.hint} separate={kernel.separate}\n{kernel.source}")
        return real_add_kernel(self, kernel)

    def make_numba_callable(fgraph, compiled=None):
        import bptt.link.numba.dispatch  # noqa: F401  (registers the lowerings)

        builder = linker.ModuleBuilder()
        builder.graph_function(fgraph.inputs, fgraph.outputs, "main")
        SOURCES.add("# graph module\n" + builder.source())
        return make_python_callable(fgraph)

    linker.ModuleBuilder.add_kernel = add_kernel
    linker.make_numba_callable = make_numba_callable
    # No graph memo: every graph is lowered.
    sys.modules["bptt.compile.function"].memo_key = lambda fgraph, m: None


def _benchmark_graphs():
    import bptt
    import user_graphs
    from bptt_rnn import bptt_function

    bptt.config.mode = "NUMBA"
    for name, build in user_graphs.GRAPHS.items():
        for tiny in (True, False):
            print("corpus:", name, "tiny" if tiny else "full", flush=True)
            build(tiny)
    for kind in ("rnn", "lstm"):
        for dtype in ("float64", "float32"):
            for wrt_x in (False, True):
                bptt_function(kind, dtype, wrt_x)


def _load(path):
    with open(path) as fh:
        text = re.sub(r"bptt_generated_[0-9a-f]+", "bptt_generated_X", fh.read())
    return set(text.split("\n\n# ----\n\n"))


def compare(before, after):
    """0 if the dumps `before` and `after` hold the same sources, else 1 (printing them)."""
    a, b = _load(before), _load(after)
    print(f"{len(a)} and {len(b)} sources; {len(a - b)} only in {before}, "
          f"{len(b - a)} only in {after}")
    for label, only in ((before, a - b), (after, b - a)):
        for source in sorted(only):
            print(f"---- only in {label}:\n{source}")
    return int(a != b)


def _parser():
    import argparse

    p = argparse.ArgumentParser(
        description="Dump the numba source generated for a corpus of graphs, or compare "
                    "two dumps (see the module docstring).")
    p.add_argument("out", nargs="?", help="the dump to write")
    p.add_argument("tests", nargs="*", help="test files whose NUMBA graphs join the corpus")
    p.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"),
                   help="compare two dumps instead; exit status 1 if they differ")
    return p


def main(argv):
    parser = _parser()
    args = parser.parse_args(argv)
    if args.compare:
        if args.out or args.tests:
            parser.error("--compare takes two dumps and nothing else")
        return compare(*args.compare)
    if not args.out:
        parser.error("name the dump to write (or --compare BEFORE AFTER)")
    _install()
    _benchmark_graphs()
    if args.tests:
        import pytest

        pytest.main(["-q", "--no-header", "-p", "no:cacheprovider", "--hypothesis-seed=0"]
                    + args.tests)
    with open(args.out, "w") as fh:
        for source in sorted(SOURCES):
            fh.write(source.rstrip("\n") + "\n\n# ----\n\n")
    print(f"{len(SOURCES)} distinct sources -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
