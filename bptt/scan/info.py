"""`ScanInfo`: the shape of a Scan node, and every position computed from it.

A Scan node groups its variables by *category* (see docs/scan-internals.md).
Outer variables are those of the graph holding the node; inner variables are
those of the step graph the node runs once per step. Every index into these
four lists is computed here, and nowhere else: ``perform``, ``infer_shape``,
the numba lowering, the gradient and the rewrites ask `ScanInfo`.

Layout (T = n_steps, executed steps E <= T; E == T unless ``as_while``)::

    outer inputs                          outer outputs
    ------------                          -------------
    0  n_steps            int64 ()        mit_mot   buffer, same shape as its input
       sequences          (>=T, *row)     mit_sot   (depth + E, *row)
       mit_mot  buffers   (>=T+ext, *row) sit_sot   (1 + E, *row)
       mit_sot  initial   (>=depth, *row) nit_sot   (min(len, E), *row)
       sit_sot  initial   (>=1, *row)     shared    final value
       shared   initial   value           [n_steps  int64 (), E; only if as_while]
       nit_sot  lengths   int64 ()
       non-sequences      value

    inner inputs                          inner outputs
    ------------                          -------------
    sequences       seq[t]                mit_mot   one per out tap
    mit_mot taps    one per in tap        mit_sot   row t
    mit_sot taps    one per in tap        sit_sot   row t
    sit_sot         row t-1               nit_sot   row t
    shared          current value         shared    next value
    non-sequences   value                 [until condition; only if as_while]

Buffer rows. A mit_sot or sit_sot output buffer keeps its `depth` initial
rows in front of the computed steps: step t reads tap k from row
``t + depth + k`` and writes row ``t + depth`` (depth = -min(taps); a sit_sot
is a mit_sot with taps (-1,)). Only the first `depth` rows of the initial
buffer are read. A mit_mot buffer spans taps ``lo = min(in ∪ out)`` to
``hi = max(in ∪ out)``: step t reads in-tap k from row ``t + k - lo`` and
writes out-tap k to row ``t + k - lo``; the outer output is a copy of the
whole input buffer (which needs at least ``T + hi - lo`` rows) with those rows
overwritten. A nit_sot keeps the last ``min(len, E)`` rows it computed, in
time order.

How an output's rows are stored (rings that keep only the last rows, nit_sots summed
over the steps, rows living in another array) is not here but in the op's
`StoragePlan` (``bptt/scan/plan.py``); the layout above is that of the empty plan.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

KINDS = ("seq", "mit_mot", "mit_sot", "sit_sot", "nit_sot", "shared", "non_seq")


@dataclass(frozen=True)
class Buffer:
    """Where one recurrent state (mit_mot, mit_sot or sit_sot) lives.

    At step t, inner input ``inner_inputs[i]`` reads row ``t + in_offsets[i]``
    of the output buffer and inner output ``inner_outputs[i]`` is written to
    row ``t + out_offsets[i]``. A buffer needs ``T + extent`` rows for T steps.
    """

    kind: str
    index: int
    outer_input: int
    outer_output: int
    inner_inputs: tuple
    inner_outputs: tuple
    in_offsets: tuple
    out_offsets: tuple
    extent: int

    @property
    def taps_in_front(self):
        """Rows of the output buffer that hold initial values, not computed steps."""
        return self.extent if self.kind != "mit_mot" else 0


@dataclass(frozen=True)
class ScanInfo:
    """Static description of a Scan node; see the module docstring for the layout.

    Parameters
    ----------
    n_seqs : int
    mit_mot_in_slices, mit_mot_out_slices : tuple of tuple of int
        Input and output taps of each mit_mot (any sign; output taps distinct).
    mit_sot_in_slices : tuple of tuple of int
        Input taps of each mit_sot (negative, distinct, in the order the step
        function receives them).
    n_sit_sot, n_nit_sot, n_shared_outs, n_non_seqs : int
    as_while : bool
        The step graph's last output is a stop condition.
    truncate_gradient : int
        -1, or the number of last steps the gradient goes through.
    name : str or None
        For messages and profiles; not part of equality (equal loops merge).
    """

    n_seqs: int
    mit_mot_in_slices: tuple
    mit_mot_out_slices: tuple
    mit_sot_in_slices: tuple
    n_sit_sot: int
    n_nit_sot: int
    n_shared_outs: int
    n_non_seqs: int
    as_while: bool = False
    truncate_gradient: int = -1
    name: str | None = field(default=None, compare=False)

    def __post_init__(self):
        fix = object.__setattr__
        for f in ("mit_mot_in_slices", "mit_mot_out_slices", "mit_sot_in_slices"):
            fix(self, f, tuple(tuple(int(k) for k in taps) for taps in getattr(self, f)))
        for f in ("n_seqs", "n_sit_sot", "n_nit_sot", "n_shared_outs", "n_non_seqs",
                  "truncate_gradient"):
            fix(self, f, int(getattr(self, f)))
        fix(self, "as_while", bool(self.as_while))
        self._validate()

    def _validate(self):
        counts = (self.n_seqs, self.n_sit_sot, self.n_nit_sot, self.n_shared_outs, self.n_non_seqs)
        if min(counts) < 0:
            raise ValueError(f"ScanInfo: negative count in {self}")
        if len(self.mit_mot_in_slices) != len(self.mit_mot_out_slices):
            raise ValueError("ScanInfo: mit_mot_in_slices and mit_mot_out_slices differ in length")
        for j, (ins, outs) in enumerate(zip(self.mit_mot_in_slices, self.mit_mot_out_slices)):
            if not outs or len(set(outs)) != len(outs):
                raise ValueError(f"ScanInfo: mit_mot {j} needs distinct output taps, got {outs}")
        for j, taps in enumerate(self.mit_sot_in_slices):
            if not taps or len(set(taps)) != len(taps) or max(taps) >= 0:
                raise ValueError(f"ScanInfo: mit_sot {j} needs distinct negative taps, got {taps}")
        if self.truncate_gradient == 0 or self.truncate_gradient < -1:
            raise ValueError(f"ScanInfo: truncate_gradient must be -1 or positive, "
                             f"got {self.truncate_gradient}")

    # -- counts ----------------------------------------------------------------
    @property
    def n_mit_mot(self):
        return len(self.mit_mot_in_slices)

    @property
    def n_mit_sot(self):
        return len(self.mit_sot_in_slices)

    @property
    def n_mit_mot_outs(self):
        return sum(len(taps) for taps in self.mit_mot_out_slices)

    @property
    def n_states(self):
        """Recurrent buffers: mit_mot + mit_sot + sit_sot."""
        return self.n_mit_mot + self.n_mit_sot + self.n_sit_sot

    @property
    def label(self):
        return f"scan {self.name!r}" if self.name else "scan"

    # -- tap geometry ------------------------------------------------------------
    def mit_sot_depth(self, j):
        """Initial rows mit_sot `j` needs (the deepest tap)."""
        return -min(self.mit_sot_in_slices[j])

    def mit_mot_bounds(self, j):
        """(lo, hi): the lowest and highest tap of mit_mot `j`, inputs and outputs together."""
        taps = self.mit_mot_in_slices[j] + self.mit_mot_out_slices[j]
        return min(taps), max(taps)

    # -- outer inputs ------------------------------------------------------------
    @cached_property
    def _outer_in_starts(self):
        sizes = (1, self.n_seqs, self.n_mit_mot, self.n_mit_sot, self.n_sit_sot,
                 self.n_shared_outs, self.n_nit_sot, self.n_non_seqs)
        return _starts(sizes)

    def _outer_in(self, k):
        s = self._outer_in_starts
        return range(s[k], s[k + 1])

    outer_in_n_steps = 0
    outer_in_seqs = property(lambda self: self._outer_in(1))
    outer_in_mit_mot = property(lambda self: self._outer_in(2))
    outer_in_mit_sot = property(lambda self: self._outer_in(3))
    outer_in_sit_sot = property(lambda self: self._outer_in(4))
    outer_in_shared = property(lambda self: self._outer_in(5))
    outer_in_nit_sot = property(lambda self: self._outer_in(6))
    outer_in_non_seqs = property(lambda self: self._outer_in(7))
    n_outer_inputs = property(lambda self: self._outer_in_starts[-1])

    # -- outer outputs -----------------------------------------------------------
    @cached_property
    def _outer_out_starts(self):
        sizes = (self.n_mit_mot, self.n_mit_sot, self.n_sit_sot, self.n_nit_sot,
                 self.n_shared_outs, int(self.as_while))
        return _starts(sizes)

    def _outer_out(self, k):
        s = self._outer_out_starts
        return range(s[k], s[k + 1])

    outer_out_mit_mot = property(lambda self: self._outer_out(0))
    outer_out_mit_sot = property(lambda self: self._outer_out(1))
    outer_out_sit_sot = property(lambda self: self._outer_out(2))
    outer_out_nit_sot = property(lambda self: self._outer_out(3))
    outer_out_shared = property(lambda self: self._outer_out(4))
    n_outer_outputs = property(lambda self: self._outer_out_starts[-1])

    @property
    def outer_out_n_steps(self):
        """Index of the int64 count of executed steps (only when as_while), else None."""
        return self._outer_out_starts[5] if self.as_while else None

    # -- inner inputs ------------------------------------------------------------
    @cached_property
    def _inner_in_starts(self):
        sizes = (self.n_seqs, sum(len(t) for t in self.mit_mot_in_slices),
                 sum(len(t) for t in self.mit_sot_in_slices), self.n_sit_sot,
                 self.n_shared_outs, self.n_non_seqs)
        return _starts(sizes)

    def _inner_in(self, k):
        s = self._inner_in_starts
        return range(s[k], s[k + 1])

    inner_in_seqs = property(lambda self: self._inner_in(0))
    inner_in_sit_sot = property(lambda self: self._inner_in(3))
    inner_in_shared = property(lambda self: self._inner_in(4))
    inner_in_non_seqs = property(lambda self: self._inner_in(5))
    n_inner_inputs = property(lambda self: self._inner_in_starts[-1])

    @property
    def inner_in_mit_mot(self):
        """One range per mit_mot: its inner inputs, in the order of its in-taps."""
        return _groups(self._inner_in_starts[1], self.mit_mot_in_slices)

    @property
    def inner_in_mit_sot(self):
        """One range per mit_sot: its inner inputs, in the order of its taps."""
        return _groups(self._inner_in_starts[2], self.mit_sot_in_slices)

    # -- inner outputs -----------------------------------------------------------
    @cached_property
    def _inner_out_starts(self):
        sizes = (self.n_mit_mot_outs, self.n_mit_sot, self.n_sit_sot, self.n_nit_sot,
                 self.n_shared_outs, int(self.as_while))
        return _starts(sizes)

    def _inner_out(self, k):
        s = self._inner_out_starts
        return range(s[k], s[k + 1])

    inner_out_mit_sot = property(lambda self: self._inner_out(1))
    inner_out_sit_sot = property(lambda self: self._inner_out(2))
    inner_out_nit_sot = property(lambda self: self._inner_out(3))
    inner_out_shared = property(lambda self: self._inner_out(4))
    n_inner_outputs = property(lambda self: self._inner_out_starts[-1])

    @property
    def inner_out_mit_mot(self):
        """One range per mit_mot: its inner outputs, in the order of its out-taps."""
        return _groups(0, self.mit_mot_out_slices)

    @property
    def inner_out_until(self):
        """Index of the stop condition among the inner outputs (as_while), else None."""
        return self._inner_out_starts[5] if self.as_while else None

    # -- recurrent buffers -------------------------------------------------------
    @cached_property
    def buffers(self):
        """A `Buffer` per recurrent state: mit_mot, then mit_sot, then sit_sot."""
        out = []
        for j in range(self.n_mit_mot):
            lo, hi = self.mit_mot_bounds(j)
            out.append(Buffer(
                "mit_mot", j, self.outer_in_mit_mot[j], self.outer_out_mit_mot[j],
                tuple(self.inner_in_mit_mot[j]), tuple(self.inner_out_mit_mot[j]),
                tuple(k - lo for k in self.mit_mot_in_slices[j]),
                tuple(k - lo for k in self.mit_mot_out_slices[j]), hi - lo))
        for j in range(self.n_mit_sot):
            depth = self.mit_sot_depth(j)
            out.append(Buffer(
                "mit_sot", j, self.outer_in_mit_sot[j], self.outer_out_mit_sot[j],
                tuple(self.inner_in_mit_sot[j]), (self.inner_out_mit_sot[j],),
                tuple(depth + k for k in self.mit_sot_in_slices[j]), (depth,), depth))
        for j in range(self.n_sit_sot):
            out.append(Buffer(
                "sit_sot", j, self.outer_in_sit_sot[j], self.outer_out_sit_sot[j],
                (self.inner_in_sit_sot[j],), (self.inner_out_sit_sot[j],), (0,), (1,), 1))
        return tuple(out)

    # -- correspondences -----------------------------------------------------------
    @cached_property
    def entities(self):
        """Every loop variable as (kind, outer input, inner inputs, inner outputs, outer output).

        Missing parts are -1 (outer) or () (inner). A nit_sot's outer input is
        its length; n_steps and the until condition belong to no entity.
        """
        ents = []
        for j in range(self.n_seqs):
            ents.append(("seq", self.outer_in_seqs[j], (self.inner_in_seqs[j],), (), -1))
        for b in self.buffers:
            ents.append((b.kind, b.outer_input, b.inner_inputs, b.inner_outputs, b.outer_output))
        for j in range(self.n_nit_sot):
            ents.append(("nit_sot", self.outer_in_nit_sot[j], (),
                         (self.inner_out_nit_sot[j],), self.outer_out_nit_sot[j]))
        for j in range(self.n_shared_outs):
            ents.append(("shared", self.outer_in_shared[j], (self.inner_in_shared[j],),
                         (self.inner_out_shared[j],), self.outer_out_shared[j]))
        for j in range(self.n_non_seqs):
            ents.append(("non_seq", self.outer_in_non_seqs[j],
                         (self.inner_in_non_seqs[j],), (), -1))
        return tuple(ents)

    @cached_property
    def var_mappings(self):
        """The 12 index maps between outer/inner inputs/outputs (see docs/scan-internals.md).

        ``var_mappings["inner_inp_from_outer_out"][i]`` lists the inner inputs
        that belong to the same loop variable as outer output i. Maps to outer
        variables give one index (-1 when there is none); maps to inner
        variables give a list (empty when there is none). Every index of the
        source set is a key.
        """
        sizes = {"outer_inp": self.n_outer_inputs, "outer_out": self.n_outer_outputs,
                 "inner_inp": self.n_inner_inputs, "inner_out": self.n_inner_outputs}
        part = {"outer_inp": 1, "inner_inp": 2, "inner_out": 3, "outer_out": 4}
        maps = {}
        for src in sizes:
            for dst in sizes:
                if src == dst:
                    continue
                outer_dst = dst.startswith("outer")
                table = {i: (-1 if outer_dst else []) for i in range(sizes[src])}
                for ent in self.entities:
                    srcs = _as_indices(ent[part[src]])
                    dsts = _as_indices(ent[part[dst]])
                    for i in srcs:
                        table[i] = (dsts[0] if dsts else -1) if outer_dst else list(dsts)
                maps[f"{dst}_from_{src}"] = table
        return maps


def _starts(sizes):
    starts = [0]
    for n in sizes:
        starts.append(starts[-1] + n)
    return tuple(starts)


def _groups(start, slices):
    out = []
    for taps in slices:
        out.append(range(start, start + len(taps)))
        start += len(taps)
    return tuple(out)


def _as_indices(part):
    if isinstance(part, tuple):
        return part
    return () if part == -1 else (part,)
