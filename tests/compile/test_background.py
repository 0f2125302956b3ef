"""Compiling in the background (bptt/compile/background.py): PY calls first, then the
compiled code; values, shared state and errors as in a function compiled at once."""
import os
import pickle
import time
import warnings

import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.compile import background
from bptt.config import config


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty disk cache, no IR checks (they turn the graph memo, and so the
    background path, off) and a core taken as free however busy the test machine is."""
    monkeypatch.setattr(config, "cache_dir", str(tmp_path / "cache"))
    monkeypatch.setattr(config, "check_ir", False)
    monkeypatch.setattr(background, "free_cores", lambda: 1.0)
    return tmp_path


def _power_step(name):
    """A scan (x ** k by repeated products) updating a shared counter and a shared state."""
    x = T.vector("x")
    k = bptt.shared(np.int64(0), name=f"calls_{name}")
    acc = bptt.shared(np.zeros(3), name=f"acc_{name}")
    ps, _ = bptt.scan(lambda p, x: p * x, outputs_info=[T.ones_like(x)], non_sequences=[x],
                      n_steps=4)
    out = ps[-1] + acc
    return x, k, acc, out, {k: k + 1, acc: 0.5 * out}


def test_runs_in_py_then_switches_to_the_compiled_code(fresh_cache):
    x, k, acc, out, updates = _power_step("bg")
    f = bptt.function([x], out, updates=updates, compile_in_background=True, name="power")
    assert f.running_mode == "PY" and f.mode == "NUMBA"
    xs = np.array([0.5, -1.5, 2.0])
    want_acc, results = np.zeros(3), []
    results.append(f(xs))                       # runs at once, in PY mode
    assert f.wait_for_compile(timeout=300)
    assert f.running_mode == "NUMBA"
    results += [f(xs), f(xs)]                   # compiled, from the state the PY call left
    for got in results:
        want = xs ** 4 + want_acc
        np.testing.assert_allclose(got, want, rtol=1e-13)
        want_acc = 0.5 * want
    assert int(k.get_value()) == 3
    np.testing.assert_allclose(acc.get_value(), want_acc, rtol=1e-13)


def test_the_py_calls_run_the_keyed_graph_and_the_key_names_it_again(fresh_cache):
    # one copy of the graph is rewritten for PY mode; the one the child compiles and the
    # parent looks up is built again, as the key named it
    from bptt.compile.graph_key import graph_key

    x, _, _, out, updates = _power_step("keyed")
    f = bptt.function([x], out, updates=updates, compile_in_background=True)
    assert f._fgraph is None and f.running_mode == "PY"
    assert graph_key(f._unrewritten(), "NUMBA") == f._key
    g = bptt.function([x], out, updates=updates, compile_in_background=False)
    assert f._key == g._key
    assert f.wait_for_compile(timeout=300)


def test_a_graph_in_the_cache_is_loaded_at_once(fresh_cache):
    x, _, _, out, updates = _power_step("cached")
    bptt.function([x], out, updates=updates)                # compiles into the cache
    again = bptt.function([x], out, updates=updates, compile_in_background=True)
    assert again.running_mode == "NUMBA" and again._pending is None


def test_without_a_disk_cache_it_compiles_in_function(fresh_cache, monkeypatch):
    monkeypatch.setattr(config, "cache_dir", "")
    x = T.vector("x")
    f = bptt.function([x], T.exp(x) * 3, compile_in_background=True)
    assert f.running_mode == "NUMBA"
    np.testing.assert_allclose(f(np.zeros(2)), [3.0, 3.0])


def test_on_a_machine_without_a_free_core_it_compiles_in_function(fresh_cache, monkeypatch):
    monkeypatch.setattr(background, "free_cores", lambda: 0.2)
    x = T.vector("x")
    f = bptt.function([x], T.exp(x) - 5, compile_in_background=True)
    assert f.running_mode == "NUMBA" and f._pending is None


def test_free_cores_is_the_machine_less_the_busy_ones(monkeypatch):
    from bptt.link import blas_threads

    monkeypatch.setattr(blas_threads, "machine_cores", lambda: 4)
    monkeypatch.setattr(blas_threads, "others_busy_now", lambda: 1.5)
    assert background.free_cores() == 1.5


def test_config_turns_it_on_and_the_argument_off(fresh_cache, monkeypatch):
    monkeypatch.setattr(config, "compile_in_background", True)
    x = T.vector("x")
    on = bptt.function([x], T.sin(x) + 7)
    off = bptt.function([x], T.cos(x) + 7, compile_in_background=False)
    assert on.running_mode == "PY" and off.running_mode == "NUMBA"
    assert on.wait_for_compile(timeout=300)


def test_a_failed_compile_leaves_the_function_in_py_mode(fresh_cache, monkeypatch):
    # a child whose Python cannot start: the failure of any child, seen from the parent
    monkeypatch.setattr(background, "_child_environment",
                        lambda: {"PATH": "/usr/bin:/bin", "PYTHONHOME": "/nonexistent"})
    x = T.vector("x")
    f = bptt.function([x], T.tanh(x) * 2, compile_in_background=True, name="doomed")
    assert f._pending.wait(timeout=300)
    with pytest.warns(RuntimeWarning, match="(?s)'doomed'.*background failed.*PY mode"):
        got = f(np.array([0.25]))
    assert f.running_mode == "PY" and not f.wait_for_compile(timeout=0)
    np.testing.assert_allclose(got, np.tanh([0.25]) * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # said once
        f(np.array([0.25]))


def test_a_function_compiling_in_the_background_pickles(fresh_cache):
    x, k, _, out, updates = _power_step("pickled")
    f = bptt.function([x], out, updates=updates, compile_in_background=True)
    g = pickle.loads(pickle.dumps(f))
    assert g.wait_for_compile(timeout=300) and f.wait_for_compile(timeout=300)
    np.testing.assert_allclose(g(np.ones(3)), f(np.ones(3)))


def test_it_is_on_by_default_unless_the_environment_turns_it_off():
    import subprocess
    import sys

    code = "from bptt.config import config; print(config.compile_in_background)"
    env = {k: v for k, v in os.environ.items() if k != "BPTT_COMPILE_IN_BACKGROUND"}
    on = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    off = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(env, BPTT_COMPILE_IN_BACKGROUND="0"))
    assert (on.stdout.strip(), off.stdout.strip()) == ("True", "False")


def _refusing_to_pickle(monkeypatch):
    from bptt.compile.function import Function

    real = Function._pickle_state
    monkeypatch.setattr(Function, "_pickle_state",
                        lambda self: dict(real(self), hook=lambda: "a lambda"))


def test_a_graph_that_does_not_pickle_compiles_after_its_first_call(fresh_cache, monkeypatch):
    _refusing_to_pickle(monkeypatch)
    x = T.vector("x")
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # the first result as in PY mode, unwarned
        f = bptt.function([x], T.exp(x) + 11, compile_in_background=True, name="unpicklable")
        np.testing.assert_allclose(f(np.zeros(2)), [12.0, 12.0])
    assert f._pending.wait(timeout=60)          # pickling failed: no child ran
    with pytest.warns(RuntimeWarning, match="(?s)'unpicklable'.*not in the background.*pickle"):
        np.testing.assert_allclose(f(np.ones(2)), np.exp(1.0) + 11)
    assert f.running_mode == "NUMBA" and f._pending is None and f._rewritten


def _soon(condition, seconds=20):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


class _Recorder:
    """Wraps `CompileJob._write_payload` (the pickling, the first of the queue's deferred
    work) to record how many functions the queue has handed on."""

    def __init__(self, monkeypatch):
        self.count = 0
        real = background.CompileJob._write_payload

        def write(job):
            self.count += 1
            return real(job)
        monkeypatch.setattr(background.CompileJob, "_write_payload", write)


def test_the_child_gets_the_function_after_its_first_call_returned(fresh_cache, monkeypatch):
    # a call longer than DEFER_LIMIT: the queue waits for it to return all the same
    monkeypatch.setattr(background, "DEFER_LIMIT", 0.2)
    handed = _Recorder(monkeypatch)
    x = T.vector("x")
    f = bptt.function([x], T.exp(x) * 17, compile_in_background=True)
    during = []
    real = f._run

    def first_call(args):
        time.sleep(1.0)
        during.append(handed.count)
        return real(args)
    f._run = first_call
    np.testing.assert_allclose(f(np.zeros(2)), [17.0, 17.0])
    assert f.running_mode == "PY" and during == [0]
    assert f.wait_for_compile(timeout=300) and handed.count == 1


def test_a_function_not_called_is_handed_on_after_the_limit(fresh_cache, monkeypatch):
    monkeypatch.setattr(background, "DEFER_LIMIT", 0.2)
    handed = _Recorder(monkeypatch)
    x = T.vector("x")
    f = bptt.function([x], T.exp(x) * 19, compile_in_background=True)
    assert _soon(lambda: handed.count == 1)     # without a call or a wait
    assert f.wait_for_compile(timeout=300)


def test_waiting_for_the_compile_hands_the_function_on_at_once(fresh_cache, monkeypatch):
    monkeypatch.setattr(background, "DEFER_LIMIT", 3600.0)
    handed = _Recorder(monkeypatch)
    x = T.vector("x")
    f = bptt.function([x], T.exp(x) * 23, compile_in_background=True)
    time.sleep(0.5)
    assert handed.count == 0
    assert not f.wait_for_compile(timeout=0)    # asks for it, does not wait
    assert _soon(lambda: handed.count == 1)
    assert f.wait_for_compile(timeout=300)
    np.testing.assert_allclose(f(np.zeros(2)), [23.0, 23.0])


def test_a_failure_in_the_deferred_part_leaves_py_mode_with_one_warning(fresh_cache,
                                                                         monkeypatch):
    def full_disk(*_, **__):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(background.tempfile, "mkstemp", full_disk)
    x = T.vector("x")
    f = bptt.function([x], T.exp(x) * 29, compile_in_background=True, name="no-space")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f(np.zeros(2))
    assert f._pending.wait(timeout=60)
    with pytest.warns(RuntimeWarning, match="(?s)'no-space'.*background failed.*No space"):
        f(np.zeros(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # said once
        np.testing.assert_allclose(f(np.zeros(2)), [29.0, 29.0])
    assert f.running_mode == "PY"


def test_a_child_that_names_the_graph_otherwise_fails(fresh_cache, monkeypatch):
    # the record the child writes must be the one the parent looks up
    real = background.submit
    monkeypatch.setattr(background, "submit", lambda label, key, state: real(label, "0" * 32,
                                                                             state))
    x = T.vector("x")
    f = bptt.function([x], T.exp(x) * 31, compile_in_background=True, name="misnamed")
    with pytest.warns(RuntimeWarning, match="(?s)background failed.*not the one the parent"):
        assert not f.wait_for_compile(timeout=300)
    assert f.running_mode == "PY"


def test_a_function_queued_behind_a_running_child_waits_for_its_core(fresh_cache, monkeypatch):
    # the running child is busy on one core: the busy measure sees no free core,
    # but that core is the queue's, so the next function queues instead of compiling here
    monkeypatch.setattr(background, "free_cores", lambda: 0.0)

    class Running:
        def poll(self):
            return None

    monkeypatch.setitem(background._state, "running", Running())
    assert background.own_child_cores() == 1
    x = T.vector("x")
    f = bptt.function([x], T.exp(x) * 13, compile_in_background=True)
    assert f.running_mode == "PY" and f._pending is not None
    monkeypatch.setitem(background._state, "running", None)
    assert background.own_child_cores() == 0
    assert f.wait_for_compile(timeout=300)


def test_a_forked_child_starts_with_an_empty_queue(monkeypatch):
    monkeypatch.setitem(background._state, "worker", object())
    monkeypatch.setitem(background._state, "running", object())
    old_queue = background._jobs
    background._forget_parent_queue()
    try:
        assert background._state["worker"] is None and background._state["running"] is None
        assert background._jobs is not old_queue and background._jobs.empty()
    finally:
        background._jobs = old_queue


def _run_script(code, cache, timeout=120):
    """Run `code` in a fresh interpreter with the background path on and `cache` as its
    disk cache; its stdout's words (the run must succeed)."""
    import subprocess
    import sys

    env = dict(os.environ, BPTT_CACHE_DIR=str(cache), BPTT_CHECK_IR="0",
               BPTT_COMPILE_IN_BACKGROUND="1")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split()


