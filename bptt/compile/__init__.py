"""Compiling graphs into callables: `function`, `shared`, modes, rewrites, profiling."""
from .function import Function as Function, function as function
from ..tensor.sharedvar import SharedVariable as SharedVariable, shared as shared
from .io import In as In
