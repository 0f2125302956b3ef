"""The reference evaluator: run a graph by calling each node's `perform`.

This lives in the graph layer so that ops holding inner graphs (Scan) can run
them without reaching up to the compiler.
"""
from __future__ import annotations

from .basic import Constant
from .traversal import toposort


class PerformProgram:
    """A graph prepared once for repeated evaluation with `perform`.

    Values live in a flat list of slots; each step names the slots it reads
    and writes, so a call does no dictionary look-ups.
    """

    def __init__(self, inputs, outputs):
        self.inputs, self.outputs = list(inputs), list(outputs)
        nodes = toposort(self.outputs, blockers=self.inputs)
        slot = {}
        for v in self.inputs:
            slot.setdefault(v, len(slot))
        self.constants = []
        for node in nodes:
            for v in node.inputs:
                if v not in slot:
                    if not isinstance(v, Constant):
                        raise ValueError(
                            f"evaluation needs {v.describe()}, which is not an input")
                    slot[v] = len(slot)
                    self.constants.append((slot[v], v.data))
            for v in node.outputs:
                slot[v] = len(slot)
        for v in self.outputs:
            if v not in slot:
                if not isinstance(v, Constant):
                    raise ValueError(f"output {v.describe()} is not computed from the inputs")
                slot[v] = len(slot)
                self.constants.append((slot[v], v.data))
        self.n_slots = len(slot)
        self.input_slots = [slot[v] for v in self.inputs]
        self.output_slots = [slot[v] for v in self.outputs]
        self.steps = [(node, [slot[v] for v in node.inputs], [slot[v] for v in node.outputs])
                      for node in nodes]

    def __call__(self, *values):
        store = [None] * self.n_slots
        for s, value in self.constants:
            store[s] = value
        for s, value in zip(self.input_slots, values):
            store[s] = value
        for node, ins, outs in self.steps:
            cells = [[None] for _ in outs]
            try:
                node.op.perform(node, [store[s] for s in ins], cells)
            except Exception as exc:
                inputs = [store[s] for s in ins]
                restated = _restated(exc, node, inputs)
                if restated is not None:
                    raise restated from None
                _annotate(exc, node, inputs)
                raise
            for s, cell, var in zip(outs, cells, node.outputs):
                store[s] = cell[0]
        return [store[s] for s in self.output_slots]


def _annotate(exc, node, values):
    note = f"while computing {node.op} (inputs: {', '.join(v.describe() for v in node.inputs)})"
    if note not in getattr(exc, "__notes__", []):
        exc.add_note(note)
    if not hasattr(exc, "bptt_failed"):
        exc.bptt_failed = Failure(node, tuple(getattr(v, "shape", None) for v in values))


def _restated(exc, node, values):
    """`exc` restated by what `node` computes in the user's terms (its output's
    ``tag['origin']``, set by a rewrite that moved the node out of a loop), or None."""
    origin = node.outputs[0].tag.get("origin") if node.outputs else None
    if origin is None or not isinstance(exc, (ValueError, IndexError)):
        return None
    text = str(exc.args[0]) if len(exc.args) == 1 else str(exc)
    shapes = ", ".join(str(v.shape) for v in values if getattr(v, "ndim", 0))
    new = type(exc)(f"{origin} failed: {text}" + (f" (operand shapes {shapes})" if shapes else ""))
    new.__traceback__ = exc.__traceback__
    return new


class Failure:
    """Where a `PerformProgram` call failed: the innermost node whose `perform` raised
    (a node of an inner graph when an op runs one) and the shapes of its input values.
    Ops running inner graphs read it (``exc.bptt_failed``) to name the failing step."""

    def __init__(self, node, input_shapes):
        self.node, self.input_shapes = node, input_shapes


def failure(exc):
    """The `Failure` recorded on `exc` by a `PerformProgram`, or None."""
    return getattr(exc, "bptt_failed", None)


def evaluate(outputs, givens):
    """Evaluate `outputs` with `givens` (variable -> value) using `perform`."""
    inputs = list(givens)
    program = PerformProgram(inputs, outputs)
    return program(*[givens[v] for v in inputs])
