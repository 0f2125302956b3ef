"""Shared variables: symbolic variables with a value that persists between calls.

`function` reads a shared variable's value when called and writes the new
value given by its update after the call succeeds.
"""
from __future__ import annotations

import copy

import numpy as np

from ..graph.basic import Variable
from ..tensor.type import TensorType, TensorVariable


class SharedVariable(Variable):
    """Mixin holding `container` (a one-element list) and `default_update`."""

    def _init_shared(self, value, strict, allow_downcast, borrow):
        self.container = [None]
        self.default_update = None
        self.set_value(value, borrow=borrow)

    def get_value(self, borrow=False):
        """The current value (a copy unless `borrow`)."""
        v = self.container[0]
        return v if borrow else copy.deepcopy(v)

    def set_value(self, value, borrow=False):
        """Store `value` after checking it fits the variable's type."""
        v = self.type.filter(value, strict=False, allow_downcast=False, what=self._what())
        if not borrow and v is value:
            v = copy.deepcopy(v)
        self.container[0] = v

    def _what(self):
        return f"shared variable {self.name!r}" if self.name else "shared variable"

    def clone(self, name=None):
        out = type(self).__new__(type(self))
        Variable.__init__(out, self.type, None, None, self.name if name is None else name)
        out.container = self.container
        out.default_update = self.default_update
        return out


class TensorSharedVariable(SharedVariable, TensorVariable):
    """A shared array."""

    __hash__ = Variable.__hash__

    def __init__(self, type, value, name=None, borrow=False):
        TensorVariable.__init__(self, type, None, None, name)
        self._init_shared(value, False, False, borrow)


class _TypeFilterShim:
    pass


def shared(value, name=None, borrow=False, shape=None):
    """A shared variable holding `value`.

    Arrays get a type whose dimensions have unknown size (so the value may
    change shape later) unless `shape` is given; Python ints and floats become
    int64 and floatX scalars (bools become bool). Values of other kinds (a
    NumPy random Generator) get their own types.
    """
    from ..config import config

    if isinstance(value, np.random.Generator):
        from ..tensor.random import RandomGeneratorSharedVariable, RandomGeneratorType

        return RandomGeneratorSharedVariable(RandomGeneratorType(), value, name, borrow)
    if isinstance(value, bool):
        arr = np.asarray(value)
    elif isinstance(value, int):
        arr = np.asarray(value, dtype="int64")
    elif isinstance(value, float):
        arr = np.asarray(value, dtype=config.floatX)
    else:
        arr = np.asarray(value)
    if arr.dtype == object:
        raise TypeError(f"shared: cannot store a value of type {type(value).__name__}")
    ttype = TensorType(arr.dtype, (None,) * arr.ndim if shape is None else shape)
    return TensorSharedVariable(ttype, arr if borrow else arr.copy(), name, borrow=True)
