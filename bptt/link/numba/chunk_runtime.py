"""The chunks of a summed nit_sot (``StoragePlan.nit_sot_sums``) and of a product sequence.

A summed nit_sot adds ``x[t].T @ y[t]`` over the steps of a chunk, with one
gemm over the chunk's stacked rows: ``X.T @ Y``, X (kk*B, In) and Y
(kk*B, H). The rows are read where they are -- a sequence's rows (the
backward scan reads the trace reversed: negative step stride), the staging
buffer, or the rows of the sequence the nit_sot is stored in -- as 2-d views
in the memory order of ``x`` (a product per step when a block's steps are not
one row stride apart). A nit_sot summed over rows (a bias gradient) adds the
column sums of the chunk's staged rows instead, by SumTo's summing loop
(`reduce_runtime._add_into`, vectorized along a row where both rows are
contiguous): numba's own loop over the rows of layout-'A' views was not
vectorized (benchmarks/notes.md).

The scan loop calls `chunk_stage_call` at every step (it puts the step's row in
the staging buffer) and `chunk_product_call` / `chunk_row_sum_call` at a
chunk's last step (they find the chunk's rows). Each is compiled once per dtype
and called `separately`: the staging index, the chunk's bounds and views
written into every scan loop would be compiled again for every summed nit_sot
(benchmarks/notes.md).
"""
from .alloc_runtime import copy_into, strided_view
from .blas import _like, gemm_into_call
from .jitting import jit
from .reduce_runtime import _add_into, _view4
from .separate import separately

__all__ = ["chunk_stage_call", "chunk_product_call", "chunk_row_sum_call", "seq_product_call"]


@jit
def chunk_stage(y, row, t, rev):
    """Stages step `t`'s `row` in the chunk buffer `y` of K rows: at ``y[t % K]``, or at
    ``y[K - 1 - t % K]`` when the sequences run backwards in memory (`rev`), so that the
    chunk's rows are in their memory order. False, with nothing written, if `row`'s shape
    is not the shape of y's rows."""
    k = y.shape[0]
    i = t % k
    dst = y[k - 1 - i if rev else i]
    if dst.shape != row.shape:
        return False
    copy_into(dst, row)
    return True


chunk_stage_call = separately(chunk_stage, any_layout=True)


@jit
def chunk_product(acc, x, y, t, k, home, rev):
    """``acc += sum over the chunk's steps s of x[s].T @ (row s of y)``, with one gemm;
    `t` is the chunk's last step (chunks of `k` steps from step 0; the loop's last one
    may be shorter).

    y's rows: the step's own row ``y[s]`` if `home` (the rows of the sequence the
    nit_sot is stored in), else the staging buffer's (`chunk_stage`).
    """
    i = t % k
    kk, x_lo = i + 1, t - i
    if home:
        y_lo, y_step = x_lo, 1
    else:
        y_lo, y_step = (k - 1, -1) if rev else (0, 1)
    one = _like(1, acc)
    b = x.shape[1]
    back = kk > 1 and x.strides[0] < 0     # read both in x's memory order (last step first)
    xs = x.strides[0] if not back else -x.strides[0]
    ys = y.strides[0] * y_step * (-1 if back else 1)
    if kk == 1 or (xs > 0 and ys > 0 and (b == 1 or (xs == b * x.strides[1]
                                                     and ys == b * y.strides[1]))):
        xf = x[x_lo + kk - 1 if back else x_lo]
        yf = y[y_lo + y_step * (kk - 1) if back else y_lo]
        xr = x.strides[1] if b > 1 or kk == 1 else xs
        yr = y.strides[1] if b > 1 or kk == 1 else ys
        gemm_into_call(one, strided_view(xf, (x.shape[2], kk * b), (x.strides[2], xr)),
                       strided_view(yf, (kk * b, y.shape[2]), (yr, y.strides[2])), one, acc)
        return acc
    for m in range(kk):      # steps not one row stride apart (rare): a product per step
        xm = x[x_lo + m]
        gemm_into_call(one, strided_view(xm, (xm.shape[1], xm.shape[0]),
                                         (xm.strides[1], xm.strides[0])),
                       y[y_lo + y_step * m], one, acc)
    return acc


chunk_product_call = separately(chunk_product, any_layout=True)


@jit
def chunk_row_sum(acc, y, t, k, home, rev):
    """``acc +=`` the column sums of the chunk's rows of `y`; `t` is the chunk's last step
    (as `chunk_product`)."""
    i = t % k
    kk = i + 1
    if home:
        y_lo, y_step = t - i, 1
    else:
        y_lo, y_step = (k - 1, -1) if rev else (0, 1)
    out = _view4(acc)
    for m in range(kk):
        _add_into(out, _view4(y[y_lo + y_step * m]))
    return acc


chunk_row_sum_call = separately(chunk_row_sum, any_layout=True)


@jit
def seq_product(out, x, x_lo, kk, w):
    """``out[m] = x[x_lo + m] @ w`` for m < kk (``out[kk - 1 - m]`` when `x` runs
    backwards in memory, so that one gemm reads the block in memory order).

    A sequence read as ``x_t @ W`` (``StoragePlan.seq_products``): `out` holds one
    chunk of steps, `x` is the (T, B, In) sequence (the backward scan's reversed
    trace has a negative step stride), `w` the (In, N) matrix.
    """
    if kk <= 0:
        return out
    one, zero = _like(1, out), _like(0, out)
    b = x.shape[1]
    rev = x.strides[0] < 0
    xs = -x.strides[0] if rev else x.strides[0]
    os = out.strides[0]
    if kk == 1 or (xs > 0 and os > 0 and (b == 1 or (xs == b * x.strides[1]
                                                   and os == b * out.strides[1]))):
        xf = x[x_lo + kk - 1 if rev else x_lo]
        xr = x.strides[1] if b > 1 or kk == 1 else xs
        orr = out.strides[1] if b > 1 or kk == 1 else os
        gemm_into_call(one, strided_view(xf, (kk * b, x.shape[2]), (xr, x.strides[2])), w,
                       zero, strided_view(out[0], (kk * b, out.shape[2]), (orr, out.strides[2])))
        return out
    for m in range(kk):      # steps not one row stride apart (rare): a product per step
        gemm_into_call(one, x[x_lo + m], w, zero, out[kk - 1 - m if rev else m])
    return out


seq_product_call = separately(seq_product, any_layout=True)
