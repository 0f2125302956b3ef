"""`scan()`: turn Theano-style loop arguments into one `Scan` node.

The steps, each a small function below:

1. canonicalize the arguments: sequences become (variable, taps) specs,
   outputs_info becomes one spec per output (mit_sot, sit_sot or nit_sot),
   n_steps becomes a number of steps and a direction;
2. n_steps of 1 or -1: call the step function once on the outer variables
   and return its outputs with a leading dimension of 1 (no Scan node);
3. otherwise call the step function on placeholders (one per sequence tap,
   output tap and non-sequence), split what it returns into outputs,
   updates and an `until` condition, and check them against outputs_info;
4. close the step graph: shared variables it updates (by its returned
   updates or by a ``default_update``, e.g. random streams) become shared
   outputs, and every other outer value it reads becomes a non-sequence
   (the largest outer subexpression is taken, so it is computed once);
5. build the `Scan` node in the layout of `ScanInfo` and return the user's
   outputs in the order of outputs_info, with the initial taps sliced off,
   and the updates of the shared variables.

Sequence taps follow Theano's rule, tap 0 always counting as present: with
``lo = min(min(taps), 0)`` and ``hi = max(max(taps), 0)`` a sequence of L
rows allows ``L - (hi - lo)`` steps and forward step t reads row
``t + k - lo`` for tap k. The sequences are shifted outside the op (one outer
slice per tap, whose row t is what the tap reads at step t). go_backwards and
negative n_steps keep the taps' array meaning: the same positions, visited
from the last to the first, so the outer slice of tap k is the reversed
sequence from row ``hi - k``; the outputs come out in processing order.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import numpy as np

from ..graph.basic import Constant, Variable
from ..graph.fg import MissingInputError
from ..graph.replace import clone_replace
from ..graph.traversal import graph_inputs, toposort
from .info import ScanInfo
from .op import Scan
from .utils import ScanUpdates, SeqOrigin, is_shared, until


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
            what += f" (initial state {_name(self.init)}, outputs_info[{self.position}])"
        return what


def scan(fn, sequences=None, outputs_info=None, non_sequences=None, n_steps=None,
         truncate_gradient=-1, go_backwards=False, mode=None, name=None, profile=False,
         allow_gc=None, strict=False, return_list=False):
    """Loop `fn` over sequences and recurrent states, inside the graph.

    Parameters
    ----------
    fn : callable
        Builds one step. It receives, in order: every tap of every sequence
        (taps in the order given), every tap of every recurrent output (in
        outputs_info order), then the non-sequences. It returns its outputs
        (a variable or a list), optionally an updates dict (or list of
        pairs) before or after them, and optionally `until(condition)` last.
    sequences : variable, dict or list of them
        ``dict(input=x, taps=[...])``; taps default to ``[0]`` and may be
        negative (past) or positive (future). Theano's rule, tap 0 counting
        as present: with ``lo = min(min(taps), 0)`` and
        ``hi = max(max(taps), 0)``, a sequence of L rows allows
        ``L - (hi - lo)`` steps and tap k reads ``x[t + k - lo]`` at step t
        (taps ``[2]`` start at ``x[2]``). Several sequences run for the
        fewest steps any allows.
    outputs_info : variable, dict, None or list of them
        Per output: a variable (its initial state, tap -1);
        ``dict(initial=x, taps=[-k, ...])`` (several negative taps: ``x``
        has a leading dimension covering the deepest tap, ``x[0]`` being
        output[-k]); or None / ``{}`` for an output that is not fed back.
    non_sequences : variable or list
        Passed unchanged to every step. Variables `fn` uses without them
        being passed are found and added.
    n_steps : int or integer scalar variable, optional
        Number of steps (the maximum with `until`): the first n positions of
        the sequences, or backwards the last n, visited from the end.
        Negative runs backwards; 0 gives outputs with zero rows; 1 or -1
        inlines the step.
    truncate_gradient : int
        -1 for full backpropagation through time, else the number of last
        steps the gradient goes through.
    go_backwards : bool
        Visit the sequences' positions from the last to the first; taps keep
        their meaning in the array (a negative tap is an earlier row) and
        outputs are in processing order.
    mode, allow_gc
        Accepted for compatibility; the compiled function's mode runs the loop.
    profile : bool or str
        Count calls, steps and loop time of this scan (named by `name`, or by
        the string given); read them with ``bptt.scan.profiles(f)``
        (``from bptt.scan import profiles``).
    name : str, optional
        Names the loop in errors, printing and profiles.
    strict : bool
        Every non-constant outer variable `fn` reads must be passed in
        `non_sequences` (shared variables updated by the step are exempt).
    return_list : bool
        Always return a list of outputs.

    Returns
    -------
    outputs : variable, list of variables, or None
        One per output, in outputs_info order; None when there is none
        (unless `return_list`).
    updates : ScanUpdates
        Shared variable -> value after the loop; pass it to `bptt.function`.
    """
    name = name or _default_name()
    label = f"scan {name!r}"
    if truncate_gradient != -1 and (not isinstance(truncate_gradient, (int, np.integer))
                                    or truncate_gradient <= 0):
        raise ValueError(f"{label}: truncate_gradient must be -1 (full backpropagation) or a "
                         f"positive number of steps, got {truncate_gradient!r}")
    seqs = _canonical_sequences(sequences, label)
    specs = _canonical_outputs_info(outputs_info, label)
    non_seqs = _canonical_non_sequences(non_sequences)
    steps = _canonical_n_steps(n_steps, go_backwards, seqs, label)
    if steps.static in (1, -1):
        outs, updates = _one_step(fn, seqs, specs, non_seqs, steps, label)
    else:
        outs, updates = _loop(fn, seqs, specs, non_seqs, steps, label, strict,
                              name, truncate_gradient, profile)
    if return_list:
        return outs, updates
    if len(outs) == 1:
        return outs[0], updates
    return (outs or None), updates


# -- 1. canonical arguments ---------------------------------------------------------
def _default_name():
    here = os.path.dirname(os.path.abspath(__file__))
    frame = sys._getframe(1)
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


def _name(v):
    if getattr(v, "name", None):
        return repr(v.name)
    if isinstance(v, Constant):
        return f"the constant {v!r} ({v.type})"
    if is_shared(v):
        return f"an unnamed shared variable ({v.type})"
    return v.describe()


def _tensor(x, what):
    from ..tensor.type import as_tensor_variable

    try:
        return as_tensor_variable(x)
    except TypeError as exc:
        raise TypeError(f"{what}: {exc}") from None


def _canonical_sequences(sequences, label):
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
        var = _tensor(var, what)
        taps = tuple(int(k) for k in _as_list(taps if taps is not None else [0]))
        if not taps:
            taps = (0,)
        if var.ndim == 0:
            raise TypeError(f"{what}, {_name(var)}, is a scalar; a sequence needs a leading "
                            f"dimension to iterate over")
        out.append(SeqSpec(var, taps, _name(var)))
    return out


def _canonical_outputs_info(outputs_info, label):
    """One OutSpec per entry, or None when outputs_info is empty (count set by fn)."""
    entries = _as_list(outputs_info) if not isinstance(outputs_info, dict) else [outputs_info]
    return [_output_spec(e, p, label) for p, e in enumerate(entries)] or None


def _output_spec(entry, p, label):
    what = f"{label}: outputs_info[{p}]"
    if entry is None or (isinstance(entry, dict) and not entry):
        return OutSpec("nit_sot", None, (), p)
    if not isinstance(entry, dict):
        return OutSpec("sit_sot", _tensor(entry, what), (-1,), p)
    _check_dict_keys(entry, _OUTPUT_KEYS, what)
    init = entry.get("initial")
    taps = entry["taps"] if "taps" in entry else ([-1] if init is not None else [])
    taps = tuple(int(k) for k in _as_list(taps))
    if init is None:
        if taps:
            raise ValueError(f"{what} asks for taps {list(taps)} but gives no initial state; "
                             f"add 'initial' (a value covering the deepest tap) or drop 'taps'")
        return OutSpec("nit_sot", None, (), p)
    init = _tensor(init, what)
    if not taps:
        return OutSpec("nit_sot", None, (), p)
    _check_output_taps(taps, what)
    if taps == (-1,):
        return OutSpec("sit_sot", init, taps, p)
    spec = OutSpec("mit_sot", init, taps, p)
    if init.ndim == 0:
        raise ValueError(f"{what}: taps {list(taps)} need an initial state with a leading "
                         f"dimension of at least {spec.depth} rows, got the scalar {_name(init)}")
    rows = init.type.shape[0]
    if rows is not None and rows < spec.depth:
        raise ValueError(f"{what}: taps {list(taps)} need {spec.depth} initial rows "
                         f"(init[0] is output[-{spec.depth}]), but {_name(init)} has {rows}")
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


def _check_output_taps(taps, what):
    if len(set(taps)) != len(taps):
        raise ValueError(f"{what}: taps {list(taps)} repeat a tap; give each tap once")
    if 0 in taps:
        raise ValueError(f"{what}: tap 0 is the value the step computes, not an input; "
                         f"output taps must be negative (e.g. -1 for the previous step)")
    if any(k > 0 for k in taps):
        raise ValueError(f"{what}: taps {list(taps)} include future steps of an output; "
                         f"output taps must be negative")


def _canonical_non_sequences(non_sequences):
    out = []
    for i, v in enumerate(_as_list(non_sequences)):
        out.append(v if isinstance(v, Variable) else _tensor(v, f"non_sequences[{i}]"))
    return out


@dataclass
class Steps:
    static: int | None      # the user's int n_steps, or None
    count: Variable | None  # number of steps to run (None: from the sequences)
    flip: object            # False, True, or a symbolic step (-1 / 1) to index sequences with


def _canonical_n_steps(n_steps, go_backwards, seqs, label):
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
    n = _tensor(n_steps, f"{label}: n_steps")
    if n.ndim != 0 or n.dtype not in ("int8", "int16", "int32", "int64", "uint8", "uint16",
                                      "uint32"):
        raise TypeError(f"{label}: n_steps must be an int or an integer scalar, got {n.describe()}")
    sign = -1 if go_backwards else 1
    flip = switch(lt(n, 0), np.int64(-sign), np.int64(sign)) if seqs else bool(go_backwards)
    return Steps(None, abs_(n).astype("int64"), flip)


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


def _directed(var, flip):
    if flip is False:
        return var
    if flip is True:
        return var[::-1]
    return var[::flip]


def _tap_rows(s, var, k, flip):
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
    if off != s.span or flip is False or flip is True:
        return (_directed(var, flip)[off:] if off else _directed(var, flip)), off
    positions = maximum(shape_i(var, 0) - s.span, np.int64(0))
    return _directed(var[k - s.lo:k - s.lo + positions], flip), off


def _tap_offset(s, k, flip):
    fwd, bwd = s.offset(k, False), s.offset(k, True)
    if flip is False or flip is True or fwd == bwd:
        return bwd if flip is True else fwd
    return s.span


def _length_checked(s, steps, label):
    """`s.var`, checked at run time to have ``n_steps + hi - lo`` rows when no slice shows it.

    The Scan op counts a sequence's rows from its least shifted slice; when
    every slice lacks ``hi - lo`` rows (a lone future tap forwards, a lone
    past tap backwards, a symbolic direction), an empty slice cannot tell a
    sequence of exactly ``hi - lo`` rows (zero steps) from a shorter one.
    The message is the op's.
    """
    from ..tensor.assertion import check
    from ..tensor.math import ge

    if s.span == 0 or min(_tap_offset(s, k, steps.flip) for k in s.taps) < s.span:
        return s.var
    n = steps.count if steps.count is not None else np.int64(0)
    rows, need = s.var.shape[0], n + s.span
    return check(s.var, ge(rows, need),
                 f"{label}: sequence {s.label} (taps {list(s.taps)}) has {{}} rows, but {{}} steps "
                 f"with these taps need {{}} (n_steps + {s.span}); pass a longer sequence or a "
                 f"smaller n_steps", rows, n, need)


# -- 2. one inlined step ------------------------------------------------------------
def _one_step(fn, seqs, specs, non_seqs, steps, label):
    from ..tensor.shape import shape_padleft

    args = []
    for s in seqs:
        rows = s.var.type.shape[0]
        if rows is not None and rows < s.span + 1:
            raise ValueError(f"{label}: sequence {s.label} (taps {list(s.taps)}) has {rows} rows, "
                             f"but 1 step with these taps needs {s.span + 1}")
        var = _rows_at_least(s.var, s.span + 1, f"{label}: sequence {s.label} (taps "
                             f"{list(s.taps)}) has {{}} rows, but 1 step with these taps needs "
                             f"{s.span + 1}; pass a longer sequence")
        var = _directed(var, steps.flip)
        args += [var[s.offset(k, steps.flip)] for k in s.taps]
    for spec in specs or []:
        if spec.kind == "sit_sot":
            args.append(spec.init)
        elif spec.kind == "mit_sot":
            init = _rows_at_least(spec.init, spec.depth,
                                  f"{label}: the initial value of {_name(spec.init)} (mit_sot, "
                                  f"taps {list(spec.taps)}) has {{}} rows along its first axis, "
                                  f"but its taps need {spec.depth}")
            args += [init[spec.depth + k] for k in spec.taps]
    _check_arity(fn, seqs, specs or [], non_seqs, label)
    ret = fn(*args, *non_seqs)
    outputs, updates, _ = _split_return(ret, label)
    specs = _match_specs(outputs, specs, label)
    outputs = [_fit_output(o, spec, label) for o, spec in zip(outputs, specs)]
    result = ScanUpdates()
    for sv, value in updates:
        result[sv] = value
    for sv in _shared_with_default(outputs + [v for _, v in updates]):
        if sv not in result:
            result[sv] = sv.default_update
    return [shape_padleft(o) for o in outputs], result


def _rows_at_least(var, need, message):
    """`var`, checked at run time to have at least `need` rows; `message` has one {} slot.

    The inlined step indexes rows directly: without this, too short a value
    would raise an indexing error that names neither the scan nor the variable.
    """
    from ..tensor.assertion import check

    rows = var.shape[0]
    parts = message.split("{}")
    return check(var, rows >= need, "{}".join(p.replace("{", "{{").replace("}", "}}")
                                             for p in parts), rows)


def _check_arity(fn, seqs, specs, non_seqs, label):
    """A TypeError listing the arguments scan passes, if `fn` cannot take them."""
    import inspect

    names = [f"{s.label}[t{k:+d}]".replace("+0]", "]") for s in seqs for k in s.taps]
    for spec in specs:
        if spec.init is not None:
            names += [f"{_name(spec.init)}[t{k:+d}]" for k in spec.taps]
    names += [f"non-sequence {_name(v)}" for v in non_seqs]
    try:
        inspect.signature(fn).bind(*names)
    except TypeError:
        raise TypeError(f"{label}: the step function cannot take the arguments scan passes "
                        f"(sequence taps, then output taps, then non-sequences); scan passes "
                        f"{len(names)} arguments: {', '.join(names)}") from None
    except ValueError:   # no signature available (a builtin): let the call decide
        pass


# -- 3. the step function's results ---------------------------------------------------
def _split_return(ret, label):
    """(outputs, update pairs, condition) from whatever the step function returned."""
    if isinstance(ret, until):
        return [], [], ret.condition
    if _is_updates(ret):
        return [], _update_pairs(ret, label), None
    items = list(ret) if isinstance(ret, (list, tuple)) else [ret]
    conds = [k for k, x in enumerate(items) if isinstance(x, until)]
    if conds and conds != [len(items) - 1]:
        raise ValueError(f"{label}: the step function returned until(...) at position "
                         f"{conds[0]} of {len(items)}; until must come last, e.g. "
                         f"return outputs, updates, until(cond)")
    cond = items.pop().condition if conds else None
    if (len(items) == 2 and isinstance(items[0], (list, tuple))
            and isinstance(items[1], (list, tuple)) and not items[1]):
        items.pop()   # (outputs, ()): Theano reads an empty second entry as no updates
        conds = conds or [None]
    ups = [k for k, x in enumerate(items) if _is_updates(x)]
    if not ups:
        if conds and len(items) == 1 and isinstance(items[0], (list, tuple)):
            items = list(items[0])
        return items, [], cond
    if len(ups) > 1 or ups[0] not in (0, len(items) - 1):
        raise ValueError(f"{label}: the step function returned updates in the middle of its "
                         f"outputs; return (outputs, updates) or (updates, outputs), then "
                         f"optionally until(cond)")
    pairs = _update_pairs(items.pop(ups[0]), label)
    if len(items) == 1 and isinstance(items[0], (list, tuple)):
        items = list(items[0])
    return items, pairs, cond


def _is_updates(x):
    if isinstance(x, dict):
        return True
    return (isinstance(x, (list, tuple)) and len(x) > 0 and all(
        isinstance(p, (list, tuple)) and len(p) == 2 and is_shared(p[0]) for p in x))


def _update_pairs(x, label):
    pairs = list(x.items()) if isinstance(x, dict) else [tuple(p) for p in x]
    out = []
    for sv, value in pairs:
        if not is_shared(sv):
            raise TypeError(f"{label}: the step function's updates have the key "
                            f"{getattr(sv, 'describe', lambda: repr(sv))()}, which is not a "
                            f"shared variable; only bptt.shared variables can be updated")
        out.append((sv, _fit_update(sv, value, label)))
    return out


def _fit_update(sv, value, label):
    from ..tensor.assertion import check_shape
    from ..tensor.basic import cast

    if not isinstance(value, Variable):
        value = _tensor(value, f"{label}: the update of {_name(sv)}")
    if value.type == sv.type:
        return value
    if not hasattr(sv.type, "dtype") or not hasattr(value.type, "dtype"):
        raise TypeError(f"{label}: the update of {_name(sv)} has type {value.type}, "
                        f"expected {sv.type}")
    if value.ndim != sv.ndim:
        raise TypeError(f"{label}: the update of {_name(sv)} has {value.ndim} dimension(s), "
                        f"the shared variable has {sv.ndim}")
    if value.dtype != sv.dtype:
        if not (_is_weak(value) or np.can_cast(value.dtype, sv.dtype, "safe") and
                value.dtype.startswith("int") == sv.dtype.startswith("int")):
            raise TypeError(f"{label}: the update of {_name(sv)} has dtype {value.dtype}, but "
                            f"the shared variable holds {sv.dtype}; cast it with "
                            f".astype('{sv.dtype}')")
        value = cast(value, sv.dtype)
    # The next step, and the compiled loop, rely on the shared variable's static sizes.
    return check_shape(value, sv.type.shape, f"{label}: the update of {_name(sv)}")


def _is_weak(v):
    return bool(getattr(v, "weak", False))


def _match_specs(outputs, specs, label):
    if specs is None:
        return [OutSpec("nit_sot", None, (), p) for p in range(len(outputs))]
    if len(outputs) != len(specs):
        raise ValueError(f"{label}: the step function returned {len(outputs)} output(s), but "
                         f"outputs_info describes {len(specs)}; give one outputs_info entry per "
                         f"output (None for an output that is not fed back)")
    return specs


def _fit_output(out, spec, label):
    """The step's output for `spec` as a tensor of the state's type (or an error that says why)."""
    from ..tensor.basic import cast
    from ..tensor.type import TensorVariable

    what = f"{label}: {spec.describe()}"
    if isinstance(out, (int, float, bool, np.number, np.ndarray, list)):
        out = _tensor(out, what)   # a Python number becomes a (weak) constant
    if not isinstance(out, TensorVariable):
        raise TypeError(f"{what} is {type(out).__name__}; the step function must return "
                        f"tensors (or Python numbers)")
    if spec.kind == "nit_sot":
        return out
    row = spec.init.type if spec.kind == "sit_sot" else spec.init.type.clone(
        shape=spec.init.type.shape[1:])
    if out.ndim != row.ndim:
        raise ValueError(f"{what} is {out.ndim}-d ({out.type}), but its state is {row.ndim}-d "
                         f"({row}); the initial state must have the shape of one step's output"
                         f"{' plus a leading dimension for the taps' if spec.kind == 'mit_sot' else ''}")
    if any(a is not None and b is not None and a != b for a, b in zip(out.type.shape, row.shape)):
        raise ValueError(f"{what} has static shape {out.type.shape}, but its state has rows of "
                         f"shape {row.shape}")
    if out.dtype == row.dtype:
        return out
    if _is_weak(out) or np.can_cast(out.dtype, row.dtype, "safe"):
        return cast(out, row.dtype)
    raise TypeError(
        f"{what} has dtype {out.dtype}, but the initial state has dtype {row.dtype}: storing "
        f"the output would be an implicit downcast. Give the initial state dtype {out.dtype} "
        f"(e.g. T.as_tensor_variable(np.asarray(0, '{out.dtype}')) or x0.astype('{out.dtype}')), "
        f"or cast the step's result to {row.dtype}")


def _shared_with_default(variables):
    return [v for v in graph_inputs(variables)
            if is_shared(v) and getattr(v, "default_update", None) is not None]


def _placeholder(type_, name=None):
    return type_.make_variable(name)


def _row_placeholder(var, name):
    return var.type.clone(shape=var.type.shape[1:]).make_variable(name)


# -- the loop -------------------------------------------------------------------------------
def _loop(fn, seqs, specs, non_seqs, steps, label, strict, name, truncate_gradient,
          profile=False):
    args, seq_in = _sequence_placeholders(seqs)
    state_in = _state_placeholders(specs or [])
    for spec in specs or []:
        args += state_in.get(spec.position, [])
    ns_in = [v if is_shared(v) else _placeholder(v.type, v.name) for v in non_seqs]
    _check_arity(fn, seqs, specs or [], non_seqs, label)
    ret = fn(*args, *ns_in)
    outputs, updates, cond = _split_return(ret, label)
    specs = _match_specs(outputs, specs, label)
    outputs = [_fit_output(o, spec, label) for o, spec in zip(outputs, specs)]
    if cond is not None and cond.dtype != "bool":
        from ..tensor.math import neq

        cond = neq(cond, 0)
    fixed = set(args) | {p for p in ns_in if not is_shared(p)}
    passed = {v: p for v, p in zip(non_seqs, ns_in) if not is_shared(v)}
    closure = _close(outputs, updates, cond, fixed, passed, set(non_seqs), strict, label)
    return _build(seqs, specs, seq_in, state_in, non_seqs, ns_in, closure, steps,
                  name, truncate_gradient, profile)


def _sequence_placeholders(seqs):
    args, per_seq = [], []
    for s in seqs:
        phs = [_row_placeholder(s.var, f"{s.var.name}[t{k:+d}]" if s.var.name else None)
               for k in s.taps]
        args += phs
        per_seq.append(phs)
    return args, per_seq


def _state_placeholders(specs):
    out = {}
    for spec in specs:
        nm = spec.init.name if spec.init is not None else None
        if spec.kind == "sit_sot":
            out[spec.position] = [_placeholder(spec.init.type, f"{nm}[t-1]" if nm else None)]
        elif spec.kind == "mit_sot":
            out[spec.position] = [_row_placeholder(spec.init, f"{nm}[t{k:+d}]" if nm else None)
                                  for k in spec.taps]
    return out


# -- 4. closing the step graph --------------------------------------------------------------
@dataclass
class Closure:
    outputs: list       # inner outputs of the user's outputs
    shared: list        # (outer shared variable, inner placeholder, inner update)
    non_seqs: list      # (outer variable, inner placeholder) found by the closure
    cond: Variable | None


def _close(outputs, updates, cond, fixed, passed, given, strict, label):
    """Make the step graph a function of placeholders only (see the module docstring, step 4).

    Shared variables updated by the step (returned updates, or a
    ``default_update``) become shared outputs; the step graph keeps every
    node that depends on a placeholder or on such a shared variable, and
    each outer value those nodes read becomes a non-sequence.
    """
    update_of = dict(updates)
    step_values = outputs + list(update_of.values()) + ([cond] if cond is not None else [])
    for sv in _shared_with_default(step_values):
        if sv not in update_of:
            update_of[sv] = sv.default_update
    # The inner outputs' layout: outputs, shared updates, then the condition last.
    results = outputs + list(update_of.values()) + ([cond] if cond is not None else [])
    inner = _dependents(results, fixed | set(update_of))
    boundary = _boundary(results, inner)
    _check_strict(boundary, given, strict, label)
    for sv, upd in update_of.items():
        if sv.default_update is upd and upd in inner:
            sv.default_update = None   # it reads placeholders: the loop owns this stream now
    memo, shared, found = {}, [], []
    for sv in update_of:
        memo[sv] = _placeholder(sv.type, sv.name)
        shared.append(sv)
    for v in boundary:
        memo[v] = passed[v] if v in passed else _placeholder(v.type, v.name)
        if v not in passed:
            found.append((v, memo[v]))
    new = clone_replace(results, memo) if memo else list(results)
    n_out = len(outputs)
    inner_updates = new[n_out:n_out + len(update_of)]
    return Closure(new[:n_out], [(sv, memo[sv], u) for sv, u in zip(shared, inner_updates)],
                   found, new[n_out + len(update_of)] if cond is not None else None)


def _dependents(results, roots):
    """Variables computed from `roots` (themselves included)."""
    dep = set(roots)
    for node in toposort(results):
        if any(v in dep for v in node.inputs):
            dep.update(node.outputs)
    return dep


def _boundary(results, inner):
    """Outer, non-constant variables read by the step graph, in a deterministic order."""
    seen, order = set(), []
    for node in toposort(results):
        if node.outputs[0] not in inner:
            continue
        for v in node.inputs:
            if v not in inner and not isinstance(v, Constant) and v not in seen:
                seen.add(v)
                order.append(v)
    for v in results:
        if v not in inner and not isinstance(v, Constant) and v not in seen:
            seen.add(v)
            order.append(v)
    return order


def _check_strict(boundary, given, strict, label):
    if not strict:
        return
    missing = [v for v in graph_inputs(boundary)
               if not isinstance(v, Constant) and v not in given]
    if missing:
        names = ", ".join(_name(v) for v in missing)
        raise MissingInputError(f"{label} (strict=True): the step function uses {names}, which "
                         f"{'is' if len(missing) == 1 else 'are'} not passed to scan; add "
                         f"{'it' if len(missing) == 1 else 'them'} to non_sequences (and to the "
                         f"step function's arguments), or drop strict=True")


# -- 5. the node ------------------------------------------------------------------------------
def _build(seqs, specs, seq_in, state_in, non_seqs, ns_in, closure, steps, name,
           truncate_gradient, profile=False):
    from ..tensor.math import minimum
    from ..tensor.shape import shape_i, shape_padleft

    outer_seqs, inner_seqs, origins, lengths = [], [], [], []
    for g, (s, phs) in enumerate(zip(seqs, seq_in)):
        var = _length_checked(s, steps, f"scan {name!r}")
        lengths.append(shape_i(var, 0) - s.span)
        for k, ph in zip(s.taps, phs):
            rows, off = _tap_rows(s, var, k, steps.flip)
            outer_seqs.append(rows)
            inner_seqs.append(ph)
            origins.append(SeqOrigin(g, s.label, s.taps, off, s.span))
    n = steps.count
    if n is None:
        n = lengths[0]
        for ln in lengths[1:]:
            n = minimum(n, ln)
    mit = [s for s in specs if s.kind == "mit_sot"]
    sit = [s for s in specs if s.kind == "sit_sot"]
    nit = [s for s in specs if s.kind == "nit_sot"]
    non_seq_pairs = [(v, p) for v, p in zip(non_seqs, ns_in) if not is_shared(v)]
    non_seq_pairs += closure.non_seqs
    info = ScanInfo(
        n_seqs=len(outer_seqs), mit_mot_in_slices=(), mit_mot_out_slices=(),
        mit_sot_in_slices=tuple(s.taps for s in mit), n_sit_sot=len(sit), n_nit_sot=len(nit),
        n_shared_outs=len(closure.shared), n_non_seqs=len(non_seq_pairs),
        as_while=closure.cond is not None, truncate_gradient=truncate_gradient, name=name)
    by_pos = closure.outputs
    inner_inputs = (inner_seqs + [p for s in mit for p in state_in[s.position]]
                    + [state_in[s.position][0] for s in sit]
                    + [p for _, p, _ in closure.shared] + [p for _, p in non_seq_pairs])
    inner_outputs = ([by_pos[s.position] for s in mit + sit + nit]
                     + [u for _, _, u in closure.shared]
                     + ([closure.cond] if closure.cond is not None else []))
    labels = ([s.describe() for s in mit + sit + nit]
              + [f"the update of {_name(sv)}" for sv, _, _ in closure.shared]
              + (["the until condition"] if closure.cond is not None else []))
    outer_inputs = ([n] + outer_seqs + [s.init for s in mit] + [shape_padleft(s.init) for s in sit]
                    + [sv for sv, _, _ in closure.shared] + [n] * len(nit)
                    + [v for v, _ in non_seq_pairs])
    op = Scan(inner_inputs, inner_outputs, info, seq_origins=origins, output_labels=labels,
              profile=profile)
    node = op.make_node(*outer_inputs)
    return _results(node, info, specs, mit, sit, nit, closure)


def _results(node, info, specs, mit, sit, nit, closure):
    outs = {}
    for b, spec in zip(info.buffers, mit + sit):
        outs[spec.position] = node.outputs[b.outer_output][b.taps_in_front:]
    for j, spec in zip(info.outer_out_nit_sot, nit):
        outs[spec.position] = node.outputs[j]
    updates = ScanUpdates()
    for j, (sv, _, _) in zip(info.outer_out_shared, closure.shared):
        updates[sv] = node.outputs[j]
    return [outs[s.position] for s in specs], updates
