"""A compact infix rendering of a variable's graph, for printing and error messages.

``tanh(((W dot x) + b))``: elementwise ops by their scalar op's name, arithmetic and
comparisons infix, products as ``dot``. Ops are recognised by duck typing (a
``scalar_op`` attribute, the class name ``Dot``), so this module needs nothing above
the graph layer. Named variables below the top are shown by name, and nesting
deeper than `max_depth` is elided with ``...``.
"""
from __future__ import annotations

from .basic import Constant

_INFIX = {"add": "+", "mul": "*", "true_div": "/", "int_div": "//", "mod": "%", "pow": "**",
          "lt": "<", "gt": ">", "le": "<=", "ge": ">=", "eq": "==", "neq": "!="}


def expression(var, max_depth=100, leaf=None):
    """`var` as an infix expression.

    Parameters
    ----------
    var : Variable
    max_depth : int
        Levels of nesting shown; deeper subexpressions print as ``...``.
    leaf : callable, optional
        ``leaf(v)`` names an unnamed ownerless variable (None: its type).
    """
    return _render(var, 0, max_depth, leaf)


def _render(v, depth, max_depth, leaf):
    node = v.owner
    if node is None:
        if isinstance(v, Constant) or v.name:
            return repr(v)
        named = leaf(v) if leaf is not None else None
        return named or f"<{v.type}>"
    if v.name is not None and depth > 0:
        return v.name
    if depth > max_depth:
        return "..."
    args = [_render(a, depth + 1, max_depth, leaf) for a in node.inputs]
    name = getattr(getattr(node.op, "scalar_op", None), "name", None)
    if name in _INFIX and len(args) >= 2:
        return "(" + f" {_INFIX[name]} ".join(args) + ")"
    if name == "neg":
        return f"-{args[0]}"
    if type(node.op).__name__ == "Dot":
        return f"({args[0]} dot {args[1]})"
    indexed = _indexing(node.op, args)
    if indexed is not None:
        return indexed
    return f"{name or node.op}({', '.join(args)})"


def _indexing(op, args):
    """``x[i, 2]`` for a read by integer indices (an ``idx_list`` of ints and index
    inputs, no slices), else None."""
    if type(op).__name__ not in ("Subtensor", "AdvancedSubtensor"):
        return None
    entries, rest = [], iter(args[1:])
    for e in getattr(op, "idx_list", None) or ():
        if isinstance(e, int):
            entries.append(str(e))
        elif e in ("?", "[?]"):      # an index input: a scalar or an integer array
            entries.append(next(rest, "?"))
        else:
            return None
    return f"{args[0]}[{', '.join(entries)}]" if entries else None
