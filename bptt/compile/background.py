"""Compiling in the background: a function runs in PY mode until its machine code is ready.

numba needs tens of CPU seconds for a training graph that PY mode starts in
one. With ``compile_in_background`` (on by default: ``bptt.config``, or the
`bptt.function` argument), a NUMBA function that is not in the disk cache is
rewritten and linked in PY mode at once, and a child process compiles it in
NUMBA mode into the disk cache. The first call after the child has finished
loads the compiled code from the cache and every later call runs it.

The first result as soon as PY mode's: before the first call, `bptt.function`
does only what PY mode does and what deciding between the two paths needs
(naming the graph, `graph_key`, without importing numba or llvmlite, and
looking the name up in the cache). Handing the function to the child
(pickling it, writing it to a file, starting the child's interpreter) is the
queue's work, done when the function's first call has returned (or
`Function.wait_for_compile` asks for it, or `DEFER_LIMIT` seconds after
`bptt.function` if no call has started by then), so that neither the pickling
nor the child's start competes with the first call for the GIL or a core.

Why a process and not a thread: numba's compiler holds the GIL for most of
its work, so a compiling thread would slow the PY calls it is meant to hide;
a process uses the other core. The child gets the function the way
`pickle` does (its graph, mode and shared values), the ``config`` this process
had in `bptt.function` and the graph key it computed there; it builds the
same key (it exits with an error if not), so the record it writes is the one
the parent looks up. A graph that does not pickle compiles in the main thread
at its next call, with a warning.

One child runs at a time (a queue, served by a daemon thread that waits for
each child): three functions of a training script compile one after the
other on one core, while the script's calls use the other. At exit, the
running child is stopped and the queued ones are dropped. A forked process
starts with an empty queue of its own.

When it is used: only when a core is idle for the child (`free_cores`,
measured from the machine's busy CPU time as the BLAS threads rule measures
it, the running child's core counted as the queue's). On a machine whose
cores are busy the PY calls and the child would share one core, and a
training run would reach its 1,000th step later than with the compile in
`bptt.function` (benchmarks/background_compile.py measures both; figures in
benchmarks/notes.md); there `bptt.function` compiles at once.

What it changes: the values of the first calls are PY mode's, those of the
later calls NUMBA mode's. They agree to rounding (the test suite checks both
modes against each other), not bit for bit; random draws are the same in
both modes. A failed child leaves the function in PY mode and says so once.
"""
from __future__ import annotations

import atexit
import os
import pickle
import queue
import subprocess
import sys
import tempfile
import threading
import time
import warnings

from ..config import config
# Imported with bptt, not at the first decision: the BLAS rule's load measure then
# starts at import, so the first decision reads a sample without waiting for one.
from ..link import blas_threads

#: config attributes the child must not take from the parent
_NOT_INHERITED = ("compile_in_background",)
_jobs = queue.Queue()
_state = {"worker": None, "running": None, "closing": False}
_lock = threading.Lock()
#: held while a function switches to its compiled code
adoption_lock = threading.Lock()


#: seconds after `bptt.function` from which the queue hands a function that no call
#: has reached to its child (a function built long before its first call compiles
#: meanwhile; one whose first call runs waits for that call to return)
DEFER_LIMIT = 1.0


