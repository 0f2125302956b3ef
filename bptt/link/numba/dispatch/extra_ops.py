"""Running sums and products (`CumOp`): one loop nest over the input in C order.

With an axis, the summed axis is the innermost loop and the accumulator
restarts for every position of the others; without one, the nest runs over
every element and writes the flat output in order. The accumulator has the
output dtype and adds (multiplies) in input order, as NumPy's cumsum does,
so float32 results agree bit for bit. Plain indexing, no reshape or
transpose: those made each kernel several times slower to compile.
"""
from ....tensor.extra_ops import CumOp
from ..registry import Kernel, np_dtype, numba_funcify


@numba_funcify.register(CumOp)
def _cum_op(op, node, ctx):
    x, dt = node.inputs[0], np_dtype(node.outputs[0].dtype)
    if x.ndim == 0:
        return f"np.full(1, {dt}({{0}}), {dt})"
    order = list(range(x.ndim)) if op.axis is None else (
        [i for i in range(x.ndim) if i != op.axis] + [op.axis])
    elem = ", ".join(f"j{i}" for i in range(x.ndim))
    start = f"{dt}({0 if op.mode == 'add' else 1})"
    step = f"acc {'+' if op.mode == 'add' else '*'} x[{elem}]"
    lines = ["def {name}(x):"]
    if op.axis is None:
        lines += ["    out = alloc_empty(x.size, %s)" % dt, "    k = 0", f"    acc = {start}"]
    else:
        lines.append(f"    out = alloc_empty(x.shape, {dt})")
    ind = "    "
    for depth, i in enumerate(order):
        if op.axis is not None and depth == x.ndim - 1:
            lines.append(f"{ind}acc = {start}")
        lines.append(f"{ind}for j{i} in range(x.shape[{i}]):")
        ind += "    "
    lines.append(f"{ind}acc = {dt}({step})")
    if op.axis is None:
        lines += [f"{ind}out[k] = acc", f"{ind}k += 1"]
    else:
        lines.append(f"{ind}out[{elem}] = acc")
    lines.append("    return out")
    return Kernel("\n".join(lines) + "\n", f"cum{op.mode}")
