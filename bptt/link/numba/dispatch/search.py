"""Nonzero positions, sorted insertion points and distinct values.

`Nonzero` copies numba's ``np.nonzero`` tuple into the rows of one matrix.
`Searchsorted` with a `sorter` searches ``x[sorter]``, the sorted vector the
sorter describes (numba's ``np.searchsorted`` has no sorter argument).
`Unique` sorts the flattened input stably, so the first of each run of equal
values is its first occurrence, and NaNs, which sort last, make one run.
"""
from ....tensor.search import SORTER_RANGE, Nonzero, Searchsorted, Unique
from ..registry import Kernel, numba_funcify


@numba_funcify.register(Nonzero)
def _nonzero(op, node, ctx):
    rows = "".join(f"    out[{i}] = idx[{i}]\n" for i in range(node.inputs[0].ndim))
    return Kernel(f"""
def {{name}}(a):
    idx = np.nonzero(a)
    out = alloc_empty(({node.inputs[0].ndim}, idx[0].shape[0]), np.int64)
{rows}    return out
""", "nonzero")


@numba_funcify.register(Searchsorted)
def _searchsorted(op, node, ctx):
    found = f"np.searchsorted(xs, v, side='{op.side}')"
    found = f"np.int64({found})" if node.inputs[1].ndim == 0 else f"{found}.astype(np.int64)"
    if len(node.inputs) == 2:
        return Kernel(f"""
def {{name}}(xs, v):
    return {found}
""", "searchsorted")
    # numba's indexing does not check bounds: a bad sorter would read past x
    return Kernel(f"""
def {{name}}(x, v, sorter):
    if sorter.size and (sorter.min() < 0 or sorter.max() >= x.shape[0]):
        raise ValueError({SORTER_RANGE!r})
    xs = x[sorter]
    return {found}
""", "searchsorted")


@numba_funcify.register(Unique)
def _unique(op, node, ctx):
    x = node.inputs[0]
    flat = "np.full(1, x)" if x.ndim == 0 else "c_contiguous(x).ravel()"
    # NaN != NaN: two NaNs side by side continue one run
    same = ("s[i] == s[i - 1] or (np.isnan(s[i]) and np.isnan(s[i - 1]))"
            if x.dtype.startswith("float") else "s[i] == s[i - 1]")
    outs = ["s[first]"] + [name for name, want in (
        ("perm[first]", op.return_index), ("inverse", op.return_inverse),
        ("counts", op.return_counts)) if want]
    ret = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
    return Kernel(f"""
def {{name}}(x):
    flat = {flat}
    perm = np.argsort(flat, kind='mergesort').astype(np.int64)
    s = flat[perm]
    n = s.shape[0]
    runs = 0
    run_of = alloc_empty(n, np.int64)
    for i in range(n):
        if i == 0 or not ({same}):
            runs += 1
        run_of[i] = runs - 1
    first = alloc_empty(runs, np.int64)
    counts = np.zeros(runs, np.int64)
    for i in range(n - 1, -1, -1):
        first[run_of[i]] = i
        counts[run_of[i]] += 1
    inverse = alloc_empty(n, np.int64)
    for i in range(n):
        inverse[perm[i]] = run_of[i]
    return {ret}
""", "unique", separate=True)

