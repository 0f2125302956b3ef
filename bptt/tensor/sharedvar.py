"""Shared variables: symbolic variables with a value that persists between calls.

`function` reads a shared variable's value when called and writes the new
value given by its update after the call succeeded.

Borrowing follows Theano. ``borrow=False`` (the default) means the shared
variable and the caller never share memory: `shared` and `set_value` store a
copy, `get_value` returns one. ``borrow=True`` lets them share memory when
that is possible, which saves a copy of a large array but makes in-place
changes visible on the other side; an array that cannot be used as it is
(wrong dtype, or not C-contiguous) is still copied.
"""
from __future__ import annotations

import copy
import itertools
import threading

import numpy as np

from ..graph.basic import Variable
from .type import TensorType, TensorVariable


_order = itertools.count()


class Container(list):
    """A shared variable's value: a one-element list, and the lock a function holds
    while it reads the variable, computes and writes its update.

    A function locks the containers of the variables it updates, in the order
    they were created (`order`), so two functions updating overlapping sets
    never wait for each other in a cycle.
    """

    __slots__ = ("lock", "order")

    def __init__(self, value=None):
        super().__init__([value])
        self.lock = threading.Lock()
        self.order = next(_order)

    def __reduce__(self):
        return Container, (self[0],)


class SharedVariable(Variable):
    """Mixin holding `container` (a `Container`) and `default_update`.

    Clones (made when a graph is copied) share the container, so every copy
    of the variable sees the same value.
    """

    def _init_shared(self, value, strict, allow_downcast, borrow):
        self.container = Container()
        self.default_update = None
        self.set_value(value, borrow=borrow)

    def get_value(self, borrow=False):
        """The current value: a copy, or with ``borrow=True`` the stored object itself."""
        v = self.container[0]
        if borrow:
            return v
        return v.copy() if isinstance(v, np.ndarray) else copy.deepcopy(v)

    def set_value(self, value, borrow=False):
        """Store `value` after checking it fits the variable's type.

        The conversion rules are those of function arguments (lossless
        conversions only). Without `borrow` the stored value never shares
        memory with `value`.
        """
        v = self._filtered(value)
        if isinstance(v, np.ndarray):
            aliased = v is value or (isinstance(value, np.ndarray) and np.may_share_memory(v, value))
            if (aliased and not borrow) or not (v.flags.carray and v.dtype.isnative):
                # Compiled code wants C-contiguous, writeable, native-order arrays.
                v = np.array(v, dtype=v.dtype.newbyteorder("="), order="C")
        elif not borrow and v is value:
            v = copy.deepcopy(v)
        self.container[0] = v

    def _filtered(self, value):
        return self.type.filter(value, strict=False, allow_downcast=False, what=self._what())

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

    def _filtered(self, value):
        # the fix of a lossy value is a cast: there is no function to compile with
        # allow_input_downcast here
        fix = f"accept the rounding: set_value(value.astype({self.dtype!r}))"
        return self.type.filter(value, strict=False, allow_downcast=False, what=self._what(),
                                downcast_fix=fix)


def shared(value, name=None, borrow=False, shape=None):
    """A shared variable holding `value`.

    Parameters
    ----------
    value : array_like, Python number or numpy.random.Generator
        Arrays keep their dtype; Python ints become int64, floats floatX,
        bools bool.
    name : str, optional
    borrow : bool
        Store `value` itself (no copy) when it can be used as it is.
    shape : tuple of int or None, optional
        Static shape. By default every dimension has unknown size, so the
        value may change shape with `set_value`.

    Returns
    -------
    SharedVariable
    """
    from ..config import config

    if isinstance(value, np.random.Generator):
        from .random import RandomGeneratorSharedVariable, RandomGeneratorType

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
    if shape is not None and len(shape) != arr.ndim:
        raise ValueError(f"shared: shape {tuple(shape)} has {len(shape)} entries but the value "
                         f"has {arr.ndim} dimension(s)")
    ttype = TensorType(arr.dtype, (None,) * arr.ndim if shape is None else shape)
    return TensorSharedVariable(ttype, arr, name, borrow=borrow)
