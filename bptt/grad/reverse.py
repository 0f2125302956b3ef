"""Reverse mode: `grad` and `Lop`.

The sweep visits, in reverse topological order, the nodes that lie on a path
from the differentiated inputs to the cost. For each node it sums the
gradient contributions of its outputs, calls the op's `L_op`, then, for each
input, drops disconnected results, unbroadcasts with `sum_to`, and casts to
the input's dtype. This is the only place gradients are summed, unbroadcast
or short-circuited; rules return one gradient per input and nothing else.

Integer and boolean variables carry no gradient: their contributions are
ignored, and `grad` with respect to one returns float zeros (Theano's rule).
"""
from __future__ import annotations

from ..errors import NullTypeGradError, report_disconnected_wrt
from ..graph.basic import Variable
from ..graph.traversal import ancestors, toposort
from ..graph.gradient_types import is_disconnected, is_undefined, undefined_grad


def _is_float(v):
    return getattr(v.type, "dtype", None) in ("float32", "float64")


def _reachable_from(wrt, nodes, blockers):
    """Variables computed (differentiably or not) from any of `wrt`."""
    seen = set(wrt)
    for node in nodes:
        if any(i in seen and i not in blockers for i in node.inputs):
            seen.update(node.outputs)
    return seen


def _accumulate(store, var, g):
    from ..tensor.basic import cast
    from ..tensor.shape import shape_tuple, sum_to

    # Unknown sizes may broadcast at run time (a size that turns out to be 1): sum_to
    # then sums; it is skipped only when static shapes prove it unnecessary. Its
    # target is var's sizes (Shape_i of var, lifted to their sources by the shape
    # rewrites), never var's value.
    if g.type.ndim != var.type.ndim or g.type.shape != var.type.shape \
            or None in var.type.shape:
        g = sum_to(g, shape_tuple(var))
    if g.type.dtype != var.type.dtype:
        g = cast(g, var.type.dtype)
    store.setdefault(var, []).append(g)


def _total(contribs):
    from ..tensor.math import add

    if len(contribs) == 1:
        return contribs[0]
    return add(*contribs)


def _sweep(seeds, wrt, consider_constant):
    """Gradient contributions for every variable between `wrt` and the seeds.

    Returns (store, undefined): store maps variable -> list of gradients;
    undefined maps variable -> reason where a rule said no gradient exists.
    """
    outputs = list(seeds)
    blockers = set(consider_constant)
    nodes = toposort(outputs, blockers=set(wrt) | blockers)
    reach = _reachable_from(wrt, nodes, blockers)
    store, undefined = {}, {}
    for var, g in seeds.items():
        _accumulate(store, var, g)
    for node in reversed(nodes):
        if not any(i in reach for i in node.inputs):
            continue
        out_grads = [_total(store[o]) if o in store and _is_float(o) else None
                     for o in node.outputs]
        wanted = [i in reach and i not in blockers and _is_float(i) for i in node.inputs]
        if not any(wanted):
            continue
        _propagate_undefined(node, wanted, undefined)
        if all(g is None for g in out_grads):
            continue
        op = node.op
        if op.no_gradient is not None:
            for inp, w in zip(node.inputs, wanted):
                if w:
                    undefined[inp] = f"{op} has no gradient ({op.no_gradient})"
            continue
        if not op.accepts_disconnected_output_grads:
            out_grads = [g if g is not None else _zeros_for(o)
                         for g, o in zip(out_grads, node.outputs)]
        in_grads = op.L_op(list(node.inputs), list(node.outputs), out_grads)
        if len(in_grads) != len(node.inputs):
            raise ValueError(f"{op}.L_op returned {len(in_grads)} gradients for "
                             f"{len(node.inputs)} inputs")
        for inp, g, w in zip(node.inputs, in_grads, wanted):
            if not w or is_disconnected(g) or inp in undefined:
                continue
            if is_undefined(g):
                undefined[inp] = g.type.why
                continue
            _accumulate(store, inp, g)
    return store, undefined


def _propagate_undefined(node, wanted, undefined):
    """An input connected to an output with an undefined gradient has none either."""
    bad = [o for o in node.outputs if o in undefined]
    if not bad:
        return
    pattern = node.op.connection_pattern(node)
    for i, (inp, w) in enumerate(zip(node.inputs, wanted)):
        if w and inp not in undefined:
            for o in bad:
                if pattern[i][o.index]:
                    undefined[inp] = undefined[o]
                    break


