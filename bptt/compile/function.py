"""`function`: compile a graph into a callable.

Steps: apply `givens`, collect the shared variables the graph reads (they
become hidden inputs), add default updates, build a `FunctionGraph` of
outputs and update values, rewrite it, and link it in the chosen mode.

A call converts and checks every argument (errors name the input), runs the
linked graph once, and only after it succeeded writes every update, so a
failed call leaves shared variables untouched.
"""
from __future__ import annotations

import time
import warnings

import numpy as np

from ..errors import UnusedInputError
from ..graph.basic import Constant, Variable
from ..graph.fg import FunctionGraph
from ..graph.replace import clone_replace
from ..graph.traversal import ancestors, graph_inputs
from ..tensor.type import as_tensor_variable
from .mode import linker_for, optimize, resolve_mode
from .profiling import FunctionProfile
from .sharedvalue import SharedVariable


def _update_pairs(updates):
    if updates is None:
        return []
    pairs = list(updates.items()) if hasattr(updates, "items") else list(updates)
    out, seen = [], set()
    for pair in pairs:
        if len(pair) != 2:
            raise ValueError(f"updates must be (shared variable, new value) pairs, got {pair!r}")
        var, new = pair
        if not isinstance(var, SharedVariable):
            raise TypeError(f"updates: {getattr(var, 'describe', lambda: repr(var))()} is not a "
                            "shared variable; only bptt.shared variables can be updated")
        if var in seen:
            raise ValueError(f"updates: {var.describe()} is updated twice")
        seen.add(var)
        out.append((var, _as_update_value(var, new)))
    return out


def _as_update_value(var, new):
    if not isinstance(new, Variable):
        new = as_tensor_variable(new)
    if new.type == var.type:
        return new
    from ..tensor.type import TensorType

    if isinstance(var.type, TensorType) and isinstance(new.type, TensorType):
        if new.dtype != var.dtype:
            if np.can_cast(new.dtype, var.dtype, "same_kind") and not (
                    new.dtype.startswith("float") and var.dtype.startswith("int")) \
                    and isinstance(new, Constant):
                from ..tensor.basic import cast

                new = cast(new, var.dtype)
            else:
                raise TypeError(
                    f"the update of {var.describe()} has dtype {new.dtype}; it must keep "
                    f"{var.dtype}. Cast it with .astype('{var.dtype}')")
        if new.ndim != var.ndim:
            raise TypeError(f"the update of {var.describe()} has {new.ndim} dims, "
                            f"the variable has {var.ndim}")
        return new
    raise TypeError(f"the update of {var.describe()} has type {new.type}, expected {var.type}")


def _default_updates(outputs, explicit, shared_vars):
    given = {v for v, _ in explicit}
    extra = []
    for sv in shared_vars:
        if sv.default_update is not None and sv not in given:
            extra.append((sv, sv.default_update))
    return extra


