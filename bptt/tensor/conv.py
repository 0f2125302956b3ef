"""2-d convolution of image batches (``T.nnet.conv2d``), as im2col and one matrix product.

::

    x  (B, C, H, W)          filters  (O, C, KH, KW)
    P = Patches(x)           (B, OH, OW, C, KH, KW)        patches.py
    out = reshape(P, (B*OH*OW, C*KH*KW)) @ reshape(filters, (O, C*KH*KW)).T
                             (B*OH*OW, O) -> (B, OH, OW, O) -> (B, O, OH, OW)

With ``filter_flip`` (Theano's default) the filters are reversed along rows
and cols first, so the result is a true convolution; without, a
cross-correlation. The gradients are those of the product, the reshapes and
`Patches` (whose adjoint sums the window gradients back into the image), so
they are exact and differentiable again.

Border modes (padding added on each side of an axis with span
``SPAN = D*(K-1) + 1``): 'valid' none, 'full' ``SPAN - 1``, 'half'
``SPAN // 2``, an int p (p everywhere), (pr, pc) per axis, or
((top, bottom), (left, right)).
"""
from __future__ import annotations

from ..graph.basic import Constant
from .assertion import check, check_shape
from .math import dot, eq
from .patches import Patches
from .shape import shape_i
from .sharedvar import SharedVariable
from .type import as_tensor_variable

__all__ = ["conv2d"]


def _pair(value, what):
    pair = tuple(value) if isinstance(value, (tuple, list)) else (value, value)
    if len(pair) != 2 or not all(isinstance(v, int) and v >= 1 for v in pair):
        raise ValueError(f"conv2d: {what} must be two positive ints (rows, cols), got {value!r}")
    return pair


def _known_shape(var, hint, what):
    """The static shape of `var` merged with the user's shape hint (None where unknown)."""
    if var.ndim != 4:
        layout = "(batch, channels, rows, cols)" if what == "input" else \
            "(output channels, input channels, rows, cols)"
        raise TypeError(f"conv2d: {what} must be a 4-d tensor {layout}, got {var.ndim} "
                        f"dimensions ({var.type})")
    shape = list(var.type.shape)
    if isinstance(var, SharedVariable):   # the window size, from the filters' value
        value = var.get_value(borrow=True).shape
        shape[2:] = [s if s is not None else v for s, v in zip(shape[2:], value[2:])]
    if isinstance(var, Constant):
        shape = list(var.data.shape)
    if hint is None:
        return shape
    hint = tuple(None if h is None else int(h) for h in hint)
    if len(hint) != 4 or any(s is not None and h is not None and s != h
                             for s, h in zip(var.type.shape, hint)):
        raise ValueError(f"conv2d: {what}_shape={hint} does not match the {what}'s shape "
                         f"{var.type.shape}; pass its 4 sizes (None for unknown ones)")
    return [h if h is not None else s for s, h in zip(shape, hint)]


def _border_pad(border_mode, spans):
    """(top, bottom, left, right) for a border mode; module docstring."""
    named = {"valid": lambda s: (0, 0), "full": lambda s: (s - 1, s - 1),
             "half": lambda s: (s // 2, s // 2)}
    if isinstance(border_mode, str) and border_mode in named:
        (t, b), (lt, r) = (named[border_mode](s) for s in spans)
        return t, b, lt, r
    if isinstance(border_mode, int):
        border_mode = (border_mode, border_mode)
    if isinstance(border_mode, (tuple, list)) and len(border_mode) == 2:
        axes = [tuple(a) if isinstance(a, (tuple, list)) else (a, a) for a in border_mode]
        flat = [p for a in axes for p in a]
        if len(flat) == 4 and all(isinstance(p, int) and p >= 0 for p in flat):
            return tuple(flat)
    raise ValueError(f"conv2d: border_mode must be 'valid', 'full', 'half', an int >= 0, "
                     f"(rows, cols) ints or ((top, bottom), (left, right)), "
                     f"got {border_mode!r}")


def _dim(var, i):
    size = var.type.shape[i]
    return size if size is not None else shape_i(var, i)


def conv2d(input, filters, input_shape=None, filter_shape=None, border_mode="valid",
           subsample=(1, 1), filter_flip=True, filter_dilation=(1, 1)):
    """Convolve a batch of multi-channel images with a bank of filters.

    Parameters
    ----------
    input : 4-d tensor (batch, input channels, rows, cols)
    filters : 4-d tensor (output channels, input channels, filter rows, filter cols)
        The filter rows and cols must be known when the graph is built: from
        the filters' static shape, `filter_shape`, or the value of a shared
        variable.
    input_shape, filter_shape : tuples of 4 ints or None, optional
        What is known of the shapes (None for an unknown size): the output's
        static shape follows from them, and they are checked at run time.
    border_mode : 'valid', 'full', 'half', int, (int, int) or ((int, int), (int, int))
        Zero padding; see the module docstring.
    subsample : (int, int)
        Stride of the windows along rows and cols.
    filter_flip : bool
        True (the default) for convolution, False for cross-correlation.
    filter_dilation : (int, int)
        Spacing between filter taps.

    Returns
    -------
    4-d tensor (batch, output channels, out rows, out cols), out rows being
    ``(rows + top + bottom - SPAN) // subsample + 1`` with ``SPAN =
    dilation * (filter rows - 1) + 1`` (cols alike).
    """
    x, w = as_tensor_variable(input), as_tensor_variable(filters)
    xs = _known_shape(x, input_shape, "input")
    fs = _known_shape(w, filter_shape, "filter")
    if xs[1] is not None and fs[1] is not None and xs[1] != fs[1]:
        raise ValueError(f"conv2d: the input has {xs[1]} channels (shape {tuple(xs)}) but "
                         f"the filters expect {fs[1]} (shape {tuple(fs)}); the filters' "
                         "second axis is the input's channel axis")
    if fs[2] is None or fs[3] is None:
        raise TypeError(f"conv2d: the filter rows and cols must be known when the graph is "
                        f"built, got filter shape {tuple(fs)}; pass filter_shape=(out, in, "
                        "rows, cols)")
    # The shapes the graph relies on, checked at run time where the types lack them.
    x, w = check_shape(x, xs, "conv2d's input"), check_shape(w, fs, "conv2d's filters")
    if x.type.shape[1] is None or w.type.shape[1] is None:
        x = check(x, eq(shape_i(x, 1), shape_i(w, 1)),
                  "conv2d: the input has {} channels but the filters expect {} (their second "
                  "axis is the input's channel axis)", shape_i(x, 1), shape_i(w, 1))
    window, stride = (fs[2], fs[3]), _pair(subsample, "subsample")
    dilation = _pair(filter_dilation, "filter_dilation")
    op = Patches(window, stride, dilation,
                 _border_pad(border_mode, [d * (k - 1) + 1 for k, d in zip(window, dilation)]))
    if xs[2] is not None and xs[3] is not None:
        op.out_sizes(xs[2], xs[3], "conv2d")
    if filter_flip:
        w = w[:, :, ::-1, ::-1]
    p = op(x)
    n_out = _dim(w, 0)
    rows = p.reshape((-1, _dim(p, 3) * (window[0] * window[1])))
    out = dot(rows, w.reshape((n_out, -1)).T)
    return out.reshape((_dim(p, 0), _dim(p, 1), _dim(p, 2), n_out)).dimshuffle(0, 3, 1, 2)
