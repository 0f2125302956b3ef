"""The IR: variables, applications, ops, types, function graphs and rewrites."""
from .basic import Apply as Apply, Constant as Constant, Variable as Variable
from .evaluate import PerformProgram as PerformProgram, evaluate as evaluate
from .fg import FunctionGraph as FunctionGraph, MissingInputError as MissingInputError
from .op import Op as Op
from .replace import clone as clone, clone_get_equiv as clone_get_equiv
from .replace import clone_replace as clone_replace
from .traversal import ancestors as ancestors, graph_inputs as graph_inputs
from .traversal import toposort as toposort
from .type import Type as Type