def _zeros_for(v):
    from ..tensor.basic import zeros_like

    return zeros_like(v) if _is_float(v) else None


def _as_list(x):
    return (list(x), True) if isinstance(x, (list, tuple)) else ([x], False)


def grad(cost, wrt, consider_constant=None, disconnected_inputs="raise",
         return_disconnected="zero", known_grads=None, null_gradients="raise"):
    """Symbolic gradient of a scalar `cost` with respect to `wrt`.

    Parameters
    ----------
    cost : scalar TensorVariable or None
        None is allowed when `known_grads` seeds the sweep instead.
    wrt : Variable or list of Variable
    consider_constant : list of Variable
        Treated as constants: no gradient flows through them.
    disconnected_inputs : {'raise', 'warn', 'ignore'}
        What to do when the cost does not depend on a `wrt` entry.
    return_disconnected : {'zero', 'None', 'Disconnected'}
        What to return for such an entry.
    known_grads : dict
        Variable -> gradient of the cost with respect to it, added to the seeds.

    Returns
    -------
    Variable or list of Variable
        One gradient per entry of `wrt`, shaped and typed like it.
    """
    from ..tensor.basic import ones_like, zeros_like
    from ..tensor.type import as_tensor_variable

    wrt_list, was_list = _as_list(wrt)
    for w in wrt_list:
        if not isinstance(w, Variable):
            raise TypeError(f"grad: wrt must contain variables, got {type(w).__name__}")
    if disconnected_inputs not in ("raise", "warn", "ignore"):
        raise ValueError(f"disconnected_inputs must be 'raise', 'warn' or 'ignore', "
                         f"got {disconnected_inputs!r}")
    seeds = {}
    if cost is not None:
        cost = as_tensor_variable(cost)
        if cost.ndim != 0:
            raise TypeError(f"grad: the cost must be a scalar, got {cost.type}; take a sum() or "
                            "mean() of it, or use Lop/jacobian for non-scalar outputs")
        if not _is_float(cost):
            raise TypeError(f"grad: the cost must be a float, got {cost.type}")
        seeds[cost] = ones_like(cost)
    for var, g in (known_grads or {}).items():
        g = as_tensor_variable(g)
        seeds[var] = g if var not in seeds else seeds[var] + g
    if not seeds:
        raise ValueError("grad needs a cost or known_grads")
    store, undefined = _sweep(seeds, wrt_list, consider_constant or [])
    results = []
    for i, w in enumerate(wrt_list):
        if w in undefined and null_gradients == "raise":
            raise NullTypeGradError(f"grad: the gradient with respect to {w.describe()} "
                                    f"is undefined: {undefined[w]}")
        if w in store and _is_float(w):
            results.append(_total(store[w]))
            continue
        if not _is_float(w):
            from ..config import config

            results.append(zeros_like(w, dtype=config.floatX))
            continue
        if w not in set(ancestors(list(seeds))) or w not in store:
            report_disconnected_wrt(i, w, disconnected_inputs, stacklevel=2)
        results.append(_disconnected_result(w, return_disconnected))
    _check_ir(results)
    return results if was_list else results[0]


def _check_ir(results):
    """Verify the gradient graph's invariants when ``config.check_ir`` is on (tests)."""
    from ..config import config

    if config.check_ir:
        from ..graph.verify import verify_variables

        verify_variables(results, where="in the graph built by grad")


def _disconnected_result(w, mode):
    from ..tensor.basic import zeros_like
    from ..graph.gradient_types import disconnected_grad

    if mode == "zero":
        return zeros_like(w)
    if mode == "None":
        return None
    if mode == "Disconnected":
        return disconnected_grad()
    raise ValueError(f"return_disconnected must be 'zero', 'None' or 'Disconnected', got {mode!r}")


def Lop(f, wrt, eval_points, consider_constant=None, disconnected_inputs="raise"):  # noqa: N802
    """Vector-Jacobian product: ``eval_points`` pulled back through `f` to `wrt`.

    `f` and `eval_points` are a variable or equal-length lists of them.
    """
    fs, _ = _as_list(f)
    evs, _ = _as_list(eval_points)
    if len(fs) != len(evs):
        raise ValueError(f"Lop: {len(fs)} outputs but {len(evs)} eval points")
    known = {}
    for v, e in zip(fs, evs):
        known[v] = e
    return grad(None, wrt, consider_constant=consider_constant,
                disconnected_inputs=disconnected_inputs, known_grads=known)


__all__ = ["grad", "Lop", "undefined_grad"]
