"""A pytest plugin that runs Lasagne's test files on bptt.compat.theano.

Load it after `theano_tests_plugin` (which calls `install()`), with
``--noconftest`` and ``-o addopts=``: Lasagne's ``setup.cfg`` asks for
coverage and pep8 plugins, and its conftest files use a pytest hook
argument (``path``) newer pytest refuses. This plugin gives what they gave:
the ``dummy_input_layer`` fixture and ``--runslow``. It also

- registers ``mock`` as `unittest.mock` (Lasagne's tests import the
  ``mock`` package);
- removes the test suite's ``theano.gpuarray`` stand-in, so Lasagne's GPU
  probes fail to import and its cuDNN tests skip, as on a CPU-only Theano;
- gives ``theano.tensor.signal.pool`` and ``T.nnet.conv2d`` stand-ins that
  raise NotImplementedError where bptt does not provide them yet:
  ``lasagne.layers`` reads them when it is imported.
"""
from __future__ import annotations

import importlib
import sys
import types
import unittest.mock

import pytest

sys.modules.setdefault("mock", unittest.mock)

import theano  # noqa: E402  (bptt.compat.theano, installed by theano_tests_plugin)
import theano.tensor as T  # noqa: E402


def _not_provided(name):
    def call(*args, **kwargs):
        raise NotImplementedError(f"{name} is not provided by bptt.compat.theano yet")

    call.__name__ = name.rsplit(".", 1)[-1]
    return call


def _stand_ins():
    try:
        importlib.import_module("theano.tensor.signal.pool")
    except ImportError:
        pool = types.ModuleType("theano.tensor.signal.pool")
        pool.pool_2d = _not_provided("theano.tensor.signal.pool.pool_2d")
        signal = types.ModuleType("theano.tensor.signal")
        signal.pool = pool
        sys.modules.update({"theano.tensor.signal": signal, "theano.tensor.signal.pool": pool})
        T.signal = signal
    if not hasattr(T.nnet, "conv2d"):
        T.nnet.conv2d = _not_provided("theano.tensor.nnet.conv2d")
    if not hasattr(T.nnet, "abstract_conv"):
        T.nnet.abstract_conv = types.ModuleType("theano.tensor.nnet.abstract_conv")
    if hasattr(theano, "gpuarray") and not hasattr(theano.gpuarray, "dnn"):
        del theano.gpuarray
        sys.modules.pop("theano.gpuarray", None)


_stand_ins()


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
