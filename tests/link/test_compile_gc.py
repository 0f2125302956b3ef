"""numba compiles with Python's cyclic garbage collector paused (runtime.collector_paused)."""
import gc

import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.link.numba.runtime import collector_paused


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_inside_restored_after_also_on_error(collector_on):
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError), collector_paused():
        1 / 0
    assert gc.isenabled()


def test_a_collector_already_off_stays_off(collector_on):
    gc.disable()
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_the_linker_compiles_with_the_collector_paused(collector_on, monkeypatch):
    paused = []
    disable = gc.disable
    monkeypatch.setattr(gc, "disable", lambda: (paused.append(True), disable())[1])
    x = T.vector("x")
    f = bptt.function([x], x * 3 + 1, mode="NUMBA")
    assert paused and gc.isenabled()
    np.testing.assert_allclose(f(np.arange(3.0)), [1.0, 4.0, 7.0])
