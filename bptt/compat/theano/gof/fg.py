"""``theano.gof.fg``: `FunctionGraph` and `MissingInputError`."""
from bptt.graph.fg import FunctionGraph as FunctionGraph, MissingInputError as MissingInputError
