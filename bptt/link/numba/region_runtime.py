"""SetSubtensor's and IncSubtensor's writes: one call per site, compiled once, cached on disk.

A basic write ``set_subtensor(x[1:3], y)`` lowers to a view of the output and a
call that writes `y`'s values into it (dispatch/subtensor.py)::

    out = c_copy(x)
    region = out[1:3]
    copy_into_call(region, region_values(region, y))

``region_values`` (an intrinsic, alloc_runtime.py) checks that `y` broadcasts to
the region and views it with the region's shape. The loop is a function called
`separately`, compiled once per (dtype of the region, dtype of the values,
rank) and cached on disk: written into the caller, each site's loop nest cost
LLVM about a tenth of a second, and a kernel per op with the slice in its
source (what the lowering generated before) twice that (benchmarks/notes.md).

* ``copy_into_call(region, values)``: ``region[...] = values`` (``memmove`` by
  rows where both rows are contiguous);
* ``add_into_call(region, values)``: ``region[...] += values``.
"""
from .alloc_runtime import add_into, copy_into
from .jitting import jit
from .separate import separately

__all__ = ["add_into_call", "copy_into_call"]


@jit
def copy_values(region, values):
    """``region[...] = values``, two arrays of one shape."""
    copy_into(region, values)


@jit
def add_values(region, values):
    """``region[...] += values``, two arrays of one shape."""
    add_into(region, values)


copy_into_call = separately(copy_values, any_layout=True)
add_into_call = separately(add_values, any_layout=True)
