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
`broadcast_message` turns them back into the operands' own shapes, written as
NumPy writes them, and says which dimension disagrees and how to fix it.
"""
from __future__ import annotations


def template(text):
    """`text` made safe to use as a literal part of a ``str.format`` template."""
    return text.replace("{", "{{").replace("}", "}}")


def reformat(exc):
    """`exc` with its (template, values...) arguments turned into one message."""
    args = exc.args
    if len(args) == 2 and isinstance(args[0], str) and args[0].startswith(_BROADCAST):
        return _replaced(exc, broadcast_message(args[1]))
    if len(args) > 1 and isinstance(args[0], str) and "{}" in args[0]:
        try:
            return _replaced(exc, args[0].format(*args[1:]))
        except Exception:  # noqa: BLE001  (an exception that only looks like ours)
            return exc
    return exc


def _replaced(exc, message):
    new = type(exc)(message)
    new.__traceback__ = exc.__traceback__
    return new


_BROADCAST = "operands could not be broadcast together with shapes"  # elemwise_runtime's


def broadcast_message(padded):
    """The message for operands of `padded` shapes (aligned, -2 absent, -1 static 1).

    ``((-2, 3), (2, 4))`` (a vector of 3 and a 2 x 4 matrix) gives NumPy's
    ``operands could not be broadcast together with shapes (3,) (2,4)``, then the
    dimension whose sizes differ and what to change.
    """
    shapes = [tuple(1 if d == -1 else d for d in s if d != -2) for s in padded]
    own = " ".join("(" + ",".join(map(str, s)) + ("," if len(s) == 1 else "") + ")"
                   for s in shapes)
    nd = len(padded[0]) if padded else 0
    for d in range(nd):
        sizes = sorted({s[d] for s in padded if s[d] >= 0 and s[d] != 1})
        if len(sizes) > 1:
            which = ("the last dimension" if d == nd - 1
                     else f"dimension {d - nd} (counting from the right)")
            return (f"{_BROADCAST} {own}: {which} has sizes {' and '.join(map(str, sizes))}; "
                    "the operands must agree in each dimension, or have size 1 where they "
                    "broadcast (reshape, slice or dimshuffle an operand to match)")
    return f"{_BROADCAST} {own}"
