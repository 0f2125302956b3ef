"""``theano.tensor.nnet.abstract_conv``: `conv2d`, under the module Theano kept it in.

Theano's op classes (``AbstractConv2d``, ``AbstractConv2d_gradInputs``, ...)
are not provided; code that probes for them (``hasattr``) finds none, as on
a Theano without them.
"""
from . import conv2d as conv2d  # noqa: F401
