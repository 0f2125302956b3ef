"""Errors raised by a step's graph, restated to name the scan, the step and the expression.

An op inside the step raises NumPy's words (``shapes (1,4) and (5,4) not aligned``,
``index 7 is out of bounds for axis 0 with size 4``); `step_error` makes the same kind
of error that says where::

    scan 'rnn': at step 0, (h0[t-1] dot U) failed: shapes (1,4) and (5,4) not aligned:
    4 (dim 1) != 5 (dim 0); its inputs: h0[t-1] of shape (1, 4), U of shape (5, 4)

The failing node is the one `PerformProgram` records on the exception (`failure`). It
is printed as a short infix expression of the step's variables: the user's names, the
placeholders' names (``x[t+0]``, ``h0[t-1]``), or the part an unnamed inner input plays.
An error from a nested scan already names its scan and step: the outer one adds its own.
"""
from __future__ import annotations

import contextlib
import contextvars
import time

from ..graph.basic import Constant
from ..graph.evaluate import failure
from ..graph.expression import expression
from ..graph.traversal import toposort

#: Errors a step raises because of its values (shapes, indices): the ones restated.
STEP_ERRORS = (ValueError, IndexError)

_DEADLINE = contextvars.ContextVar("bptt_step_error_deadline", default=None)


class OutOfTime(Exception):
    """Raised by a loop run under `time_budget` once the budget is spent."""


@contextlib.contextmanager
def time_budget(seconds):
    """Loops run inside stop with `OutOfTime` after about `seconds` (checked every 256 steps)."""
    token = _DEADLINE.set(time.perf_counter() + seconds)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def check_time_budget():
    deadline = _DEADLINE.get()
    if deadline is not None and time.perf_counter() > deadline:
        raise OutOfTime()


def step_error(op, exc, step):
    """`exc` (raised by step `step` of `op`'s inner graph) as an error of the same type
    naming the scan, the step and the expression that failed."""
    label = op.info.label
    text = str(exc.args[0]) if len(exc.args) == 1 else str(exc)
    where = failure(exc)
    if where is None:
        return _like(exc, f"{label}: at step {step}: {text}")
    node = where.node
    if hasattr(node.op, "inner_outputs") and text.startswith("scan"):
        return _like(exc, f"{label}: at step {step}, in {text}")
    leaf = _leaf_labels(op)
    out = node.outputs[0]
    what = expression(out, max_depth=3, leaf=leaf)
    if out.name is not None:
        what = f"{out.name!r} = {what}"
    inputs = [f"{expression(v, max_depth=1, leaf=leaf)} of shape {shape}"
              for v, shape in zip(node.inputs, where.input_shapes)
              if shape is not None and not isinstance(v, Constant)]
    tail = f"; its inputs: {', '.join(inputs)}" if inputs else ""
    return _like(exc, f"{label}: at step {step}, {what} failed: {text}{tail}")


def mark_moved_out(fgraph, node, moved, loop_checks=()):
    """Tag the outer nodes that compute step values for all steps before the loop.

    `moved` maps each inner variable of the scan `node` of `fgraph` to the outer
    variable now computing it; each new outer node (one `fgraph` does not hold yet,
    nor computes one of `loop_checks`: the loop's own checks, whose messages stand
    alone) gets ``tag['origin']`` on its outputs,
    which the reference evaluator puts in front of an error the node raises::

        scan 'rnn': (x[t+0] dot W) (computed for all steps before the loop) failed: ...
    """
    op = node.op
    leaf = _leaf_labels(op)
    existing = set(fgraph.clients) | set(node.inputs) | set(loop_checks)
    for v, outer in moved.items():
        origin = (f"{op.info.label}: {expression(v, max_depth=3, leaf=leaf)} (computed for "
                  "all steps before the loop)")
        for n in toposort([outer], blockers=existing):
            for o in n.outputs:
                o.tag.setdefault("origin", origin)


def _like(exc, message):
    new = type(exc)(message)
    new.__traceback__ = exc.__traceback__
    return new


def _leaf_labels(op):
    """Names for the unnamed inner inputs of `op`: the part each plays."""
    info, names = op.info, {}
    for k, i in enumerate(info.inner_in_seqs):
        origin = op.seq_origins[k] if op.seq_origins else None
        names[i] = f"{origin.label}[t]" if origin is not None else f"sequence {k}[t]"
    for k, i in enumerate(info.inner_in_non_seqs):
        names[i] = f"non-sequence {k}"
    for k, i in enumerate(info.inner_in_shared):
        names[i] = f"shared state {k}"
    for b in info.buffers:
        what = op.label_of_output(b.inner_outputs[0]).split(" (")[0] if b.inner_outputs else ""
        for i in b.inner_inputs:
            names.setdefault(i, f"the previous value of {what}" if what else "a state")
    by_var = {op.inner_inputs[i]: name for i, name in names.items()}
    return lambda v: by_var.get(v, "a state of the previous step")
