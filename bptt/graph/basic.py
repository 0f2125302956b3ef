"""The nodes of the IR: variables, constants and the applications that link them.

A graph is bipartite: an `Apply` node records that an `Op` took some input
`Variable`s and produced output `Variable`s; a variable points back at the node
that computed it through `owner` (None for graph inputs and constants).
"""
from __future__ import annotations

import itertools

_ids = itertools.count()


class Tag(dict):
    """A variable's notes (a dict whose keys also read and write as attributes,
    as Theano's ``x.tag.test_value``)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"the tag has no {name!r}") from None

    def __setattr__(self, name, value):
        self[name] = value

    def __delattr__(self, name):
        del self[name]


class Variable:
    """A symbolic value of a given `Type`.

    Parameters
    ----------
    type : Type
        What values this variable can hold.
    owner : Apply or None
        The node that computes it; None for inputs.
    index : int or None
        Position among ``owner.outputs``.
    name : str or None
        Used in error messages and printing.
    """

    def __init__(self, type, owner=None, index=None, name=None):
        self.type = type
        self.owner = owner
        self.index = index
        self.name = name
        self.tag = Tag()
        self.auto_name = f"v{next(_ids)}"

    def clone(self, name=None):
        """A new, ownerless variable of the same type and class."""
        return type(self)(self.type, None, None, self.name if name is None else name)

    def __repr__(self):
        if self.name is not None:
            return self.name
        if self.owner is not None:
            op = str(self.owner.op)
            if len(self.owner.outputs) > 1:
                return f"{op}.{self.index}"
            return f"{op}.out"
        return f"<{self.type}>"

    def describe(self):
        """A phrase naming the variable for error messages."""
        if self.name is not None:
            return f"'{self.name}' ({self.type})"
        if self.owner is not None:
            return f"output {self.index} of {self.owner.op} ({self.type})"
        return f"an unnamed input ({self.type})"


class Constant(Variable):
    """A variable whose value is fixed when the graph is built."""

    def __init__(self, type, data, name=None):
        super().__init__(type, None, None, name)
        self.data = type.filter(data, strict=False, allow_downcast=True)

    def clone(self, name=None):
        return type(self)(self.type, self.data, self.name if name is None else name)

    def signature(self):
        """Hashable identity of (type, value), used to merge equal constants."""
        return (self.type, self.type.value_signature(self.data))

    def __repr__(self):
        if self.name is not None:
            return self.name
        return self.type.value_repr(self.data)


class Apply:
    """One application of `op` to `inputs`, producing `outputs`."""

    def __init__(self, op, inputs, outputs):
        self.op = op
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        for v in self.inputs:
            if not isinstance(v, Variable):
                raise TypeError(f"{op}: inputs must be Variables, got {type(v).__name__}")
        for i, out in enumerate(self.outputs):
            if out.owner is not None and (out.owner is not self or out.index != i):
                raise ValueError(f"{op}: output {i} already belongs to another node")
            out.owner = self
            out.index = i

    def clone_with_new_inputs(self, inputs, strict=True):
        """Apply the same op to `inputs`.

        With ``strict`` the new inputs must have the old types and the outputs
        keep their types; otherwise ``make_node`` re-derives them.
        """
        if strict:
            for old, new in zip(self.inputs, inputs):
                if old.type != new.type:
                    raise TypeError(
                        f"{self.op}: cannot replace input {old.describe()} by "
                        f"{new.describe()} of another type")
            outputs = [out.clone() for out in self.outputs]
            for out, old in zip(outputs, self.outputs):
                out.tag = Tag(old.tag)
            return Apply(self.op, inputs, outputs)
        return self.op.make_node(*inputs)

    @property
    def nin(self):
        return len(self.inputs)

    @property
    def nout(self):
        return len(self.outputs)

    @property
    def out(self):
        """The single output (error if there are several)."""
        if len(self.outputs) != 1:
            raise ValueError(f"{self.op} has {len(self.outputs)} outputs")
        return self.outputs[0]

    def __repr__(self):
        return f"{self.op}({', '.join(map(repr, self.inputs))})"