def test_the_first_result_comes_without_importing_numba_or_llvmlite(tmp_path):
    # PY mode never imports numba; naming the graph for the cache must not either,
    # or the background path's first result would wait for numba's import
    code = """if True:
        import sys
        import numpy as np
        import bptt
        import bptt.tensor as T
        from bptt.compile import background
        background.free_cores = lambda: 1.0
        x = T.vector("x")
        ys, _ = bptt.scan(lambda a, h: T.tanh(a + h), sequences=[x], outputs_info=[T.zeros(())])
        f = bptt.function([x], bptt.grad(ys.sum(), x))
        f(np.ones(3))
        print(f.running_mode, "numba" in sys.modules, "llvmlite" in sys.modules)
    """
    assert _run_script(code, tmp_path / "cache", timeout=600) == ["PY", "False", "False"]


def test_a_forked_process_runs_the_parents_functions_in_py_mode(fresh_cache, monkeypatch):
    # the queue is the parent's: a call in the fork (which makes the parent's job due in
    # the fork's copy only) starts no child, and the parent's compile goes on
    monkeypatch.setattr(background, "DEFER_LIMIT", 3600.0)
    handed = _Recorder(monkeypatch)
    x = T.vector("x")
    f = bptt.function([x], T.exp(x) * 37, compile_in_background=True)
    pid = os.fork()
    if pid == 0:
        try:
            ok = np.allclose(f(np.zeros(2)), 37.0) and f.running_mode == "PY"
            time.sleep(0.5)
            ok = ok and handed.count == 0 and background._state["worker"] is None
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert handed.count == 0
    assert f.wait_for_compile(timeout=300)


