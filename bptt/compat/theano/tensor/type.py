"""``theano.tensor.type``: `TensorType` with Theano's signature."""
from __future__ import annotations

import numpy as np

from bptt.tensor.type import TensorType as _TensorType


class _TheanoTensorTypeMeta(type):
    """Makes ``TensorType(dtype, broadcastable)`` build bptt's type, and every bptt
    `TensorType` an instance of Theano's name for it."""

    def __call__(cls, dtype, broadcastable=None, name=None, shape=None):
        if broadcastable is not None and shape is not None:
            raise TypeError("TensorType: give broadcastable (Theano's pattern) or shape, not both")
        if shape is None:
            if broadcastable is None:
                raise TypeError("TensorType: expected Theano's broadcastable pattern, one flag "
                                "per dimension (True where the length is 1), e.g. "
                                "TensorType('float64', (False, True))")
            shape = broadcastable_shape(broadcastable)
        return _TensorType(dtype, shape)

    def __instancecheck__(cls, obj):
        return isinstance(obj, _TensorType)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, _TensorType)


class TensorType(metaclass=_TheanoTensorTypeMeta):
    """Theano's ``TensorType(dtype, broadcastable)``: a bptt `TensorType` whose
    dimensions marked True have static length 1 and the others any length.

    ``isinstance(x.type, TensorType)`` holds for every bptt tensor type.
    """


def broadcastable_shape(broadcastable):
    """The static shape of Theano's broadcastable pattern: 1 where True, None where
    False. Sizes are refused: Theano's second argument is flags, not lengths."""
    pattern = tuple(broadcastable)
    if any(not isinstance(b, (bool, np.bool_)) and b not in (0, 1) for b in pattern):
        raise TypeError(f"TensorType: broadcastable={pattern} holds lengths; Theano's pattern "
                        "is one True/False flag per dimension (True where the length is 1)")
    return tuple(1 if b else None for b in pattern)
