"""The graph memo: a key of the un-rewritten graph finds the modules compiled for it.

Key tests build graphs only (no compilation). The NUMBA tests turn
``config.check_ir`` off, as the memo is off while the IR is checked.
"""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.compile.graph_key import graph_key
from bptt.graph.basic import Apply
from bptt.graph.fg import FunctionGraph
from bptt.graph.op import Op
from bptt.link.numba import cache

ROOT = pathlib.Path(bptt.__file__).resolve().parent.parent


def key(build):
    inputs, outputs = build()
    return graph_key(FunctionGraph(inputs, outputs), "NUMBA")


def rnn(dtype="float64", taps=(-1,), truncate=-1, go_backwards=False, scale=1.0, name="W"):
    X, h0 = T.tensor3("X", dtype=dtype), T.tensor3("h0", dtype=dtype)
    W = T.matrix(name, dtype=dtype)

    def step(x, *rest):
        *hs, W = rest
        return T.tanh(T.dot(x, W) + sum(hs) * scale)

    H, _ = bptt.scan(step, sequences=X, outputs_info=dict(initial=h0, taps=list(taps)),
                     non_sequences=W, truncate_gradient=truncate, go_backwards=go_backwards)
    loss = (H ** 2).sum()
    return [X, h0, W], [loss] + bptt.grad(loss, [W, h0])


def test_the_same_graph_built_twice_has_one_key():
    assert key(rnn) == key(rnn) is not None


@pytest.mark.parametrize("other", [
    dict(dtype="float32"), dict(taps=(-2,)), dict(taps=(-1, -2)), dict(truncate=3),
    dict(go_backwards=True), dict(scale=2.0), dict(name="U")])
def test_scans_that_differ_in_one_thing_have_different_keys(other):
    assert key(lambda: rnn(**other)) != key(rnn)


def elementwise(shape=(None, None), dtype="float64", c=1.0, axis=0):
    x = T.tensor(dtype, shape=shape, name="x")
    return [x], [T.tanh(x * T.constant(np.asarray(c, dtype)) + 2).sum(axis=axis)]


@pytest.mark.parametrize("other", [
    dict(c=1.5), dict(axis=1), dict(dtype="float32"), dict(shape=(1, None)),
    dict(shape=(None, 3))])
def test_graphs_that_differ_in_a_constant_parameter_dtype_or_broadcast_have_different_keys(other):
    assert key(lambda: elementwise(**other)) != key(elementwise)


def test_zero_and_negative_zero_constants_have_different_keys():
    assert key(lambda: elementwise(c=0.0)) != key(lambda: elementwise(c=-0.0))


def test_the_mode_and_the_configuration_are_part_of_the_key(monkeypatch):
    inputs, outputs = elementwise()
    fg = FunctionGraph(inputs, outputs)
    numba_key = graph_key(fg, "NUMBA")
    assert graph_key(fg, "PY") != numba_key
    monkeypatch.setattr(bptt.config, "exclude_rewrites", ("fuse_elemwise",))
    excluded_key = graph_key(fg, "NUMBA")
    assert excluded_key != numba_key
    monkeypatch.setattr(bptt.config, "chunk_rows", 6)   # read by a rewrite, not by the graph
    assert graph_key(fg, "NUMBA") not in (numba_key, excluded_key)


def test_settings_the_compiled_code_does_not_read_are_not_part_of_the_key(monkeypatch):
    """blas_threads is read at every call, compile_in_background decides only where the
    compile runs (its child must find the parent's key)."""
    inputs, outputs = elementwise()
    fg = FunctionGraph(inputs, outputs)
    key = graph_key(fg, "NUMBA")
    monkeypatch.setattr(bptt.config, "blas_threads", 2)
    monkeypatch.setattr(bptt.config, "compile_in_background", True)
    assert graph_key(fg, "NUMBA") == key


def test_the_machine_is_part_of_the_key(monkeypatch):
    """The libraries and the CPU, read without numba or llvmlite: another machine sharing
    the cache dir names the graph otherwise, so the two keep their own records."""
    import llvmlite
    import numba

    from bptt.compile import graph_key as keys

    tag = keys.machine_tag()
    for part in (numba.__version__, llvmlite.__version__, np.__version__):
        assert part in tag.split("|")
    fg = FunctionGraph(*elementwise())
    before = graph_key(fg, "NUMBA")
    monkeypatch.setattr(keys, "machine_tag", lambda: tag + "|another-cpu")
    assert graph_key(fg, "NUMBA") != before


class _Callback(Op):
    __props__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def make_node(self, x):
        return Apply(self, [x], [x.type()])


