"""``theano.tensor.nnet.conv``: the older ``conv2d`` signature (LeNet's tutorial era)."""
from bptt.tensor.conv import conv2d as _conv2d


def conv2d(input, filters, image_shape=None, filter_shape=None, border_mode="valid",
           subsample=(1, 1), **kwargs):
    """True convolution of a (batch, channels, rows, cols) input with (out, in, rows, cols)
    filters; `border_mode` 'valid' or 'full'. Theano's implementation options
    (``unroll_batch``, ``unroll_kern``, ``imshp``...) are accepted and ignored."""
    if border_mode not in ("valid", "full"):
        raise ValueError(f"conv.conv2d: border_mode must be 'valid' or 'full', got "
                         f"{border_mode!r}; theano.tensor.nnet.conv2d has the others")
    return _conv2d(input, filters, image_shape, filter_shape, border_mode, subsample)
