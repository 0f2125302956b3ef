"""`separately`: calls by symbol between compiled functions (link/numba/separate.py)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.link.numba import separate as sep
from bptt.link.numba.errors import reformat
from bptt.link.numba.runtime import jit

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@jit
def _weighted_rows(x, w):
    if x.shape[1] != w.shape[0]:
        raise ValueError("weighted_rows: x has {} columns but w has {} entries", x.shape[1],
                         w.shape[0])
    out = np.empty(x.shape[0], x.dtype)
    for i in range(x.shape[0]):
        acc = 0.0
        for j in range(x.shape[1]):
            acc += x[i, j] * w[j]
        out[i] = acc
    return out


_weighted_rows_call = sep.separately(_weighted_rows)
_weighted_rows_any = sep.separately(_weighted_rows, any_layout=True)


@jit
def _caller(x, w, v):
    # two calls, a contiguous and a transposed x, to see arguments and results pass intact
    return _weighted_rows_call(x, w), _weighted_rows_call(x.T, v)


@jit
def _caller_any(x, w, v):
    return _weighted_rows_any(x, w), _weighted_rows_any(x.T, v)


@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 2 ** 31))
def test_a_separate_call_returns_what_the_callee_computes(m, n, seed):
    rng = np.random.default_rng(seed)
    x, w, v = rng.normal(size=(m, n)), rng.normal(size=n), rng.normal(size=m)
    a, b = _caller(x, w, v)
    np.testing.assert_allclose(a, x @ w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b, x.T @ v, rtol=1e-12, atol=1e-12)


def test_any_layout_compiles_the_callee_once_for_every_layout():
    x = np.arange(12.0).reshape(3, 4)
    a, b = _caller_any(x, np.ones(4), np.ones(3))
    np.testing.assert_array_equal(a, x @ np.ones(4))
    np.testing.assert_array_equal(b, x.T @ np.ones(3))
    # the C-contiguous x and its (F-ordered) transpose went through one signature
    wide = [sig for sig in sep.compiled(_weighted_rows).signatures if sig[0].layout == "A"]
    assert len(wide) == 1 and wide[0][1].layout == "A"


def test_the_callee_is_compiled_without_python_wrappers_and_stays_callable_from_python():
    x, w, v = np.ones((2, 3)), np.arange(3.0), np.arange(2.0)
    _caller(x, w, v)
    twin = sep.compiled(_weighted_rows)
    assert twin is not _weighted_rows and twin.overloads
    for cres in twin.overloads.values():
        assert cres.library.get_pointer_to_function(cres.fndesc.llvm_cpython_wrapper_name) == 0
    np.testing.assert_array_equal(_weighted_rows(x, w), x @ w)   # the user's dispatcher


def test_an_error_in_the_callee_reaches_the_caller_with_its_values():
    with pytest.raises(ValueError) as info:
        _caller(np.ones((2, 3)), np.ones(2), np.ones(2))
    assert str(reformat(info.value)) == "weighted_rows: x has 3 columns but w has 2 entries"


def test_graph_functions_call_inner_graphs_separately():
    x = T.matrix("x")
    h, _ = bptt.scan(lambda r, acc: acc + T.tanh(r), sequences=x,
                     outputs_info=T.zeros_like(x[0]))
    f = bptt.function([x], h[-1], mode="NUMBA")
    src = f._fn.source
    assert "separately(scan_step)" in src
    assert "separately(scan)" in src
    v = np.random.default_rng(0).normal(size=(5, 3))
    np.testing.assert_allclose(f(v), np.tanh(v).sum(0), rtol=1e-12)


_MODULE = """
import numpy as np
from bptt.link.numba.runtime import jit, separately

@jit
def callee(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = 2.0 * x[i] + 1.0
    return out

callee_call = separately(callee)

@jit
def caller(x):
    return callee_call(x).sum()
"""

_RUN = """
import sys, numba, numpy as np
import sepmod
from bptt.link.numba import separate as sep
numba.njit(lambda x: x + 1)(1.0)   # numba numbers functions per process: shift the count
r = sepmod.caller(np.arange(4.0))
assert r == 16.0, r
[cres] = sep.compiled(sepmod.callee).overloads.values()
# the wrapperless callee's cache entry is never the Python-callable dispatcher's
assert sepmod.callee(np.arange(2.0)).tolist() == [1.0, 3.0]
print(cres.fndesc.mangled_name, sum(sepmod.caller.stats.cache_hits.values()))
"""


def _run(tmp_path, cache):
    env = dict(os.environ, BPTT_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join([str(tmp_path), REPO]))
    out = subprocess.run([sys.executable, "-c", _RUN], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    name, hits = out.stdout.split()[-2:]
    return name, int(hits)


def test_a_cached_caller_finds_its_callee_in_a_fresh_process(tmp_path):
    (tmp_path / "sepmod.py").write_text(textwrap.dedent(_MODULE))
    cache = tmp_path / "cache"
    first, hits = _run(tmp_path, cache)
    assert hits == 0                           # compiled, and written to the cache
    assert _run(tmp_path, cache) == (first, 1)  # loaded: the callee registered before it
    # The callee's cache entry lost (a concurrent writer, a cleaned file): it compiles
    # again, under another process-local name, and the cached caller still links to it.
    for root, _, files in os.walk(cache):
        for name in files:
            if ".callee-" in name:
                os.unlink(os.path.join(root, name))
    again, hits = _run(tmp_path, cache)
    assert hits == 1 and again != first


_CHAIN = """
import numpy as np
from bptt.link.numba.runtime import jit, separately

@jit
def inner(x):
    return x * 3.0

inner_call = separately(inner)

@jit
def middle(x):
    return inner_call(x) + 1.0

@jit
def outer(x):
    return middle(x) * 2.0
"""

_STAGE = """
import sys, numpy as np
import chainmod
fn = getattr(chainmod, sys.argv[1])
print(fn(np.float64(2.0)), sum(fn.stats.cache_hits.values()))
"""


def _stage(tmp_path, cache, name):
    env = dict(os.environ, BPTT_CACHE_DIR=str(cache),
               PYTHONPATH=os.pathsep.join([str(tmp_path), REPO]))
    out = subprocess.run([sys.executable, "-c", _STAGE, name], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, f"stage {name} exited with {out.returncode}: {out.stderr[-2000:]}"
    value, hits = out.stdout.split()
    return float(value), int(hits)


def test_a_caller_compiled_against_a_cached_function_keeps_its_callees_hooks(tmp_path):
    # `outer` links `middle`, which calls `inner` separately. When `middle` comes from the
    # cache as `outer` is compiled, `outer` must still carry the hook that registers
    # `inner`: loaded in a fresh process it would otherwise call an unresolved symbol.
    (tmp_path / "chainmod.py").write_text(textwrap.dedent(_CHAIN))
    cache = tmp_path / "cache"
    assert _stage(tmp_path, cache, "middle") == (7.0, 0)    # middle (and inner) cached
    assert _stage(tmp_path, cache, "outer") == (14.0, 0)    # outer compiled, middle loaded
    assert _stage(tmp_path, cache, "outer") == (14.0, 1)    # outer loaded in a fresh process


@pytest.mark.parametrize("module", ["jitting", "runtime", "scan_runtime", "blas", "fastmath",
                                    "elemwise_runtime", "alloc_runtime", "reduce_runtime",
                                    "chunk_runtime", "patches_runtime", "separate"])
def test_each_runtime_module_imports_first_in_a_fresh_process(module):
    # a helper module that imported runtime.py (which gathers them all) would meet
    # itself half-built when imported first
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", f"import bptt.link.numba.{module}"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
