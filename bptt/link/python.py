"""The PY executor: the reference evaluator over a FunctionGraph."""
from __future__ import annotations

from ..graph.evaluate import PerformProgram


def make_python_callable(fgraph):
    """A callable taking the graph's input values and returning its output values."""
    return PerformProgram(fgraph.inputs, fgraph.outputs)
