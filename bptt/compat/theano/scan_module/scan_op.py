"""``theano.scan_module.scan_op``: the class of the scan nodes in a graph.

Code that finds loops in a compiled function (``isinstance(node.op, Scan)``
over ``f.maker.fgraph.toposort()``) finds bptt's. Their attributes are
bptt's (`bptt.scan.ScanInfo` in ``op.info``), plus Theano's ``op.fn``:
importing this module gives bptt's `Scan` a read-only ``fn`` whose
``fn.maker.fgraph`` views the loop's step graph (``toposort()``,
``apply_nodes``, ``inputs``, ``outputs``), which Theano code reads to see
what the rewrites left inside a loop. Theano's other Scan internals
(``fn.input_storage``, ``destroy_map``, ``inner_seqs``, ...) describe its
virtual machine and are not provided.
"""
from bptt.graph.fg import FunctionGraph
from bptt.scan.op import Scan as Scan

from ..compile.function import FunctionGraphView


class InnerFunction:
    """``scan_op.fn``: the step graph of one Scan, as Theano's inner function showed it."""

    def __init__(self, op):
        self.maker = _InnerMaker(op)


class _InnerMaker:
    def __init__(self, op):
        self.fgraph = FunctionGraphView(FunctionGraph(op.inner_inputs, op.inner_outputs,
                                                      clone=False))


if not hasattr(Scan, "fn"):
    Scan.fn = property(InnerFunction, doc="The step graph, read-only (Theano's ``op.fn``).")