def test_an_op_defined_outside_bptt_or_holding_a_callable_makes_the_graph_unkeyable(
        monkeypatch):
    x = T.vector("x")
    assert graph_key(FunctionGraph([x], [_Callback(1)(x)]), "NUMBA") is None
    monkeypatch.setattr(_Callback, "__module__", "bptt.tensor.fake")   # as if bptt's own op
    assert graph_key(FunctionGraph([x], [_Callback(1)(x)]), "NUMBA") is not None
    assert graph_key(FunctionGraph([x], [_Callback(np.sin)(x)]), "NUMBA") is None


# -- NUMBA ----------------------------------------------------------------------------------
@pytest.fixture
def memo_on(monkeypatch):
    monkeypatch.setattr(bptt.config, "check_ir", False)


def compiled(c):
    x, y = T.matrix("x"), T.vector("y")
    return bptt.function([x, y], [T.tanh(x * c + y), (x * y).sum()], mode="NUMBA")


def test_a_hit_skips_the_rewrites_and_computes_the_same(memo_on, capsys):
    first, again, other = compiled(2.0), compiled(2.0), compiled(3.0)
    assert first._rewritten and not again._rewritten   # the graph memo found it
    assert again._fn.source == first._fn.source and other._fn.source != first._fn.source
    x, y = np.arange(6.0).reshape(2, 3) / 7, np.array([0.5, -1.0, 2.0])
    for f, c in ((first, 2.0), (again, 2.0), (other, 3.0)):
        out = f(x, y)
        np.testing.assert_allclose(out[0], np.tanh(x * c + y), rtol=1e-14)
        np.testing.assert_allclose(out[1], (x * y).sum(), rtol=1e-14)
    for a, b in zip(first(x, y), again(x, y)):
        np.testing.assert_array_equal(a, b)
    first.debugprint()
    printed = capsys.readouterr().out
    again.debugprint()   # rewrites the graph now
    assert again._rewritten and capsys.readouterr().out == printed


def test_the_memo_is_off_while_the_ir_is_checked():
    assert bptt.config.check_ir   # the suite's setting (tests/conftest.py)
    assert compiled(2.0)._rewritten and compiled(2.0)._rewritten


def test_a_record_whose_module_is_missing_or_altered_is_a_miss(memo_on, tmp_path, monkeypatch):
    monkeypatch.setattr(bptt.config, "cache_dir", str(tmp_path))
    source = "x = 1\n"
    name = cache.module_name(source)
    record = {"key": "k", "main": "x", "modules": [[name, cache._text_digest(source)]]}
    (tmp_path / "graphs").mkdir()
    record_file = tmp_path / "graphs" / "k.json"
    cache.write_sealed(str(record_file), json.dumps(record).encode())
    assert cache.recall("k") is None                       # no module file
    (tmp_path / "modules").mkdir(exist_ok=True)
    (tmp_path / "modules" / f"{name}.py").write_text("x = 2\n")
    with pytest.warns(RuntimeWarning, match="does not hash to what its graph record says"):
        assert cache.recall("k") is None                   # text does not hash to the record
    record_file.write_text("{not json")
    with pytest.warns(RuntimeWarning, match="checksum does not match"):
        assert cache.recall("k") is None
    assert not record_file.exists()                        # a damaged record is removed


WORKER = r'''
import json, sys
import numpy as np
import bptt, bptt.tensor as T
x, y = T.matrix("x"), T.vector("y")
f = bptt.function([x, y], [T.tanh(x * 2.0 + y), (x * y).sum(axis=1)])
out = f(np.arange(6.0).reshape(2, 3) / 7, np.array([0.5, -1.0, 2.0]))
report = {"hit": not f._rewritten, "passes_imported": "bptt.compile.passes" in sys.modules,
          "out": [np.asarray(o).tolist() for o in out]}
f.debugprint(file=open("/dev/null", "w"))
report["debugprint_rewrote"] = f._rewritten
print(json.dumps(report))
'''


def _worker(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    env = dict(os.environ, BPTT_CACHE_DIR=str(tmp_path / "cache"), BPTT_CHECK_IR="0",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, str(script)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_fresh_process_loads_the_function_without_rewriting(tmp_path):
    first = _worker(tmp_path)
    assert not first["hit"] and first["passes_imported"]
    second = _worker(tmp_path)
    assert second["hit"] and not second["passes_imported"]
    assert second["out"] == first["out"] and second["debugprint_rewrote"]


def test_a_scan_gradient_has_the_same_key_in_another_process():
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import test_graph_memo as t; "
            "print(t.key(t.rnn))")
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path)
    out = subprocess.run([sys.executable, "-c", code, os.path.dirname(__file__)], env=env,
                         capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == key(rnn)
