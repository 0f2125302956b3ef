"""The PY executor: the reference evaluator over a FunctionGraph."""
from __future__ import annotations

import numpy as np

from ..graph.evaluate import PerformProgram
from .blas_threads import threads


class PythonExecutor:
    """Runs a graph with each op's `perform`.

    `perform` may return views of its inputs and constants, and nothing
    records which ones do, so every array output is copied: the caller gets
    arrays that share memory with no argument, constant or other output.
    """

    def __init__(self, fgraph):
        self.program = PerformProgram(fgraph.inputs, fgraph.outputs)

    def __call__(self, *values):
        with threads():   # NumPy's products on the BLAS threads rule's count (blas_threads.py)
            results = self.program(*values)
        return [r.copy() if isinstance(r, np.ndarray) else r for r in results]


def make_python_callable(fgraph):
    """A `PythonExecutor`: called with the graph's input values, returns its output values."""
    return PythonExecutor(fgraph)
