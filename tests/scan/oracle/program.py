"""A random scan program as plain data: what the oracle draws, prints and replays.

A `Program` is a loop (sequences with their taps, outputs with their kinds
and taps, non-sequences, n_steps, direction, truncation, until, a shared
variable updated per step) whose step is a set of expression trees (`E`).
It holds no bptt object and no NumPy array: `build.py` turns it into a bptt
graph, `interpret.py` runs it as a NumPy loop, and its ``repr`` is a readable
reproducer when hypothesis shrinks a failure.

Shapes are tuples of the size symbols ``"H"`` and ``"K"`` (their run-time sizes
are ``Program.sizes``); the graph's inputs have unknown static shapes, so one
compiled graph serves any sizes.

Leaves of an expression are named:

``s{i}@{k}``  tap k of sequence i;
``o{j}@{k}``  tap k of output j (a mit_sot or sit_sot);
``n{m}``      non-sequence m;
``sh``        the shared variable (read only by its own update: see `Program`).

``Program.twin`` is a second scan over the same sequences and n_steps (a map:
one nit_sot of sequence taps and non-sequences, no until), which the scan
merge may fuse with the first.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

#: the ops an expression node may hold: name -> number of children
OPS = {
    "leaf": 0,
    # elementwise, shapes broadcast from the right
    "tanh": 1, "sin": 1, "sigmoid": 1, "scale": 1, "cast32": 1,
    "add": 2, "sub": 2, "mul": 2, "maximum": 2,
    # reductions: arg = axis (None: every axis)
    "sum": 1, "mean": 1, "max": 1,
    "dot": 2,
    # views and writes: arg = row index (0 or -1)
    "index": 1, "reverse": 1, "transpose": 1, "splice": 2, "setsub": 2, "incsub": 2,
    # one inner scan: children (sequence rows, initial state, non-sequence); arg = "last"/"sum"
    "nest": 3,
}

#: ops that are not smooth everywhere: finite differences skip programs using them
KINKED = ("maximum", "max", "cast32")


@dataclass(frozen=True)
class E:
    """An expression node: `op` of `args` (child nodes), with `arg` (axis, index, leaf
    name, scale factor or nest reduction) and the result's `shape`."""

    op: str
    args: tuple = ()
    arg: object = None
    shape: tuple = ()

    def __str__(self):
        if self.op == "leaf":
            return self.arg
        inner = ", ".join(str(a) for a in self.args)
        extra = "" if self.arg is None else (f", {self.arg!r}" if inner else repr(self.arg))
        return f"{self.op}({inner}{extra})"

    def ops(self):
        """Every op name in the tree."""
        found = {self.op}
        for a in self.args:
            found |= a.ops()
        return found

    def leaves(self):
        found = {self.arg} if self.op == "leaf" else set()
        for a in self.args:
            found |= a.leaves()
        return found


@dataclass(frozen=True)
class Seq:
    shape: tuple          # row shape
    taps: tuple
    extra: int = 0        # rows beyond those the steps need

    @property
    def lo(self):
        return min(min(self.taps), 0)

    @property
    def hi(self):
        return max(max(self.taps), 0)


@dataclass(frozen=True)
class Out:
    kind: str             # "mit_sot", "sit_sot" or "nit_sot"
    taps: tuple           # () for a nit_sot, (-1,) for a sit_sot
    shape: tuple
    expr: E
    use: str = "all"      # the function returns "all" rows or the "last" row; "cost": only the
    #                       cost reads its rows; "none": nothing reads it
    init: str = "input"   # its initial value: a function "input", or a "const" of the graph

    @property
    def depth(self):
        return -min(self.taps) if self.taps else 0


@dataclass(frozen=True)
class NonSeq:
    shape: tuple
    passed: bool = True   # given in non_sequences, or read from the step's closure
    source: object = "input"   # a function "input", a "const", or m: the same variable as n{m}


