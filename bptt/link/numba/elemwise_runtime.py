"""Run-time helpers of the elementwise loop kernels (`dispatch/elemwise.py`).

`broadcast_shape(shapes)` is the output shape of NumPy broadcasting for a
tuple of equally long shapes. The loops pad shorter inputs on the left and
write dimensions of static size 1 as -1 (size 1; the generated code does not
read them). It is an overload compiled once per process for each (number of
shapes, ndim): written into every loop, the same code was about half of a
loop's compile time.
"""
from __future__ import annotations

import numba
import numba.extending
from numba.core import types

__all__ = ["broadcast_shape"]

BROADCAST_ERROR = "operands could not be broadcast together with shapes"


def _source(nd):
    # An entry -1 is a dimension of static size 1 (or a left padding): size 1, not read.
    lines = [f"def broadcast_shape_{nd}(shapes):"] + [f"    d{d} = 1" for d in range(nd)]
    lines += ["    bad = False", "    for s in shapes:"]
    for d in range(nd):
        lines += [f"        if s[{d}] != 1 and s[{d}] != -1:",
                  f"            if d{d} == 1:",
                  f"                d{d} = s[{d}]",
                  f"            elif d{d} != s[{d}]:",
                  "                bad = True"]
    lines += ["    if bad:",       # a (template, values) error: see link/numba/errors.py
              f"        raise ValueError('{BROADCAST_ERROR} {{}}', shapes)",
              f"    return ({''.join(f'd{d}, ' for d in range(nd))})"]
    return "\n".join(lines) + "\n"


def _implementations(max_nd=8):
    impls = {}
    for nd in range(1, max_nd + 1):
        # A function exec'd without __name__ belongs to module "builtins": numba then
        # cannot rebuild its environment when a caller is loaded from the disk cache, and
        # a raise with run-time values there ends as "RuntimeError: Error creating Python
        # tuple from runtime exception arguments" instead of the ValueError.
        ns = {"__name__": __name__}
        exec(_source(nd), ns)  # noqa: S102  (fixed, generated text)
        impls[nd] = ns[f"broadcast_shape_{nd}"]
    return impls


_IMPLS = _implementations()


def broadcast_shape(shapes):
    """``(d0, d1, ...)``: the broadcast of `shapes` (a tuple of tuples of one length, -1 for a
    static size 1); ValueError if they do not broadcast. Inside numba code only."""
    raise NotImplementedError  # replaced by the overload below inside numba


@numba.extending.overload(broadcast_shape, jit_options=dict(error_model="numpy", nogil=True))
def _broadcast_shape_overload(shapes):
    if not (isinstance(shapes, types.UniTuple) and isinstance(shapes.dtype, types.UniTuple)):
        raise numba.core.errors.TypingError("broadcast_shape: expected a tuple of shapes")
    return _IMPLS[shapes.dtype.count]
