"""`Patches` and `PatchesAdjoint`: one loop nest each, over the windows' positions.

Each reads the op's geometry (window, stride, dilation, padding) as constants
of the source, so the loops have literal bounds and offsets; an off-image
position reads the fill value (`Patches`) or gets nothing (the adjoint).
"""
from ....tensor.patches import Patches, PatchesAdjoint, fill_value
from ..registry import Kernel, np_dtype, numba_funcify

_TOO_SMALL = ("the window (filter size with its dilation) is larger than the padded image; "
              "use a smaller window or pad the image")


def _counts(op):
    """Source computing oh, ow from h, w (raising when a window does not fit)."""
    top, bottom, left, right = op.pad
    lines = [f"    n_r, n_c = h + {top + bottom}, w + {left + right}"]
    for out, n, span, s in zip(("oh", "ow"), ("n_r", "n_c"), op.spans(), op.stride):
        if not op.partial:
            lines += [f"    if {n} < {span}:", f"        raise ValueError('{_TOO_SMALL}')",
                      f"    {out} = ({n} - {span}) // {s} + 1"]
        elif s >= span:
            lines.append(f"    {out} = ({n} - 1) // {s} + 1")
        else:
            lines.append(f"    {out} = max(0, ({n} - 1 - {span} + {s}) // {s}) + 1")
    return "\n".join(lines)


def _loops(op, body):
    """The loop nest over (b, i, j, c, p, q), with r, s the image position read."""
    (kh, kw), (sh, sw), (dh, dw) = op.window, op.stride, op.dilation
    top, left = op.pad[0], op.pad[2]
    return f"""    for b in range(nb):
        for i in range(oh):
            for j in range(ow):
                for c in range(nc):
                    for p in range({kh}):
                        r = i * {sh} + p * {dh} - {top}
                        for q in range({kw}):
                            s = j * {sw} + q * {dw} - {left}
{body}"""


@numba_funcify.register(Patches)
def _patches(op, node, ctx):
    dt = np_dtype(node.outputs[0].dtype)
    fill = fill_value(op.fill, node.outputs[0].dtype)
    fill = "-np.inf" if fill == float("-inf") else repr(fill)
    kh, kw = op.window
    body = f"""                            if 0 <= r < h and 0 <= s < w:
                                out[b, i, j, c, p, q] = x[b, c, r, s]
                            else:
                                out[b, i, j, c, p, q] = {fill}"""
    return Kernel(f"""
def {{name}}(x):
    nb, nc, h, w = x.shape
{_counts(op)}
    out = alloc_empty((nb, oh, ow, nc, {kh}, {kw}), {dt})
{_loops(op, body)}
    return out
""", "patches", separate=True)


@numba_funcify.register(PatchesAdjoint)
def _patches_adjoint(op, node, ctx):
    dt = np_dtype(node.outputs[0].dtype)
    kh, kw = op.window
    body = """                            if 0 <= r < h and 0 <= s < w:
                                out[b, c, r, s] += g[b, i, j, c, p, q]"""
    return Kernel(f"""
def {{name}}(g, h, w):
{_counts(op)}
    nb, nc = g.shape[0], g.shape[3]
    if g.shape[1] != oh or g.shape[2] != ow or g.shape[4] != {kh} or g.shape[5] != {kw}:
        raise ValueError('PatchesAdjoint: the windows do not fit the image size')
    out = alloc_full((nb, nc, h, w), 0, {dt})
{_loops(op, body)}
    return out
""", "patches_adjoint", separate=True)
