"""Writing the loop's source: indented lines, raising statements, checked row writes.

Shared by every feature of the Scan lowering (this package's other modules).
"""
from __future__ import annotations

from ...errors import template


class Writer:
    """The loop function's lines; ``w(depth, text)`` appends `text` indented `depth` levels."""

    def __init__(self):
        self.lines = []

    def __call__(self, depth, text):
        self.lines.append("    " * depth + text)


def fail(*parts):
    """A statement raising ValueError: text parts alternate with integer expressions.

    Numba stores the values without formatting them (cheap to compile);
    `bptt.link.numba.errors.reformat` builds the message in Python.
    """
    texts, exprs = parts[0::2], parts[1::2]
    text = "{}".join(template(t) for t in texts)
    return f"raise ValueError({text!r}, {', '.join(exprs)})"


def fail_format(message, *exprs):
    """A statement raising ValueError: `message` a ``str.format`` template with one ``{}``
    per integer expression (the templates `bptt.scan.op` shares with the PY loop)."""
    return f"raise ValueError({message!r}, {', '.join(exprs)})"


def write_row(w, op, depth, buf, row, o, copy=False):
    """Inner output `o` of the step (``out[o]``) written into row `row` of `buf`, its shape
    checked against the rows' (the step must return one shape at every step)."""
    if not op.inner_outputs[o].type.ndim:
        w(depth, f"{buf}[{row}] = out[{o}]")
        return
    w(depth, f"if not fits_rows({buf}, out[{o}]):")
    w(depth + 1, fail(f"{op.info.label}: at step ", "t", f", {op.label_of_output(o)} has shape ",
                      f"out[{o}].shape", ", but the rows it is stored in have shape ",
                      f"{buf}.shape[1:]",
                      "; the step function must return the same shape at every step"))
    # The rows may be a sequence's (nit_sot_into_seq), typed "A": copy_into writes each
    # element through the row's own strides, whatever its layout.
    # copy: the value may overlap the row it goes to (a nit_sot stored in its sequence).
    src = f"c_copy(out[{o}])" if copy else f"out[{o}]"
    w(depth, f"copy_into({buf}[{row}], {src})")
