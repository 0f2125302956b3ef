"""A pytest plugin that runs Theano's own test files on bptt.compat.theano.

Load it with ``pytest -p theano_tests_plugin`` (this directory on ``sys.path``)
and ``--noconftest``. Before anything is collected it calls
`bptt.compat.theano.install()` and registers the small modules Theano's tests
import besides Theano itself:

- ``six`` / ``six.moves`` (``cPickle``, ``xrange``) and ``nose``'s ``SkipTest``,
  ``assert_raises`` and ``raises``: Python 2 era helpers the venv does not have;
- ``numpy.testing.dec.skipif`` (removed from NumPy);
- ``theano.tests.unittest_tools``: Theano's test helpers (seeding, tolerant
  comparison, ``verify_grad``, ``attr``), written here for bptt;
- ``theano.gpuarray`` with ``pygpu_activated = False``, so GPU tests skip.

Each test's outcome is recorded with its exception for
`run_theano_programs.py`'s table (``--theano-report PATH`` writes it as JSON).
"""
from __future__ import annotations

import functools
import json
import pickle
import signal
import sys
import types
import unittest

import numpy as np
import pytest


def _module(name, **attrs):
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules[name] = mod
    return mod


def _raises(*exceptions):
    def decorate(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            try:
                fn(*args, **kwargs)
            except exceptions:
                return
            raise AssertionError(f"{fn.__name__} did not raise {exceptions}")
        return run
    return decorate


def _assert_raises(exc, fn=None, *args, **kwargs):
    if fn is None:
        return unittest.TestCase().assertRaises(exc)
    try:
        fn(*args, **kwargs)
    except exc:
        return
    raise AssertionError(f"{fn} did not raise {exc}")


def _skipif(condition, msg=""):
    def decorate(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            if condition:
                raise unittest.SkipTest(msg)
            return fn(*args, **kwargs)
        return run
    return decorate


def _install_helpers():
    moves = _module("six.moves", cPickle=pickle, xrange=range, reduce=functools.reduce)
    _module("six", moves=moves, PY3=True, string_types=(str,), integer_types=(int,),
            iteritems=lambda d: iter(d.items()))
    sys.modules["six.moves.cPickle"] = pickle
    tools = _module("nose.tools", assert_raises=_assert_raises, raises=_raises)
    skip = _module("nose.plugins.skip", SkipTest=unittest.SkipTest)
    plugins = _module("nose.plugins", skip=skip)
    _module("nose", tools=tools, plugins=plugins, SkipTest=unittest.SkipTest)
    import numpy.testing

    numpy.testing.dec = _module("numpy.testing.dec", skipif=_skipif)

    import bptt.compat.theano as theano

    theano.install()
    import unittest_tools

    tests = _module("theano.tests", unittest_tools=unittest_tools)
    sys.modules["theano.tests.unittest_tools"] = unittest_tools
    theano.tests = tests
    gpu_config = _module("theano.gpuarray.tests.config")
    gpu_tests = _module("theano.gpuarray.tests", config=gpu_config)
    theano.gpuarray = _module("theano.gpuarray", pygpu_activated=False, tests=gpu_tests)


_install_helpers()

_outcomes = {}


def pytest_addoption(parser):
    parser.addoption("--theano-report", default=None,
                     help="write each test's outcome and exception as JSON to this path")
    parser.addoption("--theano-timeout", type=int, default=0,
                     help="fail a test that runs longer than this many seconds (0: no limit)")


class TestTimeout(Exception):
    """A test ran past ``--theano-timeout``."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    limit = item.config.getoption("--theano-timeout")
    if not limit:
        yield
        return

    def expire(signum, frame):
        raise TestTimeout(f"the test ran longer than {limit} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(limit)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def pytest_runtest_logreport(report):
    if report.when == "call" or report.outcome != "passed":
        if report.nodeid in _outcomes and _outcomes[report.nodeid]["outcome"] != "passed":
            return
        entry = {"outcome": report.outcome, "when": report.when, "error": ""}
        if report.outcome == "skipped" and isinstance(report.longrepr, tuple):
            entry["error"] = str(report.longrepr[2])
        elif report.outcome == "failed":
            crash = getattr(report.longrepr, "reprcrash", None)
            entry["error"] = crash.message if crash is not None else str(report.longrepr)[-2000:]
            entry["traceback"] = str(report.longrepr)[-6000:]
        _outcomes[report.nodeid] = entry


def pytest_sessionfinish(session):
    path = session.config.getoption("--theano-report")
    if path:
        with open(path, "w") as f:
            json.dump(_outcomes, f, indent=1)

