"""2-d pooling over the last two axes (Theano's ``pool_2d``), as a reduction of windows.

::

    x  (..., H, W) -> reshape (N, 1, H, W) -> Patches (N, OH, OW, 1, KH, KW)
       -> max or sum over the last three axes (N, OH, OW) -> reshape (..., OH, OW)

Padding and, with ``ignore_border=False``, the part of a window past the
image's end read the dtype's lowest value for 'max' and 0 otherwise, so
'max' and 'sum' never see them. 'average_exc_pad' divides by the number of
image positions in the window; 'average_inc_pad' by the window's size (with
``ignore_border=False`` a window cut by the image's end counts only what is
left of it, as in Theano, where no padding is allowed there).

The gradient of 'max' goes to every position of a window equal to its
maximum (the rule of `max`, as Theano's pooling gradient does).
"""
from __future__ import annotations

import warnings

from ..graph.basic import Variable
from .basic import alloc, cast
from .math import max as _max, sum as _sum
from .patches import Patches
from .shape import shape_i
from .type import as_tensor_variable

__all__ = ["pool_2d"]

MODES = ("max", "sum", "average_inc_pad", "average_exc_pad")


def _renamed(new, old, new_name, old_name, default=None):
    """Theano's deprecated argument names (ds, st, padding) still accepted."""
    if old is None:
        return new
    if new is not None and new != default:
        raise ValueError(f"pool_2d: give {new_name}= only ({old_name}= is its old name), "
                         f"got both {new_name}={new!r} and {old_name}={old!r}")
    return old


def _ints(value, what, least):
    if isinstance(value, Variable) or (isinstance(value, (tuple, list))
                                       and any(isinstance(v, Variable) for v in value)):
        raise ValueError(f"pool_2d: {what} must be numbers known when the graph is built, "
                         f"got the symbolic {value!r}; give two ints (rows, cols)")
    pair = tuple(value)
    if len(pair) != 2 or not all(int(v) == v and v >= least for v in pair):
        raise ValueError(f"pool_2d: {what} must be two ints >= {least} (rows, cols), "
                         f"got {value!r}")
    return tuple(int(v) for v in pair)


def _dim(var, i):
    size = var.type.shape[i]
    return size if size is not None else shape_i(var, i)


def _check(x, ws, pad, mode, ignore_border):
    if x.ndim < 2:
        raise TypeError(f"pool_2d: the input must have at least 2 dimensions (pooled over "
                        f"the last two), got {x.type}")
    if mode not in MODES:
        raise ValueError(f"pool_2d: mode must be one of {MODES}, got {mode!r}")
    if any(pad) and not ignore_border:
        raise ValueError(f"pool_2d: padding {pad} needs ignore_border=True")
    if any(p >= k for p, k in zip(pad, ws)):
        raise ValueError(f"pool_2d: the padding {pad} must be smaller than the window {ws}")


def pool_2d(input, ws=None, ignore_border=None, stride=None, pad=(0, 0), mode="max",
            ds=None, st=None, padding=None):
    """Pool each (rows, cols) image of `input` over windows of `ws`.

    Parameters
    ----------
    input : tensor of at least 2 dimensions; the last two are pooled.
    ws : (int, int)
        Window rows and cols (`ds` is its old name).
    ignore_border : bool
        True: only whole windows; False (Theano's default, with a warning when
        not given): also the windows cut by the image's end.
    stride : (int, int) or None
        Step between windows (`st`); None for `ws` (no overlap).
    pad : (int, int)
        Rows and cols added on both sides (`padding`); needs ignore_border=True
        and must be smaller than `ws`.
    mode : 'max', 'sum', 'average_inc_pad' or 'average_exc_pad'

    Returns
    -------
    A tensor of `input`'s dtype whose last two axes are the windows' positions.
    """
    ws = _renamed(ws, ds, "ws", "ds")
    if ws is None:
        raise ValueError("pool_2d: the window size ws=(rows, cols) is required")
    stride = _renamed(stride, st, "stride", "st")
    pad = _renamed(pad, padding, "pad", "padding", default=(0, 0))
    if ignore_border is None:
        warnings.warn("pool_2d: ignore_border not given; using False as Theano did "
                      "(pass ignore_border=True for whole windows only)", stacklevel=2)
        ignore_border = False
    x = as_tensor_variable(input)
    ws, pad = _ints(ws, "ws", 1), _ints(pad, "pad", 0)
    stride = ws if stride is None else _ints(stride, "stride", 1)
    _check(x, ws, pad, mode, ignore_border)
    h, w = _dim(x, x.ndim - 2), _dim(x, x.ndim - 1)
    geometry = dict(window=ws, stride=stride, pad=(pad[0], pad[0], pad[1], pad[1]),
                    partial=not ignore_border)
    if isinstance(h, int) and isinstance(w, int):
        Patches(**geometry).out_sizes(h, w, "pool_2d")
    p = Patches(**geometry, fill="lowest" if mode == "max" else "zero")(x.reshape((-1, 1, h, w)))
    if mode == "max":
        pooled = _max(p, axis=(3, 4, 5))
    else:
        pooled = _sum(p, axis=(3, 4, 5))
    if mode.startswith("average"):
        pooled = pooled / _window_sizes(geometry, mode, h, w, x.dtype)
    lead = [_dim(x, i) for i in range(x.ndim - 2)]
    return cast(pooled, x.dtype).reshape(lead + [_dim(p, 1), _dim(p, 2)])


def _window_sizes(geometry, mode, h, w, dtype):
    """What an average divides each window's sum by: its size, or its count of image
    positions (the windows of an image of ones)."""
    if mode == "average_inc_pad" and not geometry["partial"]:
        return geometry["window"][0] * geometry["window"][1]
    # Partial windows have no padding (checked): inc_pad counts what is left of them.
    ones = alloc(cast(as_tensor_variable(1), dtype), 1, 1, h, w)
    return _sum(Patches(**geometry)(ones), axis=(3, 4, 5))
