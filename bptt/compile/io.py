"""`In`: a function input with a default value, a keyword name, or conversion options."""
from __future__ import annotations

from ..graph.basic import Variable


class In:
    """Describe one input of `bptt.function` (Theano's ``theano.In``).

    Parameters
    ----------
    variable : Variable
        The symbolic input.
    name : str, optional
        The keyword the call accepts for it (default: the variable's name).
    value : optional
        The value used when the call omits the argument.
    allow_downcast : bool or None, optional
        As `function`'s `allow_input_downcast`, for this input only.
    mutable, borrow, strict : bool
        Accepted for Theano code. bptt never writes into an argument nor
        returns memory shared with one, so these change nothing.
    """

    def __init__(self, variable, name=None, value=None, update=None, mutable=False,
                 strict=False, allow_downcast=None, autoname=True, implicit=None, borrow=False,
                 shared=False):
        if not isinstance(variable, Variable):
            raise TypeError(f"In: expected a symbolic variable, got {type(variable).__name__}")
        if update is not None:
            raise NotImplementedError("In(update=...) is not supported: make the state a shared "
                                      "variable and pass its update to function(updates=...)")
        self.variable, self.name, self.value = variable, name, value
        self.allow_downcast = allow_downcast
        self.mutable, self.borrow, self.strict = mutable, borrow, strict

    def __repr__(self):
        return f"In({self.variable!r})"


def split_inputs(inputs):
    """The variables of `inputs` (variables or `In`), their keyword names and defaults.

    Returns ``(variables, names, defaults)``: ``names`` maps a position to the
    keyword an `In` gave it, ``defaults`` a position to its default value.
    """
    variables, names, defaults = [], {}, {}
    for i, x in enumerate(inputs):
        if isinstance(x, In):
            variables.append(x.variable)
            if x.name is not None:
                names[i] = x.name
            if x.value is not None:
                defaults[i] = x.value
        else:
            variables.append(x)
    return variables, names, defaults
