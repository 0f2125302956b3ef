"""The numba disk cache: reuse across processes, opting out, concurrent writers.

Each process-level test runs a small worker script in fresh Python processes
with a private ``BPTT_CACHE_DIR``; the worker compiles a few graphs, calls
them and prints what numba compiled and what it loaded from the cache.
"""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np

import bptt
from bptt.link.numba.jitting import _KeyedIndexDataCacheFile

ROOT = pathlib.Path(bptt.__file__).resolve().parent.parent

WORKER = r'''
import json, sys
import numpy as np
from numba.core import event
import bptt, bptt.tensor as T
from bptt.link.numba.linker import _Diagnosis

_Diagnosis.__call__ = lambda self, exc, args: exc   # the compiled code's own errors, unrestated
compiled = []

class Listener(event.Listener):
    def on_start(self, ev):
        pass

    def on_end(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__name__)

def tanh_layer(dtype):
    W, x = T.matrix("W", dtype=dtype), T.vector("x", dtype=dtype)
    c = T.tanh(T.dot(W, x) + 1).sum()
    f = bptt.function([W, x], [c] + bptt.grad(c, [W, x]))
    return f, (np.arange(6, dtype=dtype).reshape(2, 3) / 10, np.ones(3, dtype))

def matmul(dtype):
    A, B = T.matrix("A", dtype=dtype), T.matrix("B", dtype=dtype)
    f = bptt.function([A, B], T.dot(A, B).sum(axis=0))
    return f, (np.arange(6, dtype=dtype).reshape(2, 3), np.ones((3, 2), dtype))

def bad_broadcast(dtype):
    # raises from compiled helpers with run-time values (the shapes): elementwise, Alloc
    a, b, c = T.matrix("a", dtype=dtype), T.matrix("b", dtype=dtype), T.vector("c", dtype=dtype)
    f = bptt.function([a, b, c], [T.tanh(a * b + c), T.alloc(c, 2, 3)])
    return f, (np.zeros((2, 3), dtype), np.zeros((3, 3), dtype), np.zeros(3, dtype))

def bad_alloc(dtype):
    c = T.vector("c", dtype=dtype)
    f = bptt.function([c], T.alloc(c, 2, 3))
    return f, (np.zeros(4, dtype),)

GRAPHS = {"tanh64": lambda: tanh_layer("float64"), "tanh32": lambda: tanh_layer("float32"),
          "mm64": lambda: matmul("float64"), "mm32": lambda: matmul("float32"),
          "bcast64": lambda: bad_broadcast("float64"), "alloc64": lambda: bad_alloc("float64")}
report = {"hits": 0, "misses": 0, "results": {}}
with event.install_listener("numba:compile", Listener()):
    for name in sys.argv[1].split(","):
        f, args = GRAPHS[name]()
        stats = f._fn.numba_function.stats
        report["hits"] += sum(stats.cache_hits.values())
        report["misses"] += sum(stats.cache_misses.values())
        try:
            out = f(*args)
        except Exception as e:
            report["results"][name] = [type(e).__name__, str(e).splitlines()[0]]
            continue
        report["results"][name] = [np.asarray(o).tolist() for o in (out if isinstance(out, list) else [out])]
report["compiled"] = compiled
report["cache"] = type(f._fn.numba_function._cache).__name__
from bptt.link.numba import cache
report["module_dir"] = cache._module_folder()
print(json.dumps(report))
'''


def _start(tmp_path, graphs, cache_dir):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    env = dict(os.environ, BPTT_CACHE_DIR=str(cache_dir),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, str(script), ",".join(graphs)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc):
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def _run(tmp_path, graphs, cache_dir):
    return _finish(_start(tmp_path, graphs, cache_dir))


def test_a_second_process_loads_compiled_code_instead_of_compiling(tmp_path):
    cache_dir = tmp_path / "cache"
    first = _run(tmp_path, ["tanh64"], cache_dir)
    assert first["misses"] == 1 and first["hits"] == 0
    assert "main" in first["compiled"] and "gemm_into" in first["compiled"]
    second = _run(tmp_path, ["tanh64"], cache_dir)
    assert second["hits"] == 1 and second["misses"] == 0
    assert second["compiled"] == []
    assert second["results"] == first["results"]
    assert first["cache"] == "DiskCache"