class Function:
    """A compiled function. Call it with one value per input (positionally or
    by input name); it returns one output, a list, or None for no outputs."""

    def __init__(self, inputs, outputs, updates, givens, mode, allow_input_downcast,
                 on_unused_input, name, profile):
        self.name = name
        self.mode = resolve_mode(mode)
        self.allow_input_downcast = allow_input_downcast
        self.inputs = list(inputs)
        for i, v in enumerate(self.inputs):
            if not isinstance(v, Variable):
                raise TypeError(f"function input {i} is a {type(v).__name__}, not a symbolic variable")
            if isinstance(v, SharedVariable):
                raise TypeError(f"function input {i}, {v.describe()}, is a shared variable; "
                                "shared variables are implicit inputs, remove it from the list")
            if isinstance(v, Constant):
                raise TypeError(f"function input {i} is a constant; inputs must be variables")
        if len(set(self.inputs)) != len(self.inputs):
            raise ValueError("function: an input appears twice in the inputs list")
        self.single = outputs is not None and not isinstance(outputs, (list, tuple))
        outs = [] if outputs is None else ([outputs] if self.single else list(outputs))
        outs = [as_tensor_variable(o) if not isinstance(o, Variable) else o for o in outs]
        pairs = _update_pairs(updates)
        outs, pairs = self._apply_givens(outs, pairs, givens)
        shared_vars = self._shared_inputs(outs + [v for _, v in pairs])
        pairs += _update_pairs(_default_updates(outs, pairs, shared_vars))
        shared_vars = self._shared_inputs(outs + [v for _, v in pairs],
                                          extra=[k for k, _ in pairs])
        self._check_unused(outs + [v for _, v in pairs], on_unused_input)
        self.shared = shared_vars
        self.update_vars = [k for k, _ in pairs]
        self.n_outputs = len(outs)
        fgraph = FunctionGraph(self.inputs + shared_vars, outs + [v for _, v in pairs])
        self.profile = FunctionProfile(name) if profile else None
        t0 = time.perf_counter()
        optimize(fgraph, self.mode)
        t1 = time.perf_counter()
        self.fgraph = fgraph
        self._fn = linker_for(self.mode)(fgraph)
        t2 = time.perf_counter()
        if self.profile is not None:
            self.profile.rewrite_time = t1 - t0
            self.profile.link_time = t2 - t1
        self._index = {v.name: i for i, v in enumerate(self.inputs) if v.name}
        self._update_index = [shared_vars.index(k) for k in self.update_vars]

    def _apply_givens(self, outs, pairs, givens):
        if not givens:
            return outs, pairs
        items = list(givens.items()) if hasattr(givens, "items") else list(givens)
        repl = []
        for old, new in items:
            if not isinstance(new, Variable):
                new = as_tensor_variable(new)
            if new.type != old.type:
                if getattr(new.type, "dtype", None) != getattr(old.type, "dtype", None) or \
                        new.type.ndim != old.type.ndim:
                    raise TypeError(f"givens: {old.describe()} is replaced by "
                                    f"{new.describe()} of another type")
            repl.append((old, new))
        targets = outs + [v for _, v in pairs]
        new_targets = clone_replace(targets, repl) if targets else []
        return new_targets[: len(outs)], [(k, v) for (k, _), v in zip(pairs, new_targets[len(outs):])]

    def _shared_inputs(self, outputs, extra=()):
        found = [v for v in graph_inputs(outputs) if isinstance(v, SharedVariable)]
        for v in extra:
            if v not in found:
                found.append(v)
        return found

    def _check_unused(self, outputs, on_unused_input):
        if on_unused_input not in ("raise", "warn", "ignore", None):
            raise ValueError(f"on_unused_input must be 'raise', 'warn' or 'ignore', "
                             f"got {on_unused_input!r}")
        used = set(ancestors(outputs))
        for i, v in enumerate(self.inputs):
            if v not in used:
                msg = (f"function input {i}, {v.describe()}, is not used to compute any output; "
                       "remove it, or pass on_unused_input='ignore'")
                if on_unused_input in ("raise", None):
                    raise UnusedInputError(msg)
                if on_unused_input == "warn":
                    warnings.warn(msg, stacklevel=3)

    # -- calling -------------------------------------------------------------
    def _convert(self, args, kwargs):
        if len(args) > len(self.inputs):
            raise TypeError(f"{self._label()} takes {len(self.inputs)} inputs, got {len(args)}")
        values = list(args) + [None] * (len(self.inputs) - len(args))
        filled = [True] * len(args) + [False] * (len(self.inputs) - len(args))
        for key, val in kwargs.items():
            if key not in self._index:
                raise TypeError(f"{self._label()} has no input named {key!r}")
            i = self._index[key]
            if filled[i]:
                raise TypeError(f"{self._label()}: input {key!r} given twice")
            values[i], filled[i] = val, True
        for i, ok in enumerate(filled):
            if not ok:
                raise TypeError(f"{self._label()}: missing a value for input {i} "
                                f"({self.inputs[i].describe()})")
        out = []
        for i, (var, val) in enumerate(zip(self.inputs, values)):
            what = f"{self._label()} input {i} ({var.name or 'unnamed'})"
            out.append(var.type.filter(val, strict=False,
                                       allow_downcast=self.allow_input_downcast, what=what))
        return out

    def _label(self):
        return f"function {self.name!r}" if self.name else "function"

    def __call__(self, *args, **kwargs):
        t0 = time.perf_counter()
        values = self._convert(args, kwargs)
        shared_values = [sv.container[0] for sv in self.shared]
        results = self._fn(*values, *shared_values)
        outs = results[: self.n_outputs]
        new_values = results[self.n_outputs:]
        outs = [_own(o, values, shared_values) for o in outs]
        for k, v in zip(self.update_vars, new_values):
            k.container[0] = _own(v, values, shared_values)
        if self.profile is not None:
            self.profile.record(time.perf_counter() - t0)
        if self.single:
            return outs[0]
        return outs if outs else None

    def debugprint(self, file=None):
        from ..printing import debugprint

        return debugprint(self, file=file)


def _own(value, inputs, shared_values):
    """`value`, copied if it shares memory with something the caller holds."""
    if isinstance(value, np.ndarray):
        for other in (*inputs, *shared_values):
            if isinstance(other, np.ndarray) and np.may_share_memory(value, other):
                return value.copy()
    return value


def function(inputs, outputs=None, updates=None, givens=None, mode=None,
             allow_input_downcast=None, on_unused_input="raise", name=None, profile=False):
    """Compile a graph into a callable.

    Parameters
    ----------
    inputs : list of Variable
        The call's arguments, in order.
    outputs : Variable, list of Variable or None
    updates : dict or list of (SharedVariable, Variable)
        New values of shared variables, written after the outputs are
        computed; every update is computed before any is written.
    givens : dict or list of (Variable, Variable)
        Substitutions applied to the graph before compiling.
    mode : {'NUMBA', 'PY'} or None
        Execution mode (default from ``bptt.config.mode``).
    allow_input_downcast : bool
        Accept arguments whose conversion to the input dtype loses information.
    on_unused_input : {'raise', 'warn', 'ignore'}
    name : str
    profile : bool
        Record calls and time in ``f.profile``.
    """
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("function: inputs must be a list of variables")
    return Function(inputs, outputs, updates, givens, mode, allow_input_downcast,
                    on_unused_input, name, profile)
