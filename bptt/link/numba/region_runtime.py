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

Advanced indexing by one integer array on axis 0 (``W[idx]``, an embedding;
bincount's ``inc_subtensor(zeros(n)[x], 1)``) has runtime functions of its own,
compiled once per (dtype, index dtype) instead of a generated kernel per op. The
caller views `x` (or the output) as a C-contiguous matrix of rows, the index as a
vector and the values as rows of the region (``rows_values``, a copy where `y`
broadcasts) or a ``(1, 1)`` scalar, so one machine code serves every rank and
its loops run over known strides. Each index is checked and wrapped by
``check_index_0`` (the kernels' IndexError message)::

    take_rows_call(x, idx)                x[idx]: out[i] = x[idx[i]]
    write_rows_call(out, idx, values, 0)  out[idx[i]] = values[i], the last write kept
    write_rows_call(out, idx, values, 1)  out[idx[i]] += values[i], repeats accumulate
"""
from .alloc_runtime import add_into, alloc_empty, check_index_0, copy_into
from .jitting import jit
from .separate import separately

__all__ = ["add_into_call", "copy_into_call", "take_rows_call", "write_rows_call"]


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


@jit
def take_rows(x, idx):
    """``x[idx]`` for a C-contiguous matrix `x` and an index vector."""
    n, m = x.shape
    out = alloc_empty((idx.shape[0], m), x.dtype)
    for i in range(idx.shape[0]):
        a = check_index_0(idx[i], n)
        for j in range(m):
            out[i, j] = x[a, j]
    return out


@jit
def write_rows(out, idx, values, add):
    """``out[idx] = values`` (the last write of a repeated index kept), or with `add`
    ``np.add.at(out, idx, values)``; `values` of shape ``(len(idx), m)`` or ``(1, 1)``."""
    n, m = out.shape
    gi, gj = values.shape[0] != 1, values.shape[1] != 1
    if (gi and values.shape[0] != idx.shape[0]) or (gj and values.shape[1] != m):
        raise ValueError("write_rows: the values do not have the region's shape")
    for i in range(idx.shape[0]):
        a = check_index_0(idx[i], n)
        for j in range(m):
            if add:
                out[a, j] += values[i * gi, j * gj]
            else:
                out[a, j] = values[i * gi, j * gj]


take_rows_call = separately(take_rows)
write_rows_call = separately(write_rows)
