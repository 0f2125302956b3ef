"""Scan's arguments in canonical form (step 1 of `scan()`).

Sequences become `SeqSpec` (variable and taps), outputs_info one `OutSpec`
per output (mit_sot, sit_sot or nit_sot), n_steps a `Steps` (a number of
steps and a direction). Each argument is checked here, with a message naming
the scan and the argument. The tap helpers at the end cut the outer slice a
sequence tap reads, by Theano's rule (see `bptt.scan.basic`).
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import numpy as np

from ..graph.basic import Constant, Variable
from .utils import is_shared


@dataclass
class SeqSpec:
    var: Variable
    taps: tuple
    label: str

    @property
    def lo(self):
        return min(min(self.taps), 0)     # tap 0 counts as present (Theano's rule)

    @property
    def hi(self):
        return max(max(self.taps), 0)

    @property
    def span(self):
        """Rows of the sequence beyond the number of steps it allows."""
        return self.hi - self.lo

    def offset(self, k, backwards):
        """The row of the directed sequence (reversed when `backwards`) tap `k` reads first."""
        return self.hi - k if backwards else k - self.lo


@dataclass
class OutSpec:
    kind: str          # "mit_sot", "sit_sot" or "nit_sot"
    init: Variable | None
    taps: tuple
    position: int

    @property
    def depth(self):
        return -min(self.taps) if self.taps else 0

    def describe(self):
        what = f"output {self.position} of the step function"
        if self.init is not None:
            what += f" (initial state {value_name(self.init)}, outputs_info[{self.position}])"
        return what



def default_name(frame=None):
    """``scan@file:line`` of the first caller outside bptt.scan (or of `frame`'s
    code, for a wrapper that calls scan for its own caller)."""
    here = os.path.dirname(os.path.abspath(__file__))
    frame = frame or sys._getframe(1)
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == here:
        frame = frame.f_back
    if frame is None:
        return "scan"
    return f"scan@{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


def _as_list(x):
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def value_name(v):
    if getattr(v, "name", None):
        return repr(v.name)
    if isinstance(v, Constant):
        return f"the constant {v!r} ({v.type})"
    if is_shared(v):
        return f"an unnamed shared variable ({v.type})"
    return v.describe()


def as_tensor(x, what):
    from ..tensor.type import as_tensor_variable

    try:
        return as_tensor_variable(x)
    except TypeError as exc:
        raise TypeError(f"{what}: {exc}") from None


def canonical_sequences(sequences, label):
    out = []
    for i, s in enumerate(_as_list(sequences)):
        what = f"{label}: sequences[{i}]"
        if isinstance(s, dict):
            _check_dict_keys(s, _SEQUENCE_KEYS, what)
            if "input" not in s:
                raise ValueError(f"{what} is a dict without 'input'; write "
                                 f"dict(input=x, taps=[0])")
            var, taps = s["input"], s.get("taps", [0])
        else:
            var, taps = s, [0]
        var = as_tensor(var, what)
        taps = _tap_tuple([0] if taps is None else taps, what)
        if not taps:
            raise ValueError(f"{what}: taps=[] gives the step function no slice of the "
                             f"sequence; use taps=[0] for its current row, or drop it")
        if var.ndim == 0:
            raise TypeError(f"{what}, {value_name(var)}, is a scalar; a sequence needs a leading "
                            f"dimension to iterate over")
        out.append(SeqSpec(var, taps, value_name(var)))
    return out


def canonical_outputs_info(outputs_info, label):
    """One OutSpec per entry, or None when outputs_info is empty (count set by fn)."""
    entries = _as_list(outputs_info) if not isinstance(outputs_info, dict) else [outputs_info]
    return [_output_spec(e, p, label) for p, e in enumerate(entries)] or None


def _output_spec(entry, p, label):
    what = f"{label}: outputs_info[{p}]"
    if entry is None or (isinstance(entry, dict) and not entry):
        return OutSpec("nit_sot", None, (), p)
    if not isinstance(entry, dict):
        return OutSpec("sit_sot", as_tensor(entry, what), (-1,), p)
    _check_dict_keys(entry, _OUTPUT_KEYS, what)
    init = entry.get("initial")
    taps = entry["taps"] if "taps" in entry else ([-1] if init is not None else [])
    taps = _tap_tuple(taps, what)
    if init is None:
        if taps:
            raise ValueError(f"{what} asks for taps {list(taps)} but gives no initial state; "
                             f"add 'initial' (a value covering the deepest tap) or drop 'taps'")
        return OutSpec("nit_sot", None, (), p)
    init = as_tensor(init, what)
    if not taps:
        return OutSpec("nit_sot", None, (), p)
    _check_output_taps(taps, what)
    if taps == (-1,):
        return OutSpec("sit_sot", init, taps, p)
    spec = OutSpec("mit_sot", init, taps, p)
    if init.ndim == 0:
        raise ValueError(f"{what}: taps {list(taps)} need an initial state with a leading "
                         f"dimension of at least {spec.depth} rows, got the scalar "
                         f"{value_name(init)}")
    rows = init.type.shape[0]
    if rows is not None and rows < spec.depth:
        raise ValueError(f"{what}: taps {list(taps)} need {spec.depth} initial rows "
                         f"(init[0] is output[-{spec.depth}]), but {value_name(init)} has {rows}")
    return spec


_SEQUENCE_KEYS = ("input", "taps")
_OUTPUT_KEYS = ("initial", "taps")


def _check_dict_keys(entry, allowed, what):
    """A ValueError naming the first key of `entry` that scan does not read."""
    unknown = [k for k in entry if k not in allowed]
    if not unknown:
        return
    key = unknown[0]
    hint = (" (Theano deprecated it: take the rows you need from the output, e.g. out[-k:])"
            if key == "return_steps" else "")
    raise ValueError(f"{what} has the key {key!r}, which scan does not know{hint}; the keys "
                     f"are {', '.join(repr(k) for k in allowed)}, e.g. "
                     f"dict({allowed[0]}=..., taps=[...])")


def _tap_tuple(taps, what):
    """`taps` as a tuple of Python ints; a float (-1.5), bool or symbolic tap is a TypeError
    (a tap is a whole number of steps, and `int()` would truncate it silently)."""
    taps = taps.tolist() if isinstance(taps, np.ndarray) else _as_list(taps)
    for k in taps:
        if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
            raise TypeError(f"{what}: tap {k!r} in taps {taps!r} is not an integer; a tap is "
                            f"a whole number of steps, like -2 or 1")
    return tuple(int(k) for k in taps)


def _check_output_taps(taps, what):
    if len(set(taps)) != len(taps):
        raise ValueError(f"{what}: taps {list(taps)} repeat a tap; give each tap once")
    if 0 in taps:
        raise ValueError(f"{what}: tap 0 is the value the step computes, not an input; "
                         f"output taps must be negative (e.g. -1 for the previous step)")
    if any(k > 0 for k in taps):
        raise ValueError(f"{what}: taps {list(taps)} include future steps of an output; "
                         f"output taps must be negative")


def canonical_non_sequences(non_sequences):
    out = []
    for i, v in enumerate(_as_list(non_sequences)):
        out.append(v if isinstance(v, Variable) else as_tensor(v, f"non_sequences[{i}]"))
    return out


@dataclass
class Steps:
    static: int | None      # the user's int n_steps, or None
    count: Variable | None  # number of steps to run (None: from the sequences)
    flip: object            # False, True, or a symbolic step (-1 / 1) to index sequences with


def canonical_n_steps(n_steps, go_backwards, seqs, label):
    from ..tensor.math import abs as abs_, lt, switch
    from ..tensor.type import as_tensor_variable

    if n_steps is None:
        if not seqs:
            raise ValueError(f"{label}: without sequences, n_steps is required")
        return Steps(None, None, bool(go_backwards))
    static = _static_int(n_steps)
    if static is not None:
        count = as_tensor_variable(np.int64(abs(static)))
        return Steps(static, count, bool(go_backwards) != (static < 0))
    n = as_tensor(n_steps, f"{label}: n_steps")
    if n.ndim != 0 or n.dtype not in ("int8", "int16", "int32", "int64", "uint8", "uint16",
                                      "uint32"):
        raise TypeError(f"{label}: n_steps must be an int or an integer scalar, got {n.describe()}")
    sign = -1 if go_backwards else 1
    flip = switch(lt(n, 0), np.int64(-sign), np.int64(sign)) if seqs else bool(go_backwards)
    # The magnitude in int64: abs of int32's least value overflows to itself (still negative).
    return Steps(None, abs_(n.astype("int64")), flip)


def _static_int(n):
    if isinstance(n, (bool, np.bool_)):
        raise TypeError("n_steps must be an integer, got a bool")
    if isinstance(n, (int, np.integer)):
        return int(n)
    if isinstance(n, (float, np.floating)):
        raise TypeError(f"n_steps must be an integer, got {n!r}")
    if isinstance(n, Constant) and getattr(n, "ndim", None) == 0:
        return int(n.data)
    return None


def directed(var, flip):
    if flip is False:
        return var
    if flip is True:
        return var[::-1]
    return var[::flip]


def tap_rows(s, var, k, flip):
    """The outer slice of sequence `s` for tap `k` in direction `flip`, and its offset.

    Row t of the slice is what tap k reads at the t-th step executed::

        forward   u[k - lo:]          step t reads u[t + k - lo]
        backward  u[::-1][hi - k:]    step t reads u[L - 1 - (hi - k) - t], the forward
                                      position L - 1 - (hi - lo) - t

    The offset is how many rows of the sequence the slice lacks (the Scan
    op checks the sequence's length from it). With a symbolic direction (a
    symbolic n_steps) each slice is cut at both ends to the ``L - (hi - lo)``
    positions, then directed, so it lacks ``hi - lo`` rows either way.
    `var` is the user's sequence (`s.var`, maybe with a length check).
    """
    from ..tensor.math import maximum
    from ..tensor.shape import shape_i

    off = _tap_offset(s, k, flip)
    if isinstance(flip, bool) or s.offset(k, False) == s.offset(k, True):
        return (directed(var, flip)[off:] if off else directed(var, flip)), off
    positions = maximum(shape_i(var, 0) - s.span, np.int64(0))
    return directed(var[k - s.lo:k - s.lo + positions], flip), off


def _tap_offset(s, k, flip):
    fwd, bwd = s.offset(k, False), s.offset(k, True)
    if isinstance(flip, bool) or fwd == bwd:
        return bwd if flip is True else fwd
    return s.span


def length_checked(s, steps, label):
    """`s.var`, checked at run time to have ``n_steps + hi - lo`` rows when no slice shows it.

    The Scan op counts a sequence's rows from its least shifted slice; when
    every slice lacks ``hi - lo`` rows (a lone future tap forwards, a lone
    past tap backwards, a symbolic direction), an empty slice cannot tell a
    sequence of exactly ``hi - lo`` rows (zero steps) from a shorter one.
    The message is the op's template, the user's names escaped (a label such
    as ``Reshape{ndim=3}`` holds braces).
    """
    from ..tensor.assertion import check
    from ..tensor.math import ge
    from .op import taps_too_short

    if s.span == 0 or min(_tap_offset(s, k, steps.flip) for k in s.taps) < s.span:
        return s.var
    n = steps.count if steps.count is not None else np.int64(0)
    rows, need = s.var.shape[0], n + s.span
    return check(s.var, ge(rows, need), taps_too_short(label, s), rows, n, need)

