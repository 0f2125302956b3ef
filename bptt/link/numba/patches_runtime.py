"""The loops of `Patches` and `PatchesAdjoint` (bptt/tensor/patches.py), compiled once.

The window geometry is an argument, ``(kh, kw, sh, sw, dh, dw, top, bottom,
left, right, partial)`` as int64s, not constants of the source: every
convolution and pooling of a program (and of every program, through the disk
cache) calls the same machine code per dtype, where a kernel per geometry was
a numba compilation per layer and per gradient. Called `separately`, with
array arguments of any layout.

::

    patches_call(x, geometry, fill)     (B, C, H, W) -> (B, OH, OW, C, KH, KW)
    patches_adjoint_call(g, h, w, geometry)   (B, OH, OW, C, KH, KW) -> (B, C, h, w)
"""
from .alloc_runtime import alloc_empty, alloc_zeros
from .jitting import jit
from .separate import separately

__all__ = ["patches_call", "patches_adjoint_call"]


@jit
def _count(n, span, stride, partial):
    """Windows along a padded length n: Theano's rule for partial ones."""
    if partial:
        if stride >= span:
            return (n - 1) // stride + 1
        return max(0, (n - 1 - span + stride) // stride) + 1
    if n < span:
        raise ValueError("the window (filter size with its dilation) is larger than the "
                         "padded image; use a smaller window or pad the image")
    return (n - span) // stride + 1


@jit
def _sizes(h, w, geometry):
    kh, kw, sh, sw, dh, dw, top, bottom, left, right, partial = geometry
    return (_count(h + top + bottom, dh * (kh - 1) + 1, sh, partial),
            _count(w + left + right, dw * (kw - 1) + 1, sw, partial))


@jit
def patches(x, geometry, fill):
    kh, kw, sh, sw, dh, dw, top, bottom, left, right, partial = geometry
    nb, nc, h, w = x.shape
    oh, ow = _sizes(h, w, geometry)
    out = alloc_empty((nb, oh, ow, nc, kh, kw), x.dtype)
    for b in range(nb):
        for i in range(oh):
            for j in range(ow):
                for c in range(nc):
                    for p in range(kh):
                        r = i * sh + p * dh - top
                        for q in range(kw):
                            s = j * sw + q * dw - left
                            if 0 <= r < h and 0 <= s < w:
                                out[b, i, j, c, p, q] = x[b, c, r, s]
                            else:
                                out[b, i, j, c, p, q] = fill
    return out


@jit
def patches_adjoint(g, h, w, geometry):
    kh, kw, sh, sw, dh, dw, top, bottom, left, right, partial = geometry
    nb, oh, ow, nc = g.shape[0], g.shape[1], g.shape[2], g.shape[3]
    if (oh, ow) != _sizes(h, w, geometry) or g.shape[4] != kh or g.shape[5] != kw:
        raise ValueError("PatchesAdjoint: the windows do not fit the image size")
    out = alloc_zeros((nb, nc, h, w), g.dtype)
    for b in range(nb):
        for i in range(oh):
            for j in range(ow):
                for c in range(nc):
                    for p in range(kh):
                        r = i * sh + p * dh - top
                        for q in range(kw):
                            s = j * sw + q * dw - left
                            if 0 <= r < h and 0 <= s < w:
                                out[b, c, r, s] += g[b, i, j, c, p, q]
    return out


patches_call = separately(patches, any_layout=True)
patches_adjoint_call = separately(patches_adjoint, any_layout=True)
