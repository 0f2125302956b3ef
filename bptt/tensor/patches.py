"""Windows of an image batch as an array (im2col), and the adjoint that sums them back.

Convolution and pooling are built on one linear op and its transpose::

    x           (B, C, H, W)
    Patches(x)  (B, OH, OW, C, KH, KW)
        [b, i, j, c, p, q] = x[b, c, i*SH + p*DH - top, j*SW + q*DW - left]
                             (the fill value where that position is off the image)

    PatchesAdjoint(g, H, W)  (B, C, H, W): each x position gets the sum of the
        entries of g that `Patches` copied from it (fill positions get nothing).

The rows of ``Patches(x)`` reshaped to (B*OH*OW, C*KH*KW) are the image
windows, so a convolution is one matrix product with the filters (conv.py) and
a pooling a reduction over the last axes (pool.py); their gradients follow from
the rules of the product, the reduction and this pair: the adjoint of
`Patches` is `PatchesAdjoint` and the adjoint of that is `Patches` filling
zeros (its fill positions are constants, not a function of x).

Output size per spatial axis, with N = pad_before + length + pad_after and
SPAN = D*(K-1) + 1: ``(N - SPAN) // S + 1`` windows lying inside the padded
image; with ``partial`` (Theano's pooling with ``ignore_border=False``) also
the windows that start inside but run past its end, counted by Theano's rule.
"""
from __future__ import annotations

import numpy as np

from ..graph.basic import Apply, Constant
from ..graph.op import Op
from .type import TensorType, as_tensor_variable


