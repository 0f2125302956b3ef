"""`sum_to`: the run-time unbroadcast of gradients, one compiled function per dtype.

The reverse sweep wraps a gradient in SumTo wherever its input may have been
broadcast; sizes unknown at compile time leave the check to run time, so an
LSTM backward step holds seven SumTo nodes and the RNN gradient's glue three.
Written into the caller, each one (size checks, a fast path, nested loops that
add into the target) cost 0.2-0.25 s of numba typing, lowering and LLVM work.

Generated code now views the gradient as 4-d (leading axes of size 1, stride 0)
and calls `sum_to4` `separately` (separate.py): the function is compiled once per
dtype (layout 'A') and cached on disk, whatever the ranks. The caller keeps the
fast path (the gradient already has the target's shape: no call, no copy).
"""
import numpy as np

from .alloc_runtime import alloc_zeros
from .elemwise_runtime import elem_view
from .runtime import jit
from .separate import separately

__all__ = ["sum_to4_call"]


@jit
def sum_to4(g, d0, d1, d2, d3):
    """Sum 4-d `g` over the axes where the target size `d<k>` is 1; a new C array.

    Every `d<k>` must be 1 or `g.shape[k]` (ValueError otherwise: writing past
    the target's end would corrupt memory).
    """
    n0, n1, n2, n3 = g.shape
    if ((d0 != 1 and d0 != n0) or (d1 != 1 and d1 != n1) or (d2 != 1 and d2 != n2)
            or (d3 != 1 and d3 != n3)):
        raise ValueError('sum_to: the gradient is not a broadcast of the input shape')
    out = alloc_zeros((d0, d1, d2, d3), g.dtype)
    # Flat views with element strides (0 along a size-1 target axis: the sum), unsigned
    # indices: the inner loop vectorizes on reversed (layout 'A') gradients too.
    f, o, e = elem_view(out)
    fg, og, eg = elem_view(g)
    for j0 in range(n0):
        for j1 in range(n1):
            for j2 in range(n2):
                at = o + j0 * e[0] + j1 * e[1] + j2 * e[2]
                atg = og + j0 * eg[0] + j1 * eg[1] + j2 * eg[2]
                for j3 in range(n3):
                    f[np.uint64(at + j3 * e[3])] += fg[np.uint64(atg + j3 * eg[3])]
    return out


sum_to4_call = separately(sum_to4, any_layout=True)
