"""Error messages from compiled code.

Formatting a message inside numba code (``"..." + str(n)``) costs about a
second of compile time per call site. Generated code therefore raises
``ValueError(template, value, ...)``: a constant template with ``{}`` slots and
the run-time values, which numba stores without formatting. `reformat`
builds the message in Python when the exception leaves compiled code, so the
user sees the same text as in PY mode.

The elementwise loops' broadcast check (`elemwise_runtime.broadcast_shape`)
raises with the shapes as the loop sees them, aligned to the right: -2 for a
dimension an operand does not have, -1 for one of static size 1.
`broadcast_message` (tensor/elemwise.py, shared with PY mode) turns them back
into the operands' own shapes, written as NumPy writes them, and says which
dimension disagrees and how to fix it.
"""
from __future__ import annotations

import string

from ...tensor.elemwise import BROADCAST_ERROR, broadcast_message  # noqa: F401  (re-exported)


def template(text):
    """`text` made safe to use as a literal part of a ``str.format`` template."""
    return text.replace("{", "{{").replace("}", "}}")


def reformat(exc):
    """`exc` with its (template, values...) arguments turned into one message."""
    args = exc.args
    if len(args) == 2 and isinstance(args[0], str) and args[0].startswith(_BROADCAST):
        return _replaced(exc, broadcast_message(args[1]))
    if len(args) > 1 and isinstance(args[0], str):
        try:   # any format field, as PY's str.format reads it: {}, {0}, {:.2f}
            if any(field is not None for _, field, _, _ in string.Formatter().parse(args[0])):
                return _replaced(exc, args[0].format(*args[1:]))
        except Exception:  # noqa: BLE001  (an exception that only looks like ours)
            return exc
    return exc


def _replaced(exc, message):
    new = type(exc)(message)
    new.__traceback__ = exc.__traceback__
    return new


_BROADCAST = BROADCAST_ERROR  # what elemwise_runtime's loops raise with (the same text)
