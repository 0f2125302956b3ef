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
def _walk(image, windows, geometry, to_windows, fill):
    """Visit every (window entry, image position) pair: copy the image into the windows
    (the fill off the image), or add the windows into the image."""
    kh, kw, sh, sw, dh, dw, top, bottom, left, right, partial = geometry
    nb, oh, ow, nc = windows.shape[0], windows.shape[1], windows.shape[2], windows.shape[3]
    h, w = image.shape[2], image.shape[3]
    for b in range(nb):
        for i in range(oh):
            for j in range(ow):
                for c in range(nc):
                    for p in range(kh):
                        r = i * sh + p * dh - top
                        for q in range(kw):
                            s = j * sw + q * dw - left
                            inside = 0 <= r < h and 0 <= s < w
                            if to_windows:
                                windows[b, i, j, c, p, q] = image[b, c, r, s] if inside else fill
                            elif inside:
                                image[b, c, r, s] += windows[b, i, j, c, p, q]


@jit
def patches(x, geometry, fill):
    kh, kw = geometry[0], geometry[1]
    oh, ow = _sizes(x.shape[2], x.shape[3], geometry)
    out = alloc_empty((x.shape[0], oh, ow, x.shape[1], kh, kw), x.dtype)
    _walk(x, out, geometry, True, fill)
    return out


@jit
def patches_adjoint(g, h, w, geometry):
    if (g.shape[1], g.shape[2]) != _sizes(h, w, geometry) or g.shape[4] != geometry[0] \
            or g.shape[5] != geometry[1]:
        raise ValueError("PatchesAdjoint: the windows do not fit the image size")
    out = alloc_zeros((g.shape[0], g.shape[3], h, w), g.dtype)
    _walk(out, g, geometry, False, g.dtype.type(0))
    return out


patches_call = separately(patches, any_layout=True)
patches_adjoint_call = separately(patches_adjoint, any_layout=True)