def test_exit_drops_a_function_not_handed_on_yet(tmp_path):
    # built, never called, the process exits long before the limit: the queue's thread,
    # waiting for the function to be due, does not hold the exit back, and no child ran
    code = """if True:
        import bptt
        import bptt.tensor as T
        from bptt.compile import background
        background.free_cores = lambda: 1.0
        background.DEFER_LIMIT = 3600.0
        x = T.vector("x")
        f = bptt.function([x], T.exp(x) * 41)
        print(f.running_mode)
    """
    cache = tmp_path / "cache"
    assert _run_script(code, cache) == ["PY"]
    assert not (cache / "graphs").exists() or not any((cache / "graphs").iterdir())


def _compiling_children(cache):
    """The pids of compiling children whose disk cache is `cache`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read()
            with open(f"/proc/{pid}/environ", "rb") as fh:
                env = fh.read().split(b"\0")
        except OSError:
            continue
        if b"bptt.compile.background" in cmd and f"BPTT_CACHE_DIR={cache}".encode() in env:
            found.append(int(pid))
    return found


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads /proc")
def test_exit_after_the_first_call_stops_the_child(tmp_path):
    # the child starts once the first call has returned, as the script exits
    code = """if True:
        import numpy as np
        import bptt
        import bptt.tensor as T
        from bptt.compile import background
        background.free_cores = lambda: 1.0
        x = T.vector("x")
        f = bptt.function([x], T.exp(x) * 43)
        import time
        f(np.zeros(2))
        while background._state["running"] is None and not f._pending.done.is_set():
            time.sleep(0.01)          # until the child runs
        print(f.running_mode, background._state["running"] is not None)
    """
    cache = tmp_path / "cache"
    assert _run_script(code, cache) == ["PY", "True"]
    assert _soon(lambda: not _compiling_children(cache), seconds=1)   # stopped, not done
