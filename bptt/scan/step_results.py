"""What a scan's step function returns (step 3 of `scan()`).

The return value is split into outputs, updates and an `until` condition;
each output is checked against its outputs_info entry (dtype, rank, the
broadcast pattern a state must keep) and each update against its shared
variable, with messages naming the scan and the output or variable.
"""
from __future__ import annotations

import numpy as np

from ..graph.basic import Variable
from .canonical import OutSpec, as_tensor, value_name
from .utils import is_shared, until


def split_return(ret, label):
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
        value = as_tensor(value, f"{label}: the update of {value_name(sv)}")
    if value.type == sv.type:
        return value
    if not hasattr(sv.type, "dtype") or not hasattr(value.type, "dtype"):
        raise TypeError(f"{label}: the update of {value_name(sv)} has type {value.type}, "
                        f"expected {sv.type}")
    if value.ndim != sv.ndim:
        raise TypeError(f"{label}: the update of {value_name(sv)} has {value.ndim} dimension(s), "
                        f"the shared variable has {sv.ndim}")
    if value.dtype != sv.dtype:
        if not (_is_weak(value) or np.can_cast(value.dtype, sv.dtype, "safe") and
                value.dtype.startswith("int") == sv.dtype.startswith("int")):
            raise TypeError(f"{label}: the update of {value_name(sv)} has dtype {value.dtype}, but "
                            f"the shared variable holds {sv.dtype}; cast it with "
                            f".astype('{sv.dtype}')")
        value = cast(value, sv.dtype)
    # The next step, and the compiled loop, rely on the shared variable's static sizes.
    return check_shape(value, sv.type.shape, f"{label}: the update of {value_name(sv)}")


def _is_weak(v):
    return bool(getattr(v, "weak", False))


def match_specs(outputs, specs, label):
    if specs is None:
        return [OutSpec("nit_sot", None, (), p) for p in range(len(outputs))]
    if len(outputs) != len(specs):
        raise ValueError(f"{label}: the step function returned {len(outputs)} output(s), but "
                         f"outputs_info describes {len(specs)}; give one outputs_info entry per "
                         f"output (None for an output that is not fed back)")
    return specs


def fit_output(out, spec, label):
    """The step's output for `spec` as a tensor of the state's type (or an error that says why)."""
    from ..tensor.basic import cast
    from ..tensor.type import TensorVariable

    what = f"{label}: {spec.describe()}"
    if isinstance(out, (int, float, bool, np.number, np.ndarray, list)):
        out = as_tensor(out, what)   # a Python number becomes a (weak) constant
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
                         f"{_taps_note(spec)}")
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


def _taps_note(spec):
    return " plus a leading dimension for the taps" if spec.kind == "mit_sot" else ""
