"""``theano.tensor.nnet``: bptt's `bptt.tensor.nnet`, with Theano 1.0's softmax.

Theano's softmax worked on rows: the softmax of a vector was a (1, n) row
(code indexes it as ``s[:, 0, :]`` after a scan), and of a matrix the
softmax of each row. `softmax` does the same; bptt's own
`bptt.tensor.nnet.softmax` keeps the vector's shape.

`relu` of a NumPy array is a NumPy array, as Theano's (written with Python's
``abs``, which an array answers itself).

`conv2d` is bptt's (`bptt.tensor.conv`) under Theano 1.0's signature (also in
``abstract_conv``, where Theano kept it); the submodule ``conv`` holds the older
``conv.conv2d``.
"""
import numpy as _np

import bptt.tensor.nnet as _nnet
from bptt.tensor.conv import conv2d as _conv2d
from bptt.tensor.nnet import (binary_crossentropy as binary_crossentropy,
                              categorical_crossentropy as categorical_crossentropy,
                              hard_sigmoid as hard_sigmoid, log_softmax as _log_softmax,
                              relu as _relu, sigmoid as sigmoid, softplus as softplus,
                              ultra_fast_sigmoid as ultra_fast_sigmoid)
from bptt.graph.basic import Variable as _Variable
from bptt.tensor.type import as_tensor_variable


def relu(x, alpha=0):
    """max(x, 0), or max(x, alpha * x) for 0 < alpha < 1. Of a NumPy array (or a
    number) the value itself, as Theano's: Lasagne's tests compute their expected
    values with ``rectify(array)``. A symbolic `alpha` makes it symbolic."""
    if isinstance(x, _Variable) or isinstance(alpha, _Variable):
        return _relu(x, alpha)
    x = _np.asarray(x)
    return _np.maximum(x, x * alpha) if alpha else _np.maximum(x, 0)


def softmax(x, axis=None):
    """Softmax of each row; a vector is one row, and its softmax a (1, n) row.

    With an explicit `axis` this is bptt's softmax along that axis.
    """
    x = as_tensor_variable(x)
    if axis is not None:
        return _nnet.softmax(x, axis=axis)
    if x.ndim == 1:
        x = x.dimshuffle("x", 0)
    return _nnet.softmax(x, axis=-1)


softmax_graph = softmax
softmax_op = softmax


def logsoftmax(x, axis=None):
    """log(softmax(x)), rows as `softmax`."""
    x = as_tensor_variable(x)
    if axis is None and x.ndim == 1:
        x = x.dimshuffle("x", 0)
    return _log_softmax(x, axis=-1 if axis is None else axis)


def crossentropy_categorical_1hot(coding_dist, true_idx):
    """``-log(coding_dist[i, true_idx[i]])`` for each row i."""
    return categorical_crossentropy(coding_dist, true_idx)


def conv2d(input, filters, input_shape=None, filter_shape=None, border_mode="valid",
           subsample=(1, 1), filter_flip=True, image_shape=None, filter_dilation=(1, 1),
           num_groups=1, unshared=False):
    """Theano 1.0's ``conv2d``: `bptt.tensor.conv.conv2d`, `image_shape` being the old
    name of `input_shape`; grouped and unshared convolutions are not provided."""
    if num_groups != 1 or unshared:
        raise NotImplementedError(f"conv2d: num_groups={num_groups!r} and unshared="
                                  f"{unshared!r} are not provided by bptt (only num_groups=1, "
                                  "unshared=False)")
    if image_shape is not None:
        if input_shape is not None:
            raise ValueError("conv2d: give input_shape= only (image_shape= is its old name)")
        input_shape = image_shape
    return _conv2d(input, filters, input_shape, filter_shape, border_mode, subsample,
                   filter_flip, filter_dilation)


from . import abstract_conv as abstract_conv, conv as conv  # noqa: E402  (they import its names)
