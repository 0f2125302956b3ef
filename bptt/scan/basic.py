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

from dataclasses import dataclass

import numpy as np

from ..graph.basic import Constant, Variable
from ..graph.fg import MissingInputError
from ..graph.replace import clone_replace
from ..graph.traversal import graph_inputs, toposort
from .canonical import (canonical_n_steps, canonical_non_sequences, canonical_outputs_info,
                        canonical_sequences, default_name, directed, length_checked, tap_rows,
                        value_name)
from .info import ScanInfo
from .op import Scan
from .step_results import fit_output, match_specs, split_return
from .utils import ScanUpdates, SeqOrigin, is_shared


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
        the string given); read them with ``bptt.scan.profiles(f)``.
    name : str, optional
        Names the loop in errors, printing and profiles.
    strict : bool or "shared"
        True: every non-constant outer variable `fn` reads (but the shared
        variables it updates) must be in `non_sequences`; "shared": only
        the shared variables must be (Theano's rule).
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
    name = name or default_name()
    label = f"scan {name!r}"
    _check_options(truncate_gradient, strict, label)
    seqs = canonical_sequences(sequences, label)
    specs = canonical_outputs_info(outputs_info, label)
    non_seqs = canonical_non_sequences(non_sequences)
    steps = canonical_n_steps(n_steps, go_backwards, seqs, label)
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


def _check_options(truncate_gradient, strict, label):
    if strict not in (False, True, "shared"):
        raise ValueError(f"{label}: strict must be True, False or 'shared', got {strict!r}")
    if truncate_gradient != -1 and (not isinstance(truncate_gradient, (int, np.integer))
                                    or truncate_gradient <= 0):
        raise ValueError(f"{label}: truncate_gradient must be -1 (full backpropagation) or a "
                         f"positive number of steps, got {truncate_gradient!r}")


# -- 2. one inlined step (step 1 is in bptt/scan/canonical.py) ----------------------------
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
        var = directed(var, steps.flip)
        args += [var[s.offset(k, steps.flip)] for k in s.taps]
    for spec in specs or []:
        if spec.kind == "sit_sot":
            args.append(spec.init)
        elif spec.kind == "mit_sot":
            init = _rows_at_least(spec.init, spec.depth,
                                  f"{label}: the initial value of {value_name(spec.init)} "
                                  f"(mit_sot, taps {list(spec.taps)}) has {{}} rows along its "
                                  f"first axis, but its taps need {spec.depth}")
            args += [init[spec.depth + k] for k in spec.taps]
    _check_arity(fn, seqs, specs or [], non_seqs, label)
    ret = fn(*args, *non_seqs)
    outputs, updates, _ = split_return(ret, label)
    specs = match_specs(outputs, specs, label)
    outputs = [fit_output(o, spec, label) for o, spec in zip(outputs, specs)]
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
            names += [f"{value_name(spec.init)}[t{k:+d}]" for k in spec.taps]
    names += [f"non-sequence {value_name(v)}" for v in non_seqs]
    try:
        inspect.signature(fn).bind(*names)
    except TypeError:
        raise TypeError(f"{label}: the step function cannot take the arguments scan passes "
                        f"(sequence taps, then output taps, then non-sequences); scan passes "
                        f"{len(names)} arguments: {', '.join(names)}") from None
    except ValueError:   # no signature available (a builtin): let the call decide
        pass


def _shared_with_default(variables, blockers=()):
    return [v for v in graph_inputs(variables, blockers)
            if is_shared(v) and getattr(v, "default_update", None) is not None]


def _placeholder(type_, name=None):
    return type_.make_variable(name)


def _row_placeholder(var, name):
    return var.type.clone(shape=var.type.shape[1:]).make_variable(name)


# -- 3. the loop (the step's results are read in bptt/scan/step_results.py) -------------
def _loop(fn, seqs, specs, non_seqs, steps, label, strict, name, truncate_gradient,
          profile=False):
    args, seq_in = _sequence_placeholders(seqs)
    state_in = _state_placeholders(specs or [])
    for spec in specs or []:
        args += state_in.get(spec.position, [])
    ns_args, ns_in = _non_sequence_arguments(non_seqs)
    _check_arity(fn, seqs, specs or [], non_seqs, label)
    ret = fn(*args, *ns_args)
    outputs, updates, cond = split_return(ret, label)
    specs = match_specs(outputs, specs, label)
    outputs = [fit_output(o, spec, label) for o, spec in zip(outputs, specs)]
    if cond is not None and cond.dtype != "bool":
        from ..tensor.math import neq

        cond = neq(cond, 0)
    outer = {v for v, a in zip(non_seqs, ns_args) if a is v and not is_shared(v)}
    fixed = set(args) | {a for a in ns_args if not is_shared(a)}
    passed = {v: p for v, p in zip(non_seqs, ns_in) if not is_shared(v)}
    closure = _close(outputs, updates, cond, fixed, passed, set(non_seqs), strict, label,
                     outer)
    return _build(seqs, specs, seq_in, state_in, non_seqs, ns_in, closure, steps,
                  name, truncate_gradient, profile)


def _non_sequence_arguments(non_seqs):
    """(what the step function receives for each non-sequence, its inner placeholder).

    As in Theano, the step receives a non-sequence variable itself, so a gradient
    taken inside the step reaches what the variable is computed from (the Jacobian
    recipe ``scan(lambda i, y, x: grad(y[i], x), ..., non_sequences=[y, x])``);
    `_close` then puts the placeholder in its place. A constant is received as its
    placeholder (the loop takes it as an outer input) and a shared variable as itself
    (the closure handles it like any shared variable the step reads).
    """
    received, inner = [], []
    for v in non_seqs:
        p = v if is_shared(v) else _placeholder(v.type, v.name)
        received.append(p if isinstance(v, Constant) else v)
        inner.append(p)
    return received, inner


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


def _close(outputs, updates, cond, fixed, passed, given, strict, label, outer=frozenset()):
    """Make the step graph a function of placeholders only (see the module docstring, step 4).

    Shared variables updated by the step (returned updates, or a
    ``default_update``) become shared outputs; the step graph keeps every
    node that depends on a placeholder or on such a shared variable, and
    each outer value those nodes read becomes a non-sequence. `outer` holds
    the non-sequences the step received as themselves: the step graph stops
    at them (what they are computed from stays outside the loop) and
    `passed` gives their placeholders.
    """
    update_of = dict(updates)
    step_values = outputs + list(update_of.values()) + ([cond] if cond is not None else [])
    for sv in _shared_with_default(step_values, outer):
        if sv not in update_of:
            update_of[sv] = sv.default_update
    # The inner outputs' layout: outputs, shared updates, then the condition last.
    results = outputs + list(update_of.values()) + ([cond] if cond is not None else [])
    inner = _dependents(results, fixed | set(update_of), outer)
    boundary = _boundary(results, inner, outer)
    _check_strict(boundary, given, strict, label)
    for sv, upd in update_of.items():
        if sv.default_update is upd and upd in inner:
            sv.default_update = None   # it reads placeholders: the loop owns this stream now
    memo, shared, found = {}, [], []
    for sv in update_of:
        memo[sv] = _placeholder(sv.type, sv.name)
        shared.append(sv)
    for v in outer:
        memo[v] = passed[v]
    for v in boundary:
        memo[v] = passed[v] if v in passed else _placeholder(v.type, v.name)
        if v not in passed:
            found.append((v, memo[v]))
    new = clone_replace(results, memo) if memo else list(results)
    n_out = len(outputs)
    inner_updates = new[n_out:n_out + len(update_of)]
    return Closure(new[:n_out], [(sv, memo[sv], u) for sv, u in zip(shared, inner_updates)],
                   found, new[n_out + len(update_of)] if cond is not None else None)


def _dependents(results, roots, blockers=frozenset()):
    """Variables computed from `roots` (themselves included), not looking past `blockers`."""
    dep = set(roots)
    for node in toposort(results, blockers):
        if any(v in dep for v in node.inputs):
            dep.update(node.outputs)
    return dep


def _boundary(results, inner, blockers=frozenset()):
    """Outer, non-constant variables read by the step graph, in a deterministic order."""
    seen, order = set(), []
    for node in toposort(results, blockers):
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
               if not isinstance(v, Constant) and v not in given
               and (strict is True or is_shared(v))]
    if missing:
        names = ", ".join(value_name(v) for v in missing)
        raise MissingInputError(f"{label} (strict={strict!r}): the step function uses {names}, "
                         f"which {'is' if len(missing) == 1 else 'are'} not passed to scan; add "
                         f"{'it' if len(missing) == 1 else 'them'} to non_sequences (and to the "
                         f"step function's arguments), or drop strict")


# -- 5. the node ------------------------------------------------------------------------------
def _build(seqs, specs, seq_in, state_in, non_seqs, ns_in, closure, steps, name,
           truncate_gradient, profile=False):
    from ..tensor.math import minimum
    from ..tensor.shape import shape_i, shape_padleft

    outer_seqs, inner_seqs, origins, lengths = [], [], [], []
    for g, (s, phs) in enumerate(zip(seqs, seq_in)):
        var = length_checked(s, steps, f"scan {name!r}")
        lengths.append(shape_i(var, 0) - s.span)
        for k, ph in zip(s.taps, phs):
            rows, off = tap_rows(s, var, k, steps.flip)
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
              + [f"the update of {value_name(sv)}" for sv, _, _ in closure.shared]
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
