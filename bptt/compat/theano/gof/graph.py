"""``theano.gof.graph``: graph traversal."""
from bptt.graph.basic import Apply as Apply, Constant as Constant, Variable as Variable
from bptt.graph.traversal import ancestors as ancestors, graph_inputs as inputs  # noqa: F401
