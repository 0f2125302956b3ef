"""``theano.gof``: the graph classes and helpers Theano code imports from it."""
from bptt.graph.basic import Apply as Apply, Constant as Constant, Variable as Variable
from bptt.graph.op import Op as Op

from . import fg as fg, graph as graph
