"""Helpers shared by scan(), the Scan op and its views.

`until` (the stop condition a step function returns), `ScanUpdates` (the
updates dictionary scan returns), `SeqOrigin` (where an outer sequence slice
came from, for error messages), the structural signature of an inner graph
(the op's identity) and symbolic shape inference through an inner graph.
"""
from __future__ import annotations

from typing import NamedTuple

from ..graph.basic import Constant, Variable
from ..graph.traversal import free_variables, toposort


def is_shared(v):
    """Whether `v` is a shared variable (duck-typed: the compile layer sits above scan)."""
    return isinstance(v, Variable) and hasattr(v, "container") and hasattr(v, "default_update")


class until:  # noqa: N801  (Theano's name)
    """Returned last by a step function: stop after the step where `condition` holds.

    ``n_steps`` (or the sequences) still bound the number of steps; the loop
    runs at most that many.
    """

    def __init__(self, condition):
        from ..tensor.type import as_tensor_variable

        cond = as_tensor_variable(condition)
        if cond.ndim != 0:
            raise TypeError(f"until: the condition must be a scalar, got {cond.type}; "
                            "reduce it, e.g. with .all() or .any()")
        self.condition = cond

    def __repr__(self):
        return f"until({self.condition!r})"


class ScanUpdates(dict):
    """The updates dictionary returned by scan: shared variable -> new value.

    Pass it to `bptt.function(..., updates=...)`. Keys must be shared
    variables; adding two dictionaries that update the same variable
    differently is an error.
    """

    def __setitem__(self, key, value):
        if not is_shared(key):
            raise TypeError(f"updates: {getattr(key, 'describe', lambda: repr(key))()} is not a "
                            "shared variable; only shared variables can be updated")
        if key in self and self[key] is not value:
            raise ValueError(f"updates: {key.describe()} is given two different updates")
        super().__setitem__(key, value)

    def update(self, other=(), **kwargs):
        pairs = other.items() if hasattr(other, "items") else other
        for k, v in pairs:
            self[k] = v

    def __add__(self, other):
        out = ScanUpdates(self)
        out.update(other)
        return out

    __or__ = __add__


class SeqOrigin(NamedTuple):
    """Where an outer sequence slice came from, for the length check and its message.

    ``group`` numbers the user's sequence; ``label`` names it; ``taps`` are
    the taps given for it; ``span`` is ``max(taps, 0) - min(taps, 0)``, the
    rows it needs beyond the number of steps (Theano's rule: tap 0 counts as
    present). ``offset`` is how many of the sequence's rows the slice lacks
    (it is rows ``offset:`` of the sequence, reversed when the loop runs
    backwards); None for a sequence derived from the user's, which is
    checked against n_steps only.
    """

    group: int
    label: str
    taps: tuple
    offset: int | None
    span: int


def checked_origins(origins):
    """``(k, origin)`` of the slice each user's sequence is checked by: its known
    offset that is smallest (its slice lacks the fewest of the sequence's rows)."""
    best = {}
    for k, o in enumerate(origins or ()):
        if o is not None and o.offset is not None:
            if o.group not in best or o.offset < best[o.group][1].offset:
                best[o.group] = (k, o)
    return list(best.values())


# -- identity of an inner graph ---------------------------------------------------
def graph_signature(inputs, outputs):
    """A hashable description of the graph: equal for structurally equal graphs.

    Inputs are identified by position (with their types), nodes by their op
    and the signatures of their inputs, constants by type and value.
    """
    ids = {v: ("in", k) for k, v in enumerate(inputs)}
    nodes = []

    def ref(v):
        if v in ids:
            return ids[v]
        if isinstance(v, Constant):
            return ("const", v.signature())
        raise ValueError(f"the inner graph needs {v.describe()}, which is not an inner input")

    for node in toposort(outputs, blockers=inputs):
        nodes.append((node.op, tuple(ref(v) for v in node.inputs),
                      tuple(o.type for o in node.outputs)))
        for k, out in enumerate(node.outputs):
            ids[out] = ("node", len(nodes) - 1, k)
    return (tuple(v.type for v in inputs), tuple(nodes), tuple(ref(o) for o in outputs))


def check_closed(inputs, outputs, where):
    """Raise if the graph from `inputs` to `outputs` needs any other non-constant variable."""
    missing = free_variables(outputs, inputs)
    if missing:
        names = ", ".join(v.describe() for v in missing[:3])
        raise ValueError(f"{where}: the inner graph needs {names}, which "
                         f"{'is' if len(missing) == 1 else 'are'} not among its inner inputs")


