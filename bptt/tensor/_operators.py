"""NumPy-style operators and methods of `TensorVariable`, gathered in one place.

Every method forwards to the function of the op library that implements it;
imports are local because the library itself builds on TensorVariable.
"""
# ruff: noqa: N807
import numpy as np


def _m():
    from . import math

    return math


def _b():
    from . import basic

    return basic


def _x():
    from . import extra_ops

    return extra_ops


def _search():
    from . import search

    return search


def _s():
    import importlib  # `from . import shape` would get the function bptt.tensor.shape

    return importlib.import_module(".shape", __package__)


def __add__(self, other): return _m().add(self, other)
def __radd__(self, other): return _m().add(other, self)
def __sub__(self, other): return _m().sub(self, other)
def __rsub__(self, other): return _m().sub(other, self)
def __mul__(self, other): return _m().mul(self, other)
def __rmul__(self, other): return _m().mul(other, self)
def __truediv__(self, other): return _m().true_div(self, other)
def __rtruediv__(self, other): return _m().true_div(other, self)
def __floordiv__(self, other): return _m().int_div(self, other)
def __rfloordiv__(self, other): return _m().int_div(other, self)
def __mod__(self, other): return _m().mod(self, other)
def __rmod__(self, other): return _m().mod(other, self)
def __pow__(self, other): return _m().pow(self, other)
def __rpow__(self, other): return _m().pow(other, self)
def __matmul__(self, other): return _m().matmul(self, other)
def __rmatmul__(self, other): return _m().matmul(other, self)
def __neg__(self): return _m().neg(self)
def __pos__(self): return self
def __abs__(self): return _m().abs(self)
def __lt__(self, other): return _comparison(_m().lt(self, other))
def __le__(self, other): return _comparison(_m().le(self, other))
def __gt__(self, other): return _comparison(_m().gt(self, other))
def __ge__(self, other): return _comparison(_m().ge(self, other))
def __and__(self, other): return _m().and_(self, other)
def __rand__(self, other): return _m().and_(other, self)
def __or__(self, other): return _m().or_(self, other)
def __ror__(self, other): return _m().or_(other, self)
def __xor__(self, other): return _m().xor(self, other)
def __rxor__(self, other): return _m().xor(other, self)
def __invert__(self): return _m().invert(self)


def __getitem__(self, index):
    from .subtensor import getitem

    return getitem(self, index)


def __iter__(self):
    # A vector of static length unpacks (``n, d = x.shape``), as in Theano; anything else
    # would be a loop over symbolic rows, which is scan's job.
    n = self.type.shape[0] if self.type.ndim == 1 else None
    if n is None:
        raise TypeError("a symbolic tensor cannot be iterated in Python, except a vector of "
                        "static length (as x.shape is); index it with x[i] or loop with "
                        "bptt.scan")
    return (self[i] for i in range(n))


def __len__(self):
    raise TypeError("len() of a symbolic tensor is unknown; use x.shape[0]")


def _comparison(result):
    result._from_comparison_operator = True
    return result


def __bool__(self):
    # Theano's rule, which its programs rely on (``if not input: input = T.matrix()``): a
    # variable is true, except the result of ``<``, ``<=``, ``>``, ``>=``, so that a chained
    # ``a < b < c`` (Python's ``(a < b) and (b < c)``) fails instead of dropping ``a < b``.
    if getattr(self, "_from_comparison_operator", False):
        raise TypeError("the truth value of a symbolic comparison is unknown when the graph is "
                        "built: a < b < c is (a < b) and (b < c); write "
                        "T.and_(a < b, b < c), or T.switch(cond, x, y) to choose a value")
    return True


def eval(self, inputs_to_values=None):  # noqa: A001  (Theano's method name)
    """The value of this variable, as Theano's ``Variable.eval``.

    `inputs_to_values` maps each input variable the graph needs to a value
    (converted as a function argument is, Python floats to floatX included);
    shared variables give their current values. The graph runs on the
    reference evaluator, without compiling: a quick look at a value. As in
    Theano, whose ``eval`` compiles a function, the default updates of the
    shared variables read are applied (a random draw advances its stream, so
    two calls draw different numbers); explicit updates exist only in a
    `bptt.function`.
    """
    from ..config import config
    from ..graph.evaluate import evaluate
    from .type import TensorType

    givens = {}
    for var, value in (inputs_to_values or {}).items():
        if isinstance(value, float) and var.type.dtype == config.floatX:
            value = np.asarray(value, dtype=var.type.dtype)   # as a function argument
        what = f"eval: the value of {var}"
        if not isinstance(var.type, TensorType):      # a random generator
            givens[var] = var.type.filter(value, strict=False, what=what)
            continue
        givens[var] = var.type.filter(value, strict=False, what=what,
                                      downcast_fix=f"round it: np.asarray(value, {var.dtype!r})")
    updated = _default_updates_read(self, givens)
    outputs = [self] + [sv.default_update for sv in updated]
    _give_shared_values(outputs, givens)
    values = evaluate(outputs, givens)
    # every value is computed before any is stored: a failed eval changes no state
    for sv, value in zip(updated, values[1:]):
        sv.container[0] = value
    return values[0]


