"""A pytest plugin that runs Lasagne's test files on bptt.compat.theano.

Load it after `theano_tests_plugin` (which calls `install()`), with
``--noconftest`` and ``-o addopts=``: Lasagne's ``setup.cfg`` asks for
coverage and pep8 plugins, and its conftest files use a pytest hook
argument (``path``) newer pytest refuses. This plugin gives what they gave:
the ``dummy_input_layer`` fixture and ``--runslow``. It also

- registers ``mock`` as `unittest.mock` (Lasagne's tests import the
  ``mock`` package);
- gives the test suite's ``theano.gpuarray`` stand-in (``pygpu_activated``
  False) a ``dnn`` without cuDNN, so Lasagne's GPU layers refuse to import
  and its cuDNN tests skip, as on a CPU-only Theano.
"""
from __future__ import annotations

import sys
import types
import unittest.mock

import pytest

sys.modules.setdefault("mock", unittest.mock)

import theano  # noqa: E402  (bptt.compat.theano, installed by theano_tests_plugin)


def _without_cudnn():
    if hasattr(theano, "gpuarray") and not hasattr(theano.gpuarray, "dnn"):
        theano.gpuarray.dnn = types.SimpleNamespace(dnn_present=lambda: False)


_without_cudnn()


@pytest.fixture
def dummy_input_layer():
    from lasagne.layers.input import InputLayer

    input_layer = InputLayer((2, 3, 4))
    layer = unittest.mock.Mock(input_layer)
    layer.shape = input_layer.shape
    layer.input_var = input_layer.input_var
    layer.output_shape = input_layer.output_shape
    return layer


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", help="run slow tests")


def pytest_runtest_setup(item):
    if "slow" in item.keywords and not item.config.getoption("--runslow"):
        pytest.skip("need --runslow option to run")