# -- shapes ------------------------------------------------------------------------
def infer_shapes(inputs, outputs, input_shapes):
    """Symbolic shapes of `outputs` given the shapes of `inputs`.

    Parameters
    ----------
    inputs : list of Variable
    outputs : list of Variable
    input_shapes : list of tuple
        One tuple of int / scalar variable per input (None for non-tensors).

    Returns
    -------
    list of tuple or None
        Entries are ints or int64 scalar variables. A dimension is an int
        where the static type knows it; otherwise it comes from the ops'
        ``infer_shape``, and where an op has none, from the shape of the
        op's output itself (so it depends on the values, not only on shapes).
    """
    shape_of = dict(zip(inputs, input_shapes))

    def get(v):
        if v not in shape_of:
            shape_of[v] = _own_shape(v)
        return shape_of[v]

    for node in toposort(outputs, blockers=inputs):
        in_shapes = [get(v) for v in node.inputs]
        out_shapes = None
        infer = getattr(node.op, "infer_shape", None)
        if infer is not None and all(s is not None for s in in_shapes):
            try:
                out_shapes = infer(None, node, in_shapes)
            except (NotImplementedError, AttributeError, TypeError, ValueError, IndexError):
                out_shapes = None
        for k, out in enumerate(node.outputs):
            s = out_shapes[k] if out_shapes is not None else None
            shape_of[out] = _merge_static(out, s)
    return [get(v) for v in outputs]


def without_size_reads(inputs, outputs, input_shapes, rounds=8):
    """`outputs` with each ``Shape_i(v)`` of a computed `v` replaced by `v`'s inferred size.

    The gradient's SumTo reads sizes of step values (``Shape_i(sigmoid(z))``);
    evaluated as they are, shape expressions would compute those values. Each
    round replaces the reads it finds (an inferred size may hold further reads);
    a read whose op infers no shape stays.
    """
    from ..graph.replace import clone_replace
    from ..tensor.shape import Shape_i

    blockers = set(inputs)
    for _ in range(rounds):
        replace = {}
        for node in toposort(outputs, blockers=blockers):
            v = node.inputs[0] if isinstance(node.op, Shape_i) else None
            if v is None or v.owner is None or v in blockers:
                continue
            size = infer_shapes(inputs, [v], input_shapes)[0][node.op.i]
            if not (isinstance(size, Variable) and size.owner is not None
                    and isinstance(size.owner.op, Shape_i) and size.owner.inputs[0] is v):
                replace[node.outputs[0]] = as_shape_var(size)
        if not replace:
            break
        outputs = clone_replace(outputs, replace)
    return outputs


def simplified(inputs, outputs):
    """(inputs, outputs) of a copy of the graph after the canonicalize rewrites and merge.

    Shape programs repeat the slice-length arithmetic of every view they read
    (``floor_divide(n, 1)``, ``max(.., 0)``, the same length four times); compiled
    into a numba branch, each scalar ufunc call costs typing and lowering.
    """
    from ..graph.fg import FunctionGraph
    from ..graph.rewriting import Fixpoint, InToOut
    from ..tensor.rewriting import canonical_rewriters, constant_folding, merge, shape_rewriters

    fgraph = FunctionGraph(inputs, outputs)
    Fixpoint([InToOut(shape_rewriters() + canonical_rewriters() + [constant_folding]),
              merge]).apply(fgraph)
    return list(fgraph.inputs), list(fgraph.outputs)


def _own_shape(v):
    from ..tensor.shape import shape_tuple

    ndim = getattr(v.type, "ndim", None)
    if ndim is None:
        return None
    if isinstance(v, Constant):
        return tuple(int(s) for s in v.data.shape)
    return shape_tuple(v)


def _merge_static(out, inferred):
    from ..tensor.shape import shape_i

    static = getattr(out.type, "shape", None)
    if static is None:
        return None
    if inferred is None or len(inferred) != len(static):
        inferred = tuple(shape_i(out, d) if s is None else s for d, s in enumerate(static))
    return tuple(int(s) if s is not None else inferred[d] for d, s in enumerate(static))


def as_shape_var(s):
    """An int64 scalar variable for a shape entry (int or variable)."""
    from ..tensor.basic import cast
    from ..tensor.type import as_tensor_variable

    v = as_tensor_variable(s) if not isinstance(s, Variable) else s
    if isinstance(s, int):
        import numpy as np

        v = as_tensor_variable(np.int64(s))
    return v if v.dtype == "int64" else cast(v, "int64")
