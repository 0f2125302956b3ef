"""Error messages from compiled code.

Formatting a message inside numba code (``"..." + str(n)``) costs about a
second of compile time per call site. Generated code therefore raises
``ValueError(template, value, ...)``: a constant template with ``{}`` slots and
the run-time values, which numba stores without formatting. `reformat`
builds the message in Python when the exception leaves compiled code, so the
user sees the same text as in PY mode.
"""
from __future__ import annotations


def template(text):
    """`text` made safe to use as a literal part of a ``str.format`` template."""
    return text.replace("{", "{{").replace("}", "}}")


def reformat(exc):
    """`exc` with its (template, values...) arguments turned into one message."""
    args = exc.args
    if len(args) > 1 and isinstance(args[0], str) and "{}" in args[0]:
        try:
            new = type(exc)(args[0].format(*args[1:]))
        except Exception:  # noqa: BLE001  (an exception that only looks like ours)
            return exc
        new.__traceback__ = exc.__traceback__
        return new
    return exc
