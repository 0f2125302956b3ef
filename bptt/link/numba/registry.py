"""The one backend registry: ``numba_funcify.register(OpClass)``.

A lowering is a function ``(op, node, ctx) -> str | Kernel``:

* a ``str`` is an inline template; ``{0}``, ``{1}``... stand for the node's
  inputs. Its last line is the output's expression; lines before it are
  statements written into the graph function first (elementwise loops).
* a `Kernel` is the source of a function ``def {name}(inputs...)`` that
  returns the output (a tuple for several). Kernels with equal source are
  emitted once per module.
* a `Loop` is the source of such a function with one output, which the
  linker writes inline or calls as a shared kernel (see `Loop`).

Conventions inside generated code: 0-d tensors are numba scalars, arrays are
arrays; a lowering must return a scalar for a 0-d output.
"""
from __future__ import annotations

import re


class Kernel:
    """Source of one helper function; ``{name}`` marks where its name goes.

    ``separate=True`` has callers call it `separately` (compiled once on its
    own, not again inside each caller: see separate.py). For kernels doing
    real work (loops); a small one stays inlinable.
    """

    def __init__(self, source, hint="k", separate=False):
        self.source = source
        self.hint = hint
        self.separate = separate


class Loop:
    """Source of a loop function ``def {name}(i0, i1, ...)`` that returns its output in
    ``out`` on its last line (an elementwise loop, dispatch/elemwise.py).

    The linker writes it into the graph function where the module holds it once and
    makes it a shared `Kernel` called `separately` where the module holds it more
    than once, so each distinct loop is compiled once (see `inline`).
    """

    def __init__(self, source, hint):
        self.source = source
        self.hint = hint

    def inline(self, prefix):
        """The loop as an inline template: its body with locals renamed ``<prefix>_<name>``
        and input k read from ``{k}``, then, on the last line, the output."""
        def rename(m):
            return "{%s}" % m.group(2) if m.group(2) is not None else f"{prefix}_{m.group(1)}"

        lines = self.source.rstrip("\n").split("\n")
        assert lines[-1] == "    return out", "a Loop's source ends with `return out`"
        body = [_LOCAL.sub(rename, line[4:]) for line in lines[1:-1]]
        return "\n".join(body + [f"{prefix}_out"])


_LOCAL = re.compile(r"(?<![\w.])(i(\d+)|d\d+|[xfoe]\d+|j\d+|out|fout|oout|eout|t\d+)(?!\w)")


class _Registry:
    def __init__(self):
        self.table = {}

    def register(self, op_class):
        def deco(fn):
            self.table[op_class] = fn
            return fn

        return deco

    def lookup(self, op):
        for cls in type(op).__mro__:
            if cls in self.table:
                return self.table[cls]
        return None

    def __call__(self, op, node, ctx):
        fn = self.lookup(op)
        if fn is None:
            raise NotImplementedError(
                f"no numba lowering for {type(op).__name__}; register one with "
                f"numba_funcify.register({type(op).__name__}) or compile with mode='PY'")
        return fn(op, node, ctx)


numba_funcify = _Registry()


def np_dtype(dtype):
    """Source naming a numpy dtype usable inside numba code."""
    return "np.bool_" if dtype == "bool" else f"np.{dtype}"
