"""``theano.scan_module.scan_utils``: the graph comparison Theano code imports from it."""
from ..gof.graph import equal_computations as equal_computations  # noqa: F401
