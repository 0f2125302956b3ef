"""Printing graphs: `debugprint` (an indented tree, Theano style) and `pprint` (infix).

`debugprint` prints one line per variable: the op that computes it (with its
props), an id, its type and its name; the inputs follow, indented with
`` |``. Every node gets an id (``[id A]``) when first printed; a node met
again is printed as a single line with its id instead of its whole subtree.

Ops holding an inner graph (anything with ``inner_inputs`` and
``inner_outputs`` attributes, such as `Scan`) get their inner graph printed
under the node, behind a header, with the inner outputs marked ``>``.
Example::

    tanh [id A] <Tensor(float64, (?,))>
     |add [id B] <Tensor(float64, (?,))>
     | |Dot [id C] <Tensor(float64, (?,))>
     | | |W [id D] <Tensor(float64, (?,?))>
     | | |x [id E] <Tensor(float64, (?,))>
     | |b [id F] <Tensor(float64, (?,))>
"""
from __future__ import annotations

import sys

from .graph.basic import Constant, Variable
from .graph.expression import expression


class _Ids:
    """Theano-style ids: A, B, ..., Z, BA, BB, ..."""

    def __init__(self):
        self.ids = {}

    def get(self, key):
        if key not in self.ids:
            self.ids[key] = self._label(len(self.ids))
        return self.ids[key]

    def seen(self, key):
        return key in self.ids

    @staticmethod
    def _label(n):
        letters = ""
        while True:
            letters = chr(ord("A") + n % 26) + letters
            n //= 26
            if n == 0:
                return letters


def _roots(obj):
    """(header, outputs) for whatever `debugprint` was given."""
    from .graph.fg import FunctionGraph

    fgraph = getattr(obj, "fgraph", None)
    if isinstance(fgraph, FunctionGraph):
        return _roots(fgraph)
    if isinstance(obj, FunctionGraph):
        return None, list(obj.outputs)
    if isinstance(obj, Variable):
        return None, [obj]
    if isinstance(obj, (list, tuple)) and all(isinstance(v, Variable) for v in obj):
        return None, list(obj)
    raise TypeError(f"debugprint: expected a variable, a list of variables, a FunctionGraph "
                    f"or a compiled function, got {type(obj).__name__}")


class _Printer:
    def __init__(self, print_type):
        self.print_type = print_type
        self.ids = _Ids()
        self.inner_done = set()
        self.lines = []

    def label(self, v):
        """The text of one variable's line (without indentation)."""
        node = v.owner
        if node is None:
            named = isinstance(v, Constant) or v.name is not None
            parts = [repr(v) if named else f"<{v.type}>", f"[id {self.ids.get(v)}]"]
            if self.print_type and named:
                parts.append(f"<{v.type}>")
            return " ".join(parts)
        head = str(node.op) + (f".{v.index}" if len(node.outputs) > 1 else "")
        parts = [head, f"[id {self.ids.get(node)}]"]
        if self.print_type:
            parts.append(f"<{v.type}>")
        if v.name is not None:
            parts.append(f"'{v.name}'")
        return " ".join(parts)

    def tree(self, root, line_prefix="", child_prefix=" |"):
        """Print `root` and, once per node, its inputs (iterative: graphs can be deep)."""
        stack = [("var", root, line_prefix, child_prefix)]
        while stack:
            kind, item, pre, child = stack.pop()
            if kind == "inner":
                self.inner(item, pre)
                continue
            node = item.owner
            repeated = node is not None and self.ids.seen(node)
            self.lines.append(pre + self.label(item))
            if node is None or repeated:
                continue
            if _has_inner_graph(node.op):
                stack.append(("inner", node, pre + "  ", None))
            for inp in reversed(node.inputs):
                stack.append(("var", inp, child, child + " |"))

    def inner(self, node, prefix):
        """The inner graph of `node` (printed after the node's inputs, behind a header)."""
        op = node.op
        header = f"{prefix}Inner graph of {op} [id {self.ids.get(node)}]"
        if id(op) in self.inner_done:
            self.lines.append(header + ": printed above")
            return
        self.inner_done.add(id(op))
        self.lines.append(header + ":")
        ins = ", ".join(self.label(v) for v in op.inner_inputs)
        self.lines.append(f"{prefix}  inner inputs: {ins}")
        for out in op.inner_outputs:
            self.tree(out, prefix + ">", prefix + "> |")


def _has_inner_graph(op):
    return hasattr(op, "inner_inputs") and hasattr(op, "inner_outputs")


def debugprint(obj, file=None, print_type=True):
    """Print the graph of `obj` as an indented tree and return the text.

    Parameters
    ----------
    obj : Variable, list of Variable, FunctionGraph or compiled function
        A compiled `bptt.function` prints its rewritten graph (``f.fgraph``).
    file : file-like, "str" or None
        Where to write (default: standard output); "str" only returns the text.
    print_type : bool
        Show each variable's type.

    Returns
    -------
    str
    """
    _, outputs = _roots(obj)
    printer = _Printer(print_type)
    for out in outputs:
        printer.tree(out)
    text = "\n".join(printer.lines) + "\n"
    if file == "str":
        return text
    (sys.stdout if file is None else file).write(text)
    return text


# -- pprint -------------------------------------------------------------------------

def pprint(var):
    """A compact infix rendering of `var`, e.g. ``tanh(((W dot x) + b))``.

    Named intermediate variables are shown by name; nesting deeper than 100
    levels is elided with ``...``.
    """
    return expression(var)