def _default_updates_read(var, givens):
    """The shared variables that `var`'s graph reads and that have a default update, with
    those the updates read in turn (as `bptt.function` adds them), minus those in `givens`."""
    from ..graph.traversal import graph_inputs
    from .sharedvar import SharedVariable

    updated, frontier = [], [var]
    while frontier:
        new = [v for v in graph_inputs(frontier, blockers=givens)
               if isinstance(v, SharedVariable) and v.default_update is not None
               and v not in givens and v not in updated]
        updated += new
        frontier = [v.default_update for v in new]
    return updated


def _give_shared_values(outputs, givens):
    """Add to `givens` the current value of every shared variable `outputs` read; any other
    input the graph needs and `givens` lacks is an error naming it."""
    from ..graph.basic import Constant
    from ..graph.fg import MissingInputError
    from ..graph.traversal import graph_inputs
    from .sharedvar import SharedVariable

    for var in graph_inputs(outputs, blockers=givens):
        if var in givens or isinstance(var, Constant):
            continue
        if not isinstance(var, SharedVariable):
            raise MissingInputError(f"eval: the graph needs {var.describe()}; give its value: "
                                    f"x.eval({{{var.name or 'variable'}: value}})")
        givens[var] = var.get_value(borrow=True)


def _prop(fn):
    return property(fn)


ndim = _prop(lambda self: self.type.ndim)
dtype = _prop(lambda self: self.type.dtype)
broadcastable = _prop(lambda self: self.type.broadcastable)
shape = _prop(lambda self: _s().shape(self))
size = _prop(lambda self: _m().prod(_s().shape(self)))
T = _prop(lambda self: _s().transpose(self))


def sum(self, axis=None, keepdims=False, dtype=None): return _m().sum(self, axis, keepdims, dtype)
def mean(self, axis=None, keepdims=False): return _m().mean(self, axis, keepdims)
def prod(self, axis=None, keepdims=False): return _m().prod(self, axis, keepdims)
def max(self, axis=None, keepdims=False): return _m().max(self, axis, keepdims)
def min(self, axis=None, keepdims=False): return _m().min(self, axis, keepdims)
def var(self, axis=None, keepdims=False): return _m().var(self, axis, keepdims)
def std(self, axis=None, keepdims=False): return _m().std(self, axis, keepdims)
def all(self, axis=None, keepdims=False): return _m().all(self, axis, keepdims)
def any(self, axis=None, keepdims=False): return _m().any(self, axis, keepdims)
def argmax(self, axis=None, keepdims=False): return _m().argmax(self, axis, keepdims)
def argmin(self, axis=None, keepdims=False): return _m().argmin(self, axis, keepdims)
def cumsum(self, axis=None): return _x().cumsum(self, axis)
def cumprod(self, axis=None): return _x().cumprod(self, axis)
def dot(self, other): return _m().dot(self, other)
def clip(self, lo, hi): return _m().clip(self, lo, hi)
def round(self): return _m().round(self)
def astype(self, dtype): return _b().cast(self, dtype)
def copy(self): return _b().tensor_copy(self)
def reshape(self, *shape, ndim=None):
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)) or len(shape) == 1 and getattr(shape[0], "ndim", 0) == 1:
        shape = shape[0]
    return _s().reshape(self, shape, ndim=ndim)
def dimshuffle(self, *pattern):
    if len(pattern) == 1 and isinstance(pattern[0], (list, tuple)):
        pattern = pattern[0]
    return _s().dimshuffle(self, pattern)
def transpose(self, *axes):
    if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
        axes = axes[0]
    return _s().transpose(self, axes or None)
def flatten(self, ndim=1): return _s().flatten(self, ndim)
def squeeze(self, axis=None): return _s().squeeze(self, axis)
def nonzero(self, return_matrix=False): return _search().nonzero(self, return_matrix)
def nonzero_values(self): return _search().nonzero_values(self)
