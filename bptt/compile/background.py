"""Compiling in the background: a function runs in PY mode until its machine code is ready.

numba needs tens of CPU seconds for a training graph that PY mode starts in
one. With ``compile_in_background`` (on by default: ``bptt.config``, or the
`bptt.function` argument), a NUMBA function that is not in the disk cache is
rewritten and linked in PY mode at once, and a child process compiles it in
NUMBA mode into the disk cache. The function's first call runs as soon as PY
mode could run it. The first call after the child has finished loads the
compiled code from the cache and every later call runs it.

Why a process and not a thread: numba's compiler holds the GIL for most of
its work, so a compiling thread would slow the PY calls it is meant to hide;
a process uses the other core. The child gets the function the way
`pickle` does (its graph, mode and shared values) and this process's
``config``, so it builds the same graph key and the record it writes is the
one the parent looks up. A graph that does not pickle compiles in
`bptt.function`, with a warning.

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
import warnings

from ..config import config

#: config attributes the child must not take from the parent
_NOT_INHERITED = ("compile_in_background",)
_jobs = queue.Queue()
_state = {"worker": None, "running": None, "closing": False}
_lock = threading.Lock()
#: held while a function switches to its compiled code
adoption_lock = threading.Lock()


class CompileJob:
    """One function's compile in a child process; `done` is set when the child exits."""

    def __init__(self, label, payload):
        self.label = label
        self.done = threading.Event()
        self.ok = False
        self.error = ""
        fd, self.path = tempfile.mkstemp(prefix="bptt-compile-", suffix=".pkl")
        with os.fdopen(fd, "wb") as fh:
            fh.write(payload)

    def wait(self, timeout=None):
        """Wait until the child has exited; whether it has."""
        return self.done.wait(timeout)

    def _run(self):
        try:
            if _state["closing"]:
                self.error = "the process was exiting"
                return
            proc = subprocess.Popen([sys.executable, "-m", "bptt.compile.background", self.path],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, env=_child_environment())
            _state["running"] = proc
            _, err = proc.communicate()
            self.ok = proc.returncode == 0
            if not self.ok:
                text = err.decode("utf-8", "replace").strip().splitlines()
                self.error = (f"exit status {proc.returncode}"
                              + (": " + "\n".join(text[-12:]) if text else ""))
        except OSError as exc:
            self.error = f"could not start the compiling process: {exc}"
        finally:
            _state["running"] = None
            try:
                os.unlink(self.path)
            except OSError:
                pass
            self.done.set()


def submit(label, function_state):
    """Queue the NUMBA compile of a function given by its pickling state; the `CompileJob`."""
    settings = {k: v for k, v in vars(config).items() if k not in _NOT_INHERITED}
    state = pickle.dumps(function_state, pickle.HIGHEST_PROTOCOL)   # raises if it cannot
    job = CompileJob(label, pickle.dumps((settings, state), pickle.HIGHEST_PROTOCOL))
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
        _jobs.get()._run()


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
    from ..link import blas_threads

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
        settings, state = pickle.load(fh)
    for name, value in settings.items():   # before the graph is unpickled and built
        setattr(config, name, value)
    config.compile_in_background = False
    from .function import Function, _unpickle_function

    function_state = pickle.loads(state)
    function_state["compile_in_background"] = False
    _unpickle_function(Function, function_state)
    return 0


if __name__ == "__main__":
    sys.exit(_child_main(sys.argv[1]))
