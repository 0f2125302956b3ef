"""Shared fixtures: both execution modes, hypothesis profiles, a private cache dir."""
import atexit
import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings

# A private on-disk cache per test session: tests never read a stale user cache. pytest-xdist
# workers inherit the variable, so they share the dir (the cache is safe for concurrent
# processes) and one worker's compiled code serves the other. The process that made the dir
# (the controller, or the only process) removes it at exit, after its workers.
if "BPTT_CACHE_DIR" not in os.environ:
    os.environ["BPTT_CACHE_DIR"] = tempfile.mkdtemp(prefix="bptt-test-cache-")
    atexit.register(shutil.rmtree, os.environ["BPTT_CACHE_DIR"], ignore_errors=True)
# Check the IR after every rewrite pass and every grad (bptt.graph.verify).
os.environ.setdefault("BPTT_CHECK_IR", "1")
# NUMBA-mode tests test the compiled code: compile in `bptt.function`
# (tests/compile/test_background.py turns the background path on where it tests it).
os.environ.setdefault("BPTT_COMPILE_IN_BACKGROUND", "0")

# `mode` is a constant string, so sharing it between hypothesis examples is safe.
settings.register_profile(
    "ci", derandomize=True, max_examples=25, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.function_scoped_fixture])
settings.register_profile(
    "dev", max_examples=300, deadline=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

MODES = ["PY", "NUMBA"]


@pytest.fixture(params=MODES)
def mode(request):
    """Run the test once per execution mode."""
    return request.param