def window_count(n, span, stride, partial):
    """Windows of `span` every `stride` along a padded length `n`; a Python int or a
    symbolic scalar when `n` is one. None when the image is too small (not partial)."""
    if partial:
        if stride >= span:
            return (n - 1) // stride + 1
        if isinstance(n, (int, np.integer)):
            return max(0, (n - 1 - span + stride) // stride) + 1
        from .math import maximum

        return maximum(0, (n - 1 - span + stride) // stride) + 1
    if isinstance(n, (int, np.integer)) and n < span:
        return None
    return (n - span) // stride + 1


class _Windows(Op):
    """The geometry both ops share: window, stride, dilation, padding, partial."""

    abstract = True

    def __init__(self, window, stride=(1, 1), dilation=(1, 1), pad=(0, 0, 0, 0), partial=False):
        self.window = tuple(int(k) for k in window)
        self.stride = tuple(int(s) for s in stride)
        self.dilation = tuple(int(d) for d in dilation)
        self.pad = tuple(int(p) for p in pad)   # (top, bottom, left, right)
        self.partial = bool(partial)
        if min(self.window + self.stride + self.dilation) < 1 or min(self.pad) < 0:
            raise ValueError(f"{type(self).__name__}: window {self.window}, stride "
                             f"{self.stride} and dilation {self.dilation} must be positive "
                             f"and the padding {self.pad} not negative")

    def spans(self):
        return tuple(d * (k - 1) + 1 for k, d in zip(self.window, self.dilation))

    def padded(self, h, w):
        top, bottom, left, right = self.pad
        return h + top + bottom, w + left + right

    def out_sizes(self, h, w, what="Patches"):
        """(OH, OW) for an image of h x w (ints, symbolic scalars, or None for unknown)."""
        padded = [None if v is None else n for v, n in zip((h, w), self.padded(h or 0, w or 0))]
        sizes = tuple(None if n is None else window_count(n, span, s, self.partial)
                      for n, span, s in zip(padded, self.spans(), self.stride))
        if any(s is None for s, n in zip(sizes, padded) if n is not None):
            raise ValueError(
                f"{what}: the window spans {self.spans()} (rows, cols; filter size with its "
                f"dilation), larger than the padded image: {h} x {w} with padding {self.pad} "
                "(top, bottom, left, right); use a smaller window or pad the image "
                "(border_mode='full' or 'half' for a convolution)")
        return sizes

    def reach(self, oh, ow):
        """Rows and cols of padded image the windows read: may pass its end when partial."""
        return tuple((o - 1) * s + span if o else 0
                     for o, s, span in zip((oh, ow), self.stride, self.spans()))

    def slices(self, oh, ow):
        """For each window offset (p, q), the strided slices of the padded image it reads."""
        (sh, sw), (dh, dw) = self.stride, self.dilation
        for p in range(self.window[0]):
            for q in range(self.window[1]):
                yield p, q, (slice(p * dh, p * dh + (oh - 1) * sh + 1, sh),
                             slice(q * dw, q * dw + (ow - 1) * sw + 1, sw))


def fill_value(fill, dtype):
    """The value off-image positions read: 0, or the dtype's lowest (-inf for floats)."""
    if fill == "zero":
        return 0
    dt = np.dtype(dtype)
    return -np.inf if dt.kind == "f" else np.iinfo(dt).min


class Patches(_Windows):
    """The windows of a (B, C, H, W) batch as (B, OH, OW, C, KH, KW); module docstring."""

    __props__ = ("window", "stride", "dilation", "pad", "partial", "fill")

    def __init__(self, window, stride=(1, 1), dilation=(1, 1), pad=(0, 0, 0, 0),
                 partial=False, fill="zero"):
        super().__init__(window, stride, dilation, pad, partial)
        if fill not in ("zero", "lowest"):
            raise ValueError(f"Patches: fill must be 'zero' or 'lowest', got {fill!r}")
        self.fill = fill

    def make_node(self, x):
        x = as_tensor_variable(x)
        if x.ndim != 4:
            raise TypeError(f"Patches: expected a 4-d (batch, channels, rows, cols) input, "
                            f"got {x.type}")
        b, c, h, w = x.type.shape
        oh, ow = self.out_sizes(h, w)
        return Apply(self, [x], [TensorType(x.dtype, (b, oh, ow, c) + self.window)()])

    def perform(self, node, inputs, output_storage):
        (x,) = inputs
        b, c, h, w = x.shape
        oh, ow = self.out_sizes(h, w)
        top, _, left, _ = self.pad
        rows, cols = (max(r, n) for r, n in zip(self.reach(oh, ow), self.padded(h, w)))
        xp = np.full((b, c, rows, cols), fill_value(self.fill, x.dtype), dtype=x.dtype)
        xp[:, :, top:top + h, left:left + w] = x
        out = np.empty((b, oh, ow, c) + self.window, dtype=x.dtype)
        for p, q, (rs, cs) in self.slices(oh, ow):
            out[:, :, :, :, p, q] = xp[:, :, rs, cs].transpose(0, 2, 3, 1)
        output_storage[0][0] = out

    def L_op(self, inputs, outputs, output_grads):
        from .shape import shape_i

        (x,), (g,) = inputs, output_grads
        adjoint = PatchesAdjoint(self.window, self.stride, self.dilation, self.pad, self.partial)
        return [adjoint(g, shape_i(x, 2), shape_i(x, 3))]

    def R_op(self, inputs, eval_points):
        # Linear in x; the fill positions are constants, so their tangent is 0.
        linear = Patches(self.window, self.stride, self.dilation, self.pad, self.partial)
        if eval_points[0] is None:
            from .basic import zeros_like

            return [zeros_like(self(inputs[0]))]
        return [linear(eval_points[0])]

    def infer_shape(self, fgraph, node, input_shapes):
        b, c, h, w = input_shapes[0]
        return [(b, *self.out_sizes(h, w), c, *self.window)]


class PatchesAdjoint(_Windows):
    """Sums (B, OH, OW, C, KH, KW) windows back into a (B, C, H, W) image; module docstring."""

    __props__ = ("window", "stride", "dilation", "pad", "partial")

    def make_node(self, g, h, w):
        from .basic import cast

        g, h, w = (as_tensor_variable(v) for v in (g, h, w))
        if g.ndim != 6 or h.ndim or w.ndim or not (h.dtype + w.dtype).startswith("int") \
                or "float" in h.dtype + w.dtype:
            raise TypeError(f"PatchesAdjoint: expected 6-d windows and two integer sizes, got "
                            f"{g.type}, {h.type}, {w.type}")
        h, w = (cast(v, "int64") if v.dtype != "int64" else v for v in (h, w))
        static = tuple(int(v.data) if isinstance(v, Constant) else None for v in (h, w))
        out = TensorType(g.dtype, (g.type.shape[0], g.type.shape[3]) + static)
        return Apply(self, [g, h, w], [out()])

    def perform(self, node, inputs, output_storage):
        g, h, w = inputs
        h, w = int(h), int(w)
        b, oh, ow, c = g.shape[:4]
        if (oh, ow) != tuple(self.out_sizes(h, w)) or g.shape[4:] != self.window:
            raise ValueError(f"PatchesAdjoint: windows of shape {g.shape} do not fit an image "
                             f"of {h} x {w} with window {self.window}")
        top, _, left, _ = self.pad
        rows, cols = (max(r, n) for r, n in zip(self.reach(oh, ow), self.padded(h, w)))
        gp = np.zeros((b, c, rows, cols), dtype=g.dtype)
        for p, q, (rs, cs) in self.slices(oh, ow):
            gp[:, :, rs, cs] += g[:, :, :, :, p, q].transpose(0, 3, 1, 2)
        output_storage[0][0] = np.ascontiguousarray(gp[:, :, top:top + h, left:left + w])

    def L_op(self, inputs, outputs, output_grads):
        from ..graph.gradient_types import disconnected_grad

        forward = Patches(self.window, self.stride, self.dilation, self.pad, self.partial)
        return [forward(output_grads[0]), disconnected_grad(), disconnected_grad()]

    def R_op(self, inputs, eval_points):
        if eval_points[0] is None:
            from .basic import zeros_like

            return [zeros_like(self(*inputs))]
        return [self(eval_points[0], *inputs[1:])]

    def connection_pattern(self, node):
        return [[True], [False], [False]]

    def infer_shape(self, fgraph, node, input_shapes):
        g = input_shapes[0]
        return [(g[0], g[3], node.inputs[1], node.inputs[2])]