@dataclass(frozen=True)
class Program:
    """One random scan.

    ``n_steps``: ``None`` (from the sequences), ``("const", k)`` or ``("sym", k)``
    (an int64 input whose value is k). ``steps`` is the number of steps the
    sequences allow beyond their taps' span when n_steps is None (each sequence
    then has ``steps + span + extra`` rows); with n_steps given they allow
    ``|k| + extra``. ``until``: ``None`` or ``(expr, threshold)``: the loop stops
    after the step where ``sum(expr) > threshold``. ``shared``: ``None`` or
    ``(shape, update_expr)``; the step's outputs do not read it (its per-step
    values have no gradient), its update does.
    """

    seqs: tuple = ()
    outs: tuple = ()
    non_seqs: tuple = ()
    n_steps: object = None
    steps: int = 3
    go_backwards: bool = False
    truncate: int = -1
    until: object = None
    shared: object = None
    cost: str = "mixed"             # sum(a*r + b*r*r) ("mixed"), 0.5*sum(r**2) ("half_sq"), sum(r**3)
    wrt: object = None              # gradients w.r.t. every float input, or these indices of them
    twin: object = None             # an expression: a second scan's nit_sot over the same steps
    sizes: tuple = (2, 3)           # run-time sizes of "H" and "K"
    seed: int = 0
    notes: tuple = field(default=(), compare=False)

    def describe(self):
        """A readable summary (``repr`` is the evaluable form)."""
        lines = [f"sizes H,K={self.sizes} seed={self.seed} n_steps={self.n_steps} "
                 f"steps={self.steps} go_backwards={self.go_backwards} "
                 f"truncate={self.truncate}"]
        for i, s in enumerate(self.seqs):
            lines.append(f"  seq s{i}: row {s.shape} taps {s.taps} extra {s.extra}")
        for m, n in enumerate(self.non_seqs):
            lines.append(f"  non_seq n{m}: {n.shape}{'' if n.passed else ' (closure)'}"
                         f"{'' if n.source == 'input' else f' source {n.source}'}")
        for j, o in enumerate(self.outs):
            lines.append(f"  out o{j}: {o.kind} taps {o.taps} row {o.shape} use {o.use}: "
                         f"{o.expr}")
        if self.until is not None:
            lines.append(f"  until sum({self.until[0]}) > {self.until[1]}")
        if self.twin is not None:
            lines.append(f"  twin scan (same sequences and steps): nit_sot {self.twin}")
        if self.shared is not None:
            lines.append(f"  shared sh {self.shared[0]} <- {self.shared[1]}")
        return "\n".join(lines)

    def ops(self):
        found = set()
        for e in self.exprs():
            found |= e.ops()
        return found

    def exprs(self):
        out = [o.expr for o in self.outs]
        if self.until is not None:
            out.append(self.until[0])
        if self.shared is not None:
            out.append(self.shared[1])
        if self.twin is not None:
            out.append(self.twin)
        return out

    def n_value(self):
        """The signed n_steps value, or None when the sequences give it."""
        return None if self.n_steps is None else self.n_steps[1]

    def smooth(self):
        """Finite differences apply: no kink, no until (a condition can flip), no truncation."""
        return (self.until is None and self.truncate == -1
                and not any(op in self.ops() for op in KINKED))


def pretty(obj, indent=0, width=96):
    """`obj` (a Program, E, Seq, ... or a tuple of them) as evaluable Python, a line per
    field or item where one line would pass `width`; fields at their default are left out."""
    flat = _flat(obj)
    if indent + len(flat) <= width or not isinstance(obj, (tuple, list)) \
            and not dataclasses.is_dataclass(obj):
        return flat
    pad = " " * (indent + 4)
    if dataclasses.is_dataclass(obj):
        parts = [_named(f, pretty(v, indent + 4, width), obj) for f, v in _fields(obj)]
        open_, close = f"{type(obj).__name__}(", ")"
    else:
        parts = [pretty(v, indent + 4, width) for v in obj]
        open_, close = ("(", ")") if isinstance(obj, tuple) else ("[", "]")
    return open_ + "\n" + "".join(pad + p + ",\n" for p in parts) + " " * indent + close


def _named(f, text, obj):
    return text if isinstance(obj, E) else f"{f.name}={text}"


def _fields(obj):
    """(field, value) of `obj`'s shown fields whose value is not the default (every field
    of an `E`, which is written positionally)."""
    if isinstance(obj, E):
        return [(f, getattr(obj, f.name)) for f in dataclasses.fields(obj)]
    out = []
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        if not f.repr:
            continue
        if f.default is not dataclasses.MISSING and v == f.default or \
                f.default_factory is not dataclasses.MISSING and v == f.default_factory():
            continue
        out.append((f, v))
    return out


def _flat(obj):
    if dataclasses.is_dataclass(obj):
        return (f"{type(obj).__name__}("
                + ", ".join(_named(f, _flat(v), obj) for f, v in _fields(obj)) + ")")
    if isinstance(obj, tuple):
        return "(" + ", ".join(map(_flat, obj)) + ("," if len(obj) == 1 else "") + ")"
    return repr(obj)
