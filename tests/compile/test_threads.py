"""Calls from several threads: no update is lost; functions without updates run in parallel."""
import threading

import numpy as np

import bptt
import bptt.tensor as T


def _in_threads(fn, n_threads=4):
    threads = [threading.Thread(target=fn) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_four_threads_lose_no_update(mode):
    cnt = bptt.shared(np.asarray(0.0), name="cnt")
    v = T.vector("v")
    # Enough work per call that, without a lock, the threads interleave (numba drops the GIL).
    f = bptt.function([v], (v * 2.0).sum(), updates={cnt: cnt + 1.0}, mode=mode)
    g = bptt.function([], [], updates={cnt: cnt + 1000.0}, mode=mode)   # same variable
    x = np.ones(100_000)

    def work():
        for k in range(200):
            f(x)
            if k % 50 == 0:
                g()

    _in_threads(work)
    assert cnt.get_value() == 800 + 4 * 4 * 1000


def test_functions_with_overlapping_updates_do_not_deadlock(mode):
    a, b = bptt.shared(np.asarray(0.0), name="a"), bptt.shared(np.asarray(0.0), name="b")
    f = bptt.function([], [], updates={a: a + 1.0, b: b + 1.0}, mode=mode)
    g = bptt.function([], [], updates=[(b, b + 2.0), (a, a + 2.0)], mode=mode)

    def work():
        for _ in range(100):
            f()
            g()

    _in_threads(work)
    assert a.get_value() == b.get_value() == 4 * 100 * 3


def test_a_function_without_updates_takes_no_lock():
    cnt = bptt.shared(np.asarray(0.0), name="cnt")
    f = bptt.function([], cnt * 2.0, mode="PY")
    assert "with " not in f.glue
    h = bptt.function([], [], updates={cnt: cnt + 1.0}, mode="PY")
    assert "with l0:" in h.glue
    with cnt.container.lock:   # held elsewhere: a reader is not blocked
        assert f() == 0.0
