"""glibc malloc tuning (link/numba/allocator.py): large arrays are reused, not faulted in again."""
import os
import platform
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_RUN = """
import resource, numpy as np, bptt, bptt.tensor as T
from bptt.link.numba.allocator import tune_malloc
x = T.vector("x")
# four 16 MB results, freed after every call: 64 MB leave the top of the heap at once
f = bptt.function([x], [T.exp(x), T.sin(x), T.cos(x), T.tanh(x)], mode="NUMBA")
v = np.ones(2 ** 21)
f(v); f(v)
r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    out = f(v)
    del out
faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0) / 5
print(tune_malloc(), faults)
"""


def _faults(tuning):
    env = dict(os.environ, BPTT_MALLOC_TUNING=tuning, PYTHONPATH=REPO)
    out = subprocess.run([sys.executable, "-c", _RUN], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    tuned, faults = out.stdout.split()
    return tuned == "True", float(faults)


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
                    reason="the tuning applies to glibc's malloc only")
def test_large_arrays_freed_by_a_call_are_reused_by_the_next_without_page_faults():
    tuned, faults = _faults("1")
    assert tuned
    # 64 MB is 16384 pages: with glibc's defaults each call maps them afresh
    default, default_faults = _faults("0")
    assert not default
    assert default_faults > 10000
    assert faults < 100


def test_the_tuning_is_off_when_configured_off(monkeypatch):
    from bptt.config import config
    from bptt.link.numba import allocator

    monkeypatch.setattr(config, "malloc_tuning", False)
    monkeypatch.setattr(allocator, "_state", {"done": False, "tuned": False})
    assert allocator.tune_malloc() is False