class CompileJob:
    """One function's compile in a child process.

    `due` is set when the function's first call has returned (or someone waits
    for the compile); `calling` when a call has started; `done` when the child
    has exited. `unpicklable` holds the reason the function could not be
    handed to a child, if it could not (then no child ran).
    """

    def __init__(self, label, key, function_state):
        self.label, self.key, self.state = label, key, function_state
        self.settings = {k: v for k, v in vars(config).items() if k not in _NOT_INHERITED}
        self.queued = time.monotonic()
        self.due, self.done = threading.Event(), threading.Event()
        self.calling = self.ok = False
        self.error = self.unpicklable = ""

    def wait(self, timeout=None):
        """Wait until the child has exited; whether it has."""
        return self.done.wait(timeout)

    def _wait_until_due(self):
        if not self.due.wait(max(0.0, self.queued + DEFER_LIMIT - time.monotonic())):
            if self.calling:   # the first call runs: start the child once it has returned
                self.due.wait()

    def _run(self):
        path = None
        try:
            if _state["closing"]:
                self.error = "the process was exiting"
                return
            path = self._write_payload()
            if path is not None:
                self._run_child(path)
        except OSError as exc:
            self.error = f"could not start the compiling process: {exc}"
        except Exception as exc:  # noqa: BLE001  (the queue's thread serves the next job)
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            _state["running"] = None
            if path is not None:
                try:
                    os.unlink(path)
                except OSError:
                    pass
            self.state = None
            self.done.set()

    def _write_payload(self):
        """The child's input as a temporary file's path; None if the function does not pickle."""
        try:
            state = pickle.dumps(self.state, pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001  (any object of the graph may refuse)
            self.unpicklable = f"{type(exc).__name__}: {exc}"
            return None
        fd, path = tempfile.mkstemp(prefix="bptt-compile-", suffix=".pkl")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump((self.settings, self.key, state), fh, pickle.HIGHEST_PROTOCOL)
        return path

    def _run_child(self, path):
        proc = subprocess.Popen([sys.executable, "-m", "bptt.compile.background", path],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, env=_child_environment())
        _state["running"] = proc
        if _state["closing"]:   # the process began to exit while the child started
            proc.terminate()
        _, err = proc.communicate()
        self.ok = proc.returncode == 0
        if not self.ok:
            text = err.decode("utf-8", "replace").strip().splitlines()
            self.error = (f"exit status {proc.returncode}"
                          + (": " + "\n".join(text[-12:]) if text else ""))


def submit(label, key, function_state):
    """Queue the NUMBA compile of a function given by its graph key and pickling state
    (pickled when the job is due); the `CompileJob`. This process's config is taken now."""
    job = CompileJob(label, key, function_state)
    with _lock:
        if _state["worker"] is None:
            _state["worker"] = threading.Thread(target=_serve, name="bptt-background-compile",
                                                daemon=True)
            _state["worker"].start()
            atexit.register(_close)
    _jobs.put(job)
    return job


def _serve():
    while True:
        job = _jobs.get()
        job._wait_until_due()
        job._run()


def _close():
    """At exit: drop the queued jobs and stop the running child."""
    _state["closing"] = True
    proc = _state["running"]
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()


def _child_environment():
    env = dict(os.environ)
    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH")) if p)
    env["BPTT_COMPILE_IN_BACKGROUND"] = "0"
    return env


def usable(key):
    """Whether a function with graph-memo key `key` is compiled in the background: a
    key exists (NUMBA mode, no IR checks or source dumps), the disk cache is on (the
    child hands its result over through it) and a core is free for the child."""
    if key is None:
        return False
    from ..link.numba.cache import disk_cache_enabled

    return disk_cache_enabled() and free_cores() + own_child_cores() >= MIN_FREE_CORES


#: idle cores (besides this process's own) the child needs. Without one, the PY calls
#: and the child share a core: the compile takes longer than in `bptt.function` and the
#: PY calls do less per CPU second than the compiled code would
MIN_FREE_CORES = 0.75


def free_cores():
    """Cores neither this process nor the others keep busy (the BLAS threads rule's
    measure of the machine's busy CPU time)."""
    return blas_threads.machine_cores() - blas_threads.others_busy_now() - 1


def own_child_cores():
    """The core this process's compiling child keeps busy (1 while one runs, else 0).
    The queue already has that core: a function queued behind the running child needs
    no other, and the busy measure counts the child as another process's load."""
    proc = _state["running"]
    return 1 if proc is not None and proc.poll() is None else 0


def _forget_parent_queue():
    """In a forked child: the worker thread and the compiling child are the parent's."""
    global _jobs, _lock, adoption_lock
    _jobs, _lock, adoption_lock = queue.Queue(), threading.Lock(), threading.Lock()
    _state.update(worker=None, running=None, closing=False)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_parent_queue)


def say_failed(label, job):
    warnings.warn(f"{label}: compiling in the background failed ({job.error}); it keeps "
                  "running in PY mode. Pass compile_in_background=False to compile it in "
                  "bptt.function and see the error there", RuntimeWarning, stacklevel=5)


def _child_main(path):
    with open(path, "rb") as fh:
        settings, key, state = pickle.load(fh)
    for name, value in settings.items():   # before the graph is unpickled and built
        setattr(config, name, value)
    config.compile_in_background = False
    from .function import Function, _unpickle_function

    function_state = pickle.loads(state)
    function_state["compile_in_background"] = False
    built = _unpickle_function(Function, function_state)
    if built._key != key:
        sys.stderr.write(f"the compiling process named the graph {built._key}, the parent "
                         f"{key}: its record is not the one the parent looks up\n")
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1]))
