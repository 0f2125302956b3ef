"""Forward mode: `Rop`, the Jacobian-vector product.

A forward sweep visits, in topological order, the nodes between `wrt` and
`f`. Each variable carries a tangent (a symbolic array shaped like it) or
None for a zero tangent. A node whose inputs all have zero tangents is
skipped; otherwise its op's `R_op(inputs, eval_points)` returns one tangent
per output. Integer and boolean variables never carry a tangent (their
derivative is zero by this library's convention, as in `grad`).

The sweep, not the rules, makes each tangent fit its output: it is cast to
the output's dtype and, where an input without a tangent could have widened
the output by broadcasting (possibly only at run time), broadcast to the
output's run-time shape.

Reference: Pearlmutter, "Fast exact multiplication by the Hessian" (1994),
the R{.} operator after which `R_op` is named.
"""
from __future__ import annotations

from ..errors import NullTypeGradError, report_disconnected
from ..graph.basic import Variable
from ..graph.op import Op
from ..graph.traversal import ancestors, toposort
from ..graph.gradient_types import disconnected_grad, is_disconnected


def _is_float(v):
    return getattr(v.type, "dtype", None) in ("float32", "float64")


def _as_list(x):
    return (list(x), True) if isinstance(x, (list, tuple)) else ([x], False)


def _check_eval_point(i, w, e):
    """`e` as a tangent for `w`: same number of dims, cast to w's dtype."""
    from ..tensor.basic import cast
    from ..tensor.type import as_tensor_variable

    if not isinstance(w, Variable):
        raise TypeError(f"Rop: wrt[{i}] must be a variable, got {type(w).__name__}")
    if e is None:
        return None
    e = as_tensor_variable(e)
    if e.ndim != w.type.ndim:
        raise TypeError(f"Rop: eval_points[{i}] has {e.ndim} dimension(s) but wrt[{i}], "
                        f"{w.describe()}, has {w.type.ndim}; they must match")
    if _is_float(w) and e.dtype != w.type.dtype:
        e = cast(e, w.type.dtype)
    return e


def _could_widen(node, j, evs):
    """Whether an input without a tangent may broadcast output j beyond the tangent's shape."""
    pattern = node.op.connection_pattern(node)
    for i, (inp, ev) in enumerate(zip(node.inputs, evs)):
        shape = getattr(inp.type, "shape", ())
        if ev is None and pattern[i][j] and not all(s == 1 for s in shape):
            return True
    return False


def _fit(t, out, node, j, evs):
    """Tangent `t` cast to output `out`'s dtype and broadcast to its shape where needed."""
    from ..tensor.basic import cast
    from ..tensor.shape import broadcast_to, shape

    if t.dtype != out.type.dtype:
        t = cast(t, out.type.dtype)
    if out.type.ndim and (t.type.shape != out.type.shape or _could_widen(node, j, evs)):
        t = broadcast_to(t, shape(out))
    return t


def _node_tangents(node, evs):
    """Output tangents of `node` (None for zero) given its input tangents `evs`."""
    op = node.op
    float_outs = [_is_float(o) for o in node.outputs]
    if not any(float_outs):
        return [None] * len(node.outputs)
    if op.no_gradient is not None:
        raise NullTypeGradError(f"Rop: {op} has no derivative ({op.no_gradient}), and "
                                f"{node.outputs[0].describe()} depends on wrt through it")
    if type(op).R_op is Op.R_op:
        raise NotImplementedError(f"Rop: {op} (computing {node.outputs[0].describe()}) has no "
                                  "R_op rule, so forward mode cannot pass through it; use Lop "
                                  "or jacobian instead")
    try:
        outs = op.R_op(list(node.inputs), list(evs))
    except NotImplementedError as exc:
        exc.add_note(f"Rop: while computing the tangent of {node.outputs[0].describe()}")
        raise
    if len(outs) != len(node.outputs):
        raise ValueError(f"{op}.R_op returned {len(outs)} tangents for "
                         f"{len(node.outputs)} outputs")
    return [None if not is_f or is_disconnected(t) else _fit(t, o, node, j, evs)
            for j, (t, o, is_f) in enumerate(zip(outs, node.outputs, float_outs))]


def _forward_sweep(fs, wrt, evs):
    tangents = {w: e for w, e in zip(wrt, evs) if _is_float(w) and e is not None}
    for node in toposort(fs, blockers=wrt):
        ins = [tangents.get(i) if _is_float(i) else None for i in node.inputs]
        if all(e is None for e in ins):
            continue
        for out, t in zip(node.outputs, _node_tangents(node, ins)):
            if t is not None:
                tangents[out] = t
    return tangents


def Rop(f, wrt, eval_points, disconnected_outputs="raise", return_disconnected="zero"):  # noqa: N802
    """Jacobian-vector product: how `f` changes when `wrt` moves along `eval_points`.

    Parameters
    ----------
    f : Variable or list of Variable
        The outputs to differentiate (any shape).
    wrt : Variable or list of Variable
    eval_points : Variable or list of Variable
        One tangent per `wrt` entry, with the same number of dimensions
        (cast to its dtype); None for a zero tangent.
    disconnected_outputs : {'raise', 'warn', 'ignore'}
        What to do when an entry of `f` does not depend on any `wrt` entry.
    return_disconnected : {'zero', 'None', 'Disconnected'}
        What to return for such an entry.

    Returns
    -------
    Variable or list of Variable
        ``J_f(wrt) @ eval_points`` for each entry of `f`, shaped and typed
        like it; a list when `f` is a list.
    """
    fs, f_was_list = _as_list(f)
    wrt_list, _ = _as_list(wrt)
    evs, _ = _as_list(eval_points)
    if len(wrt_list) != len(evs):
        raise ValueError(f"Rop: {len(wrt_list)} wrt variables but {len(evs)} eval points; "
                         "give one eval point per wrt entry")
    if disconnected_outputs not in ("raise", "warn", "ignore"):
        raise ValueError("disconnected_outputs must be 'raise', 'warn' or 'ignore', "
                         f"got {disconnected_outputs!r}")
    evs = [_check_eval_point(i, w, e) for i, (w, e) in enumerate(zip(wrt_list, evs))]
    for k, out in enumerate(fs):
        if not isinstance(out, Variable):
            raise TypeError(f"Rop: f[{k}] must be a variable, got {type(out).__name__}")
    tangents = _forward_sweep(fs, wrt_list, evs)
    results = []
    for k, out in enumerate(fs):
        if out in tangents:
            results.append(tangents[out])
        elif set(wrt_list) & set(ancestors([out])):
            results.append(_zeros(out))  # connected only through integer values
        else:
            results.append(_disconnected(k, out, disconnected_outputs, return_disconnected))
    return results if f_was_list else results[0]


def _zeros(out):
    from ..config import config
    from ..tensor.basic import zeros_like

    return zeros_like(out, dtype=None if _is_float(out) else config.floatX)


def _disconnected(k, out, policy, mode):
    report_disconnected(f"Rop: f[{k}], {out.describe()}, does not depend on any wrt variable; "
                        "pass disconnected_outputs='ignore' (or 'warn') if this is expected",
                        policy, stacklevel=3)
    if mode == "zero":
        return _zeros(out)
    if mode == "None":
        return None
    if mode == "Disconnected":
        return disconnected_grad()
    raise ValueError(f"return_disconnected must be 'zero', 'None' or 'Disconnected', got {mode!r}")


__all__ = ["Rop"]
