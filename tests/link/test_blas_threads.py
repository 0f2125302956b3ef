"""The BLAS threads rule (`bptt.link.blas_threads`): which products get more than one thread,
the override, and that compiled code applies the rule and gives the same values either way."""
from __future__ import annotations

import numpy as np
import pytest

import bptt
import bptt.link.numba.runtime  # noqa: F401  (loads blas)
from bptt.link import blas_threads as bt
from bptt.link.numba import blas

pytestmark = pytest.mark.skipif(blas._THREADS is None,
                                reason="bptt controls the threads of NumPy's OpenBLAS only")


@pytest.fixture
def idle(monkeypatch):
    """The rule as on an idle machine of 2 cores with OpenBLAS on 2 threads."""
    have = bt.get_threads()
    bt.set_threads(2)
    monkeypatch.setattr(bt._load, "cores", 2)
    monkeypatch.setattr(bt._load, "others", 0.0)
    monkeypatch.setattr(bt._load, "due", float("inf"))   # no new sample during the test
    monkeypatch.setattr(bptt.config, "blas_threads", 0)
    bt._write_rule(0)
    yield
    bt.set_threads(have)
    bt._state["forced"] = None   # the next refresh rewrites RULE


def test_small_products_run_on_one_thread_large_ones_on_the_free_cores(idle):
    assert bt.threads_for(32, 512, 128) == 1        # an LSTM step product: 2.1M
    assert bt.threads_for(256, 128, 128) == 1       # just under LARGE
    assert bt.threads_for(64, 512, 512) == 2        # an rnn-large step product: 16.8M
    bt._load.others = 2.0                            # two busy processes
    bt._write_rule(0)
    assert bt.threads_for(64, 512, 512) == 1
    bt._load.others = 0.0
    bt._write_rule(0)
    bt.set_threads(1)                                # OPENBLAS_NUM_THREADS=1, threadpoolctl
    assert bt.threads_for(64, 512, 512) == 1


def test_config_overrides_the_rule_at_the_next_call(idle):
    bptt.config.blas_threads = 3
    bt.refresh()
    assert list(bt.RULE) == [3, 0, 1]
    assert bt.threads_for(1, 1, 1) == 3 and bt.threads_for(64, 512, 512) == 3
    bptt.config.blas_threads = 0
    bt.refresh()
    assert bt.threads_for(1, 1, 1) == 1


def test_compiled_code_applies_the_rule_and_restores_the_count(idle):
    probe = _probe()
    for mnk in (2 ** 21, bt.LARGE - 1, bt.LARGE, 2 ** 30):
        during, after = probe(mnk)
        assert during == bt.threads_for(mnk, 1, 1) and after == 2
    bptt.config.blas_threads = 1
    bt.refresh()
    assert probe(2 ** 30) == (1, 2)


def _probe():
    import numba

    @numba.njit
    def probe(mnk):
        restore = blas._threads_for(mnk)
        during = blas._get_threads()
        if restore > 0:
            blas._set_threads(restore)
        return during, blas._get_threads()

    return probe


def test_products_are_equal_on_one_and_two_threads(idle):
    x, y = bptt.tensor.dmatrix("x"), bptt.tensor.dmatrix("y")
    f = bptt.function([x, y], bptt.tensor.dot(x, y), mode="NUMBA")
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 512)), rng.standard_normal((512, 512))
    results = []
    for n in (1, 2, 0):
        bptt.config.blas_threads = n
        results.append(f(a, b))
        assert bt.get_threads() == 2      # NumPy's setting, as it was
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[0], results[2])
    np.testing.assert_allclose(results[0], a @ b, rtol=1e-12, atol=1e-12)


def test_the_first_measured_interval_replaces_the_load_average(monkeypatch):
    """The load average lags by minutes: a run that just ended must not make an idle
    machine look busy once /proc/stat has been sampled."""
    readings = iter([(100.0, 5.0), (100.0, 5.0), (101.6, 5.0), (101.6, 5.0)])
    monkeypatch.setattr(bt, "_busy_cpu_seconds", lambda: next(readings))
    monkeypatch.setattr(bt.os, "getloadavg", lambda: (6.0, 6.0, 6.0))
    load = bt._Load()
    load.cores = 2
    assert load.others == 2                    # the load average's guess: busy
    load.sample(load.last[0] + 1.0)            # nothing else ran for a second
    assert load.others == 0.0
    load.sample(load.last[0] + 1.0)            # 1.6 cores busy over the next second
    assert load.others == pytest.approx(0.8)   # later samples are averaged


def test_the_first_busy_reading_is_measured_at_once(monkeypatch):
    """A decision soon after import (a background compile) reads a sample, not the load
    average's guess: an idle machine after a run that just ended looks idle."""
    clock = iter([50.0, 50.01, 50.02, 50.3, 50.3])
    monkeypatch.setattr(bt.time, "monotonic", lambda: next(clock))
    slept = []
    monkeypatch.setattr(bt.time, "sleep", slept.append)
    readings = iter([(100.0, 5.0), (100.02, 5.02), (100.3, 5.02)])
    monkeypatch.setattr(bt, "_busy_cpu_seconds", lambda: next(readings))
    monkeypatch.setattr(bt.os, "getloadavg", lambda: (3.0, 3.0, 3.0))
    load = bt._Load()                           # import: the clock reads 50.0
    load.cores = 2
    monkeypatch.setattr(bt, "_load", load)
    assert load.others == 2                     # the guess: busy
    assert bt.others_busy_now() == 0.0          # 10 ms after import: waits, then samples
    assert slept == [pytest.approx(0.04)]
    assert load.measured
    # later calls sample only every min_interval seconds: 0.28 s later, 1 core busy
    assert bt.others_busy_now() == pytest.approx(0.5)
    assert slept == [pytest.approx(0.04)]
