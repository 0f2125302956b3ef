"""Array construction."""
import numpy as np

from ....tensor.assertion import Check
from ....tensor.basic import Alloc, ARange, GradClip, Join, MakeVector
from ..registry import Kernel, np_dtype, numba_funcify


@numba_funcify.register(Alloc)
def _alloc(op, node, ctx):
    out = node.outputs[0]
    nd = out.ndim
    if nd == 0:
        return "{0}"
    dt = np_dtype(out.dtype)
    # Inline (alloc_full/alloc_empty write the allocation into the caller): a kernel
    # per ndim was a compiled function, and np.full inside it another one.
    shape = "(" + "".join(f"{{{i + 1}}}, " for i in range(nd)) + ")"
    if node.inputs[0].ndim == 0:
        return f"alloc_full({shape}, {{0}}, {dt})"
    return f"broadcast_into(alloc_empty({shape}, {dt}), {{0}})"


@numba_funcify.register(ARange)
def _arange(op, node, ctx):
    # NumPy's algorithm, so that float32 ranges round the same way: the length is
    # ceil((stop - start) / step) computed in the bounds' promoted type (float32
    # bounds: float32 arithmetic; integers: a float64 quotient), the first two values
    # are converted to the dtype and the rest are start + i * (second - first) in it.
    dt = op.dtype
    bounds = np.result_type(*(i.dtype for i in node.inputs))
    cast = np_dtype(bounds.name) if bounds.kind == "f" else ""
    return Kernel(f"""
def {{name}}(start, stop, step):
    if step == 0:
        raise ValueError('arange: step must not be 0')
    n = int(np.ceil(({cast}(stop) - {cast}(start)) / {cast}(step)))
    out = alloc_empty(max(n, 0), {np_dtype(dt)})
    if n > 0:
        out[0] = start
    if n > 1:
        out[1] = start + step
        first = out[0]
        delta = out[1] - out[0]
        for i in range(2, n):
            out[i] = first + {np_dtype(dt)}(i) * delta
    return out
""", "arange")


@numba_funcify.register(MakeVector)
def _make_vector(op, node, ctx):
    # Inline statements: a kernel was a compiled function per number of elements.
    out = ctx.fresh("mv")
    lines = [f"{out} = alloc_empty({len(node.inputs)}, {np_dtype(op.dtype)})"]
    lines += [f"{out}[{i}] = {{{i}}}" for i in range(len(node.inputs))]
    return "\n".join(lines + [out])


@numba_funcify.register(Join)
def _join(op, node, ctx):
    return _join_inline(node, op.axis, ctx.fresh("jn"))


_JOIN_ERROR = ("all the input array dimensions except for the concatenation axis must match "
               "exactly, but along dimension {}, the array at index 0 has size {} and the "
               "array at index {} has size {}").replace("{}", "{{}}")  # a template in a template


def _join_inline(node, axis, out):
    """Inline statements joining along `axis`: one allocation, a block copy per input.

    np.concatenate was a compiled function per (count, ndim) and its kernel another
    (benchmarks/notes.md).
    """
    ins, nd = node.inputs, node.outputs[0].ndim
    lines = []
    for k in range(1, len(ins)):
        for d in range(nd):
            if d != axis:
                lines += [f"if {{{k}}}.shape[{d}] != {{0}}.shape[{d}]:",
                          f"    raise ValueError({_JOIN_ERROR!r}, {d}, {{0}}.shape[{d}], {k}, "
                          f"{{{k}}}.shape[{d}])"]
    total = " + ".join(f"{{{k}}}.shape[{axis}]" for k in range(len(ins)))
    shape = "".join(f"{total}, " if d == axis else f"{{0}}.shape[{d}], " for d in range(nd))
    lines += [f"{out} = alloc_empty(({shape}), {np_dtype(node.outputs[0].dtype)})",
              f"{out}_at = 0"]
    lead = ":, " * axis
    for k in range(len(ins)):
        lines += [f"copy_into({out}[{lead}{out}_at:{out}_at + {{{k}}}.shape[{axis}]], {{{k}}})",
                  f"{out}_at += {{{k}}}.shape[{axis}]"]
    return "\n".join(lines + [out])


@numba_funcify.register(Check)
def _check(op, node, ctx):
    """Inline statements: as a function of its own, each Check cost a numba compilation
    for one comparison. Values travel with the template; errors.reformat builds
    the message in Python."""
    values = "".join(f", {{{i}}}" for i in range(2, len(node.inputs)))
    message = op.message.replace("{", "{{").replace("}", "}}")   # a template in a template
    return "\n".join(["if not {1}:",
                      f"    raise {op.error}({message!r}{values})",
                      "{0}"])


@numba_funcify.register(GradClip)
def _grad_clip(op, node, ctx):
    return "{0}"   # the identity: only its gradient differs
