"""Where a cold compile's CPU time goes: the exclusive CPU seconds of each numba function.

Builds the RNN or LSTM forward+backward function of `bptt_rnn.bptt_function`, or
a graph of benchmarks/user_graphs.py by its name (``charlm-lstm-train``...), and
calls it once, in a fresh process with empty bptt and numba cache directories,
listening to numba's compile events. A function's exclusive time is its compile
time minus that of the functions compiled while it was being compiled (its
callees, overloads and intrinsics' helpers). The rest of the process's CPU time
(imports, numba's initialisation, bptt's rewrites, the call itself) is one row.
It also splits the numba time into the graph's generated functions, which every
new graph compiles, and the runtime helpers (BLAS calls, chunk products, ...),
which a machine compiles once per dtype and every later graph loads from the
disk cache.

Usage: python benchmarks/compile_profile.py [rnn|lstm|GRAPH] [--dtype float64] [--top 15]
                                           [--json FILE] [--warm-with rnn|lstm|GRAPH]
(``--dtype`` applies to rnn and lstm; a user graph has its own dtypes.)
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict

# time the compiled code from the first call, not PY calls while it compiles
os.environ.setdefault("BPTT_COMPILE_IN_BACKGROUND", "0")


def profile_child(kind, dtype, top, json_path):
    c0 = time.process_time()
    from numba.core import event

    class ExclusiveTimes(event.Listener):
        def __init__(self):
            self.stack, self.seconds, self.kinds = [], defaultdict(float), {}

        def on_start(self, ev):
            name = _name(ev)
            self.kinds[name] = _kind(ev)
            self.stack.append([name, time.process_time(), 0.0])

        def on_end(self, ev):
            name, start, inner = self.stack.pop()
            spent = time.process_time() - start
            self.seconds[name] += spent - inner
            if self.stack:
                self.stack[-1][2] += spent

    listener = ExclusiveTimes()
    event.register("numba:compile", listener)
    if kind in ("rnn", "lstm"):
        from bptt_rnn import bptt_function  # imports bptt inside the measured time
        from impls.cases import data
        f = bptt_function(kind, dtype)
        f(*data(kind, 4, 2, 3, 5, dtype))
    else:
        import user_graphs
        f, args = user_graphs.GRAPHS[kind]()
        f(*args)
    total = time.process_time() - c0
    numba_total = sum(listener.seconds.values())
    rows = sorted(listener.seconds.items(), key=lambda kv: -kv[1])
    by_kind = defaultdict(float)
    for name, seconds in rows:
        by_kind[listener.kinds[name]] += seconds
    graph, helpers = by_kind["graph"], by_kind["helper"]
    what = f"{kind} {dtype}" if kind in ("rnn", "lstm") else kind
    print(f"{what}: {total:.2f} CPU s in all; numba compiles {numba_total:.2f} s "
          f"({len(rows)} functions); the rest {total - numba_total:.2f} s")
    print(f"  numba: this graph's generated functions {graph:.2f} s; bptt's runtime helpers "
          f"{helpers:.2f} s (once per machine and dtype: later graphs load them from the disk "
          f"cache); numba's own overloads {by_kind['numba']:.2f} s")
    for name, seconds in rows[:top]:
        print(f"  {seconds:6.2f}  {name}")
    if json_path:
        with open(json_path, "w") as fh:
            json.dump({"total": total, "numba": numba_total, "graph": graph, "helpers": helpers,
                       "functions": dict(rows)}, fh, indent=1)


def _kind(ev):
    """'graph' (generated for this graph), 'helper' (bptt's runtime) or 'numba'."""
    module = getattr(getattr(ev.data.get("dispatcher"), "py_func", None), "__module__", "") or ""
    if module.startswith("bptt_generated_"):
        return "graph"
    return "helper" if module.startswith("bptt.") else "numba"


def _name(ev):
    dispatcher = ev.data.get("dispatcher")
    func = getattr(dispatcher, "py_func", None)
    name = getattr(func, "__qualname__", None) or repr(dispatcher)
    module = getattr(func, "__module__", "") or ""
    return f"{module.rsplit('.', 1)[-1]}.{name}" if module else name


def _user_graph_names():
    """The names of benchmarks/user_graphs.py's graphs, read without importing bptt."""
    import ast

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "user_graphs.py")
    for node in ast.parse(open(path).read()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "GRAPHS":
            return [k.value for k in node.value.keys]
    return []


def main():
    p = argparse.ArgumentParser()
    kinds = ["rnn", "lstm"] + list(_user_graph_names())
    p.add_argument("kind", nargs="?", default="rnn", choices=kinds)
    p.add_argument("--dtype", default="float64")
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--json", default=None, help="also write every function's seconds here")
    p.add_argument("--warm-with", choices=kinds, default=None,
                   help="first compile this other graph into the same (empty) cache, unmeasured: "
                        "the measured graph then finds the runtime helpers they share on disk, "
                        "as every graph after a machine's first does")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        return profile_child(a.kind, a.dtype, a.top, a.json)
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.TemporaryDirectory(prefix="bptt-compile-") as cache:
        env = dict(os.environ, BPTT_CACHE_DIR=os.path.join(cache, "bptt"),
                   NUMBA_CACHE_DIR=os.path.join(cache, "numba"))
        if a.warm_with:
            subprocess.run([sys.executable, os.path.abspath(__file__), a.warm_with, "--dtype",
                            a.dtype, "--top", "0", "--child"], env=env, check=True, cwd=here,
                           stdout=subprocess.DEVNULL)
        args = [sys.executable, os.path.abspath(__file__), a.kind, "--dtype", a.dtype,
                "--top", str(a.top), "--child"] + (["--json", a.json] if a.json else [])
        subprocess.run(args, env=env, check=True, cwd=here)


if __name__ == "__main__":
    main()
