"""The `Type` contract: what values a variable may hold and how to check them."""
from __future__ import annotations


class Type:
    """Base class of variable types.

    Subclasses define equality (two variables of equal types are
    interchangeable), `filter` (validate and convert a runtime value) and the
    variable classes that carry the type.
    """

    variable_class = None
    constant_class = None

    def filter(self, value, strict=False, allow_downcast=None):
        """Return `value` as a valid value of this type or raise TypeError."""
        raise NotImplementedError

    def is_valid_value(self, value):
        try:
            self.filter(value, strict=True)
            return True
        except (TypeError, ValueError):
            return False

    def make_variable(self, name=None):
        from .basic import Variable

        cls = self.variable_class or Variable
        return cls(self, None, None, name)

    def __call__(self, name=None):
        return self.make_variable(name)

    def make_constant(self, value, name=None):
        from .basic import Constant

        cls = self.constant_class or Constant
        return cls(self, value, name)

    def value_signature(self, value):
        """Hashable summary of a value, for merging constants."""
        return id(value)

    def value_repr(self, value):
        return repr(value)

    def values_eq(self, a, b):
        return a is b or a == b


class GenericType(Type):
    """A type for arbitrary Python objects (used by a few internal ops)."""

    def filter(self, value, strict=False, allow_downcast=None):
        return value

    def __eq__(self, other):
        return type(self) is type(other)

    def __hash__(self):
        return hash(type(self))

    def __repr__(self):
        return "Generic"


generic = GenericType()