def test_errors_with_run_time_values_keep_their_message_when_loaded_from_the_cache(tmp_path):
    # The helpers that raise them are exec'd source; numba rebuilt their environment
    # only when they had a module name, else the cached raise became a RuntimeError.
    cache_dir = tmp_path / "cache"
    first = _run(tmp_path, ["bcast64", "alloc64"], cache_dir)
    second = _run(tmp_path, ["bcast64", "alloc64"], cache_dir)
    assert second["hits"] == 2 and second["compiled"] == []
    assert second["results"] == first["results"]
    kind, message = second["results"]["bcast64"]
    assert kind == "ValueError" and "could not be broadcast" in message
    kind, message = second["results"]["alloc64"]
    assert kind == "ValueError" and "(4,)" in message and "(2, 3)" in message


def test_an_empty_cache_dir_disables_the_disk_cache(tmp_path):
    report = _run(tmp_path, ["tanh64"], "")
    assert report["cache"] == "NullCache" and report["hits"] == 0
    assert "main" in report["compiled"]
    assert not os.path.exists(report["module_dir"])  # private, removed at exit
    W = np.arange(6.0).reshape(2, 3) / 10
    y = np.tanh(W @ np.ones(3) + 1)
    np.testing.assert_allclose(report["results"]["tanh64"][0], y.sum())
    np.testing.assert_allclose(report["results"]["tanh64"][2], W.T @ (1 - y ** 2))


def test_concurrent_writers_leave_a_consistent_cache(tmp_path):
    cache_dir = tmp_path / "cache"
    names = ["tanh64", "mm32", "tanh32", "mm64"]
    # Same kernels (np.dot, sums), different signatures, compiled in different orders.
    procs = [_start(tmp_path, names[k:] + names[:k], cache_dir) for k in (0, 2)]
    reports = [_finish(p) for p in procs]
    for r in reports[1:]:
        assert r["results"] == reports[0]["results"]
    check = _run(tmp_path, names, cache_dir)
    assert check["results"] == reports[0]["results"]
    assert check["misses"] == 0 and check["hits"] == len(names)
    assert check["compiled"] == []
    for index in (cache_dir / "numba").rglob("*.nbi"):
        data = _KeyedIndexDataCacheFile(str(index.parent), index.name[:-4], None)
        data._source_stamp = _stamp_of(index)
        for name in data._load_index().values():
            assert (index.parent / name).exists()


def _stamp_of(index):
    import io
    import pickle

    from bptt.link.numba.cache import unseal

    f = io.BytesIO(unseal(index.read_bytes()))
    pickle.load(f)
    return pickle.loads(f.read())[0]


def test_data_files_are_named_by_key_so_racing_writers_cannot_mix_them(tmp_path):
    a = _KeyedIndexDataCacheFile(str(tmp_path), "f-1.py311", "stamp")
    b = _KeyedIndexDataCacheFile(str(tmp_path), "f-1.py311", "stamp")
    real_save_index = a._save_index

    def save_index_after_b(overloads):
        # B saves a different key between A's reading and A's writing of the index.
        b.save(("sig B",), "code for B")
        real_save_index(overloads)

    a._save_index = save_index_after_b
    a.save(("sig A",), "code for A")
    assert a.load(("sig A",)) == "code for A"
    assert a.load(("sig B",)) in (None, "code for B")  # a lost update is a miss, never wrong
    b.save(("sig B",), "code for B")
    assert b.load(("sig B",)) == "code for B" and b.load(("sig A",)) == "code for A"


def test_an_unwritable_cache_dir_warns_and_still_compiles(tmp_path, monkeypatch):
    import pytest

    import bptt.link.numba.dispatch  # noqa: F401  (import-time setup uses the real cache dir)
    import bptt.tensor as T

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setattr(bptt.config, "cache_dir", str(blocker / "cache"))
    x = T.vector("x")
    with pytest.warns(RuntimeWarning, match="cannot write to the cache directory"):
        f = bptt.function([x], x * 13.25, mode="NUMBA")
    np.testing.assert_array_equal(f(np.ones(2)), [13.25, 13.25])
    assert type(f._fn.numba_function._cache).__name__ == "NullCache"
