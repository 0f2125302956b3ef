"""Exceptions a user can cause. Each is a ValueError or TypeError subclass."""
from .graph.fg import MissingInputError as MissingInputError


class UnusedInputError(ValueError):
    """A function input that no output depends on (see ``on_unused_input``)."""


class GradientError(ValueError):
    """Symbolic and numerical gradients disagree (raised by `verify_grad`)."""

    def __init__(self, message, *, input_index=None, abs_err=None, rel_err=None, where=None):
        super().__init__(message)
        self.input_index = input_index
        self.abs_err = abs_err
        self.rel_err = rel_err
        self.where = where


class DisconnectedInputError(ValueError):
    """`grad` was asked for an input the cost does not depend on."""


def report_disconnected(message, policy, stacklevel):
    """Raise `message` as a DisconnectedInputError or warn with it, as `policy`
    ("raise", "warn" or "ignore") says; `stacklevel` counts from the caller."""
    if policy == "raise":
        raise DisconnectedInputError(message)
    if policy == "warn":
        import warnings

        warnings.warn(message, stacklevel=stacklevel + 1)


def report_disconnected_wrt(i, w, policy, stacklevel):
    """`report_disconnected` for `grad`'s input ``wrt[i]``, `w`, that the cost does not
    depend on."""
    report_disconnected(f"grad: the cost does not depend on wrt[{i}], {w.describe()}; pass "
                        "disconnected_inputs='ignore' (or 'warn') if this is expected",
                        policy, stacklevel + 1)


class NullTypeGradError(TypeError):
    """A gradient that does not exist was requested."""


class ShapeError(ValueError):
    """Run-time shapes that do not fit together."""
