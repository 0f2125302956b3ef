"""Marker types for gradients that are not arrays.

A rule returns `disconnected_grad()` for an input the outputs do not depend
on, and `undefined_grad(...)` where the derivative does not exist (asking for
it is an error). Neither is ever added to a real gradient: the reverse sweep
filters them out.
"""
from __future__ import annotations

from .basic import Variable
from .type import Type


class DisconnectedType(Type):
    def filter(self, value, strict=False, allow_downcast=None):
        raise TypeError("a disconnected gradient has no value")

    def __eq__(self, other):
        return type(other) is DisconnectedType

    def __hash__(self):
        return hash(DisconnectedType)

    def __repr__(self):
        return "Disconnected"


class NullType(Type):
    """An undefined gradient; `why` says why it does not exist."""

    def __init__(self, why):
        self.why = why

    def filter(self, value, strict=False, allow_downcast=None):
        raise TypeError(f"an undefined gradient has no value ({self.why})")

    def __eq__(self, other):
        return type(other) is NullType and other.why == self.why

    def __hash__(self):
        return hash((NullType, self.why))

    def __repr__(self):
        return f"Undefined({self.why})"


def disconnected_grad():
    return Variable(DisconnectedType())


def undefined_grad(why):
    return Variable(NullType(why))


def is_disconnected(v):
    return v is None or isinstance(v.type, DisconnectedType)


def is_undefined(v):
    return v is not None and isinstance(v.type, NullType)
