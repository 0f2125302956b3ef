"""``theano.scan_module.scan_op``: the class of the scan nodes in a graph.

Code that finds loops in a compiled function (``isinstance(node.op, Scan)``
over ``f.maker.fgraph.toposort()``) finds bptt's. Their attributes are
bptt's (`bptt.scan.ScanInfo` in ``op.info``), not Theano's.
"""
from bptt.scan.op import Scan as Scan
