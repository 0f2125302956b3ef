"""`StoragePlan`: how a Scan node stores its rows, beside `ScanInfo` (what the loop computes).

`ScanInfo` describes the recurrence: which variables a step reads and writes, and the
loop variables' places among the node's inputs and outputs. A `StoragePlan` describes
how the loop stores and makes rows: which rows an output keeps (a ring, a sum), which
array holds which rows while the loop runs (homes), and which sequence rows it computes
itself, in chunks. Every plan is set by a compile-time rewrite that proved it safe
(docs/scan-internals.md, "Storage plans"); `scan()` builds a node with the empty plan.

The plan is part of the op's identity (`Scan.__props__`): two nodes with different plans
generate different loops, so they must not merge, and the graph key of the disk cache
(`bptt.compile.graph_key`) describes it with the other props.

Fields, each empty or one entry per loop variable of its category:

* ``buffer_rows`` (one per state, in `ScanInfo.buffers` order): None (the whole history),
  or the ring length R >= extent + 1 of a mit_sot or sit_sot buffer. Full row r then lives
  in ring row ``r % R'`` with ``R' = min(R, extent + T)`` rows allocated, and the outer
  output is the last ``min(R', extent + E)`` full rows, in time order: the readers
  save-mem leaves (the last rows, shapes) see the same values. ``extent + 1`` keeps the
  row a step writes apart from the rows it reads. Set by ``bptt/scan/rewriting/savemem.py``.
* ``nit_sot_sums`` (one per nit_sot): None, or ``(j, rows)``: the nit_sot's outer output
  is not its stacked rows but ``sum over executed steps t of seq_j[t].T @ y_t`` (2-d rows
  of one dtype; zeros when no step ran), accumulated in chunks of about `rows` stacked rows
  (one gemm per chunk). ``j == ROW_SUM`` (-1): *summed over rows*, the output is ``sum
  over executed steps t of y_t.sum(axis=0)`` (1-d, a bias gradient; one column sum per
  chunk). No until loop. Set by ``bptt/scan/rewriting/chunks.py``.
* ``nit_sot_into_seq`` (one per nit_sot): None, or the sequence whose rows the nit_sot is
  stored in; row t is written after step t, which alone read it, and the output is a view
  of that sequence. Set by ``bptt/scan/rewriting/inplace.py``.
* ``seq_into_buffer`` (one per state, in `ScanInfo.buffers` order): None, or the
  sequence stored in that buffer's rows after its initial row (a sit_sot, or a mit_sot of
  the one tap -1, whole buffer): the outer initial value is then the whole buffer, its
  row ``t + 1`` holding sequence row t, and the loop writes the state into that memory.
  Set by ``bptt/scan/rewriting/seq_buffer.py``.
* ``sums_transposed`` (one per nit_sot): False, or True for a nit_sot summed with a
  sequence (``nit_sot_sums``) whose sum is allocated column-major (the transpose of a C
  array): every outer reader transposes it. Values are the same. Set by
  ``bptt/scan/rewriting/sum_layout.py``.
* ``seq_products`` (one per sequence): None, or ``(w, rows)``: the sequence's outer value
  is the left factor ``X`` (3-d, rows of ``(B, In)``) of a product with non-sequence `w`
  (a matrix ``(In, N)``), and step t reads ``X[t] @ W`` (``(B, N)``), computed in chunks of
  about `rows` stacked rows (one gemm per chunk, into a few steps' rows of working space)
  instead of a T-long array. Set by ``bptt/scan/rewriting/product_seqs.py``.

Rings and sums change what an outer output is (its rows, or a sum instead), so the op's
output types and shapes read them. Passes after theirs edit the node through `ScanArgs`,
which keeps their entries beside their loop variables, so they follow every edit. The
homes and ``sums_transposed`` change neither the node's interface nor its values, and
their proofs (who else reads a sequence's memory, or a sum) hold for the node's outer graph
only: a `ScanArgs` edit drops them. A product sequence changes what one outer input is (X instead of X @ W), so
`ScanArgs.from_node` refuses a node with one. Homes and products are set after the last
edit. The derivatives (`Scan.L_op`, `R_op`) refuse rings, sums and products: they run
before any plan is set.
"""
from __future__ import annotations

from dataclasses import dataclass

#: `StoragePlan.nit_sot_sums` sequence entry of a nit_sot summed over its rows (no product).
ROW_SUM = -1


def _entries(values):
    """Entries as ints (None kept); all-None is the empty tuple (one spelling per plan)."""
    out = tuple(None if v is None else int(v) for v in values)
    return out if any(v is not None for v in out) else ()


def _pairs(values):
    """Entries as int pairs (None kept); all-None is the empty tuple."""
    out = tuple(None if e is None else tuple(int(x) for x in e) for e in values)
    return out if any(e is not None for e in out) else ()


@dataclass(frozen=True)
class StoragePlan:
    """Where the rows of a Scan node live; see the module docstring."""

    buffer_rows: tuple = ()
    nit_sot_sums: tuple = ()
    nit_sot_into_seq: tuple = ()
    seq_into_buffer: tuple = ()
    seq_products: tuple = ()
    sums_transposed: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "buffer_rows", _entries(self.buffer_rows))
        object.__setattr__(self, "nit_sot_sums", _pairs(self.nit_sot_sums))
        object.__setattr__(self, "nit_sot_into_seq", _entries(self.nit_sot_into_seq))
        object.__setattr__(self, "seq_into_buffer", _entries(self.seq_into_buffer))
        object.__setattr__(self, "seq_products", _pairs(self.seq_products))
        flags = tuple(bool(v) for v in self.sums_transposed)
        object.__setattr__(self, "sums_transposed", flags if any(flags) else ())

    @property
    def empty(self):
        """Whether the loop stores every output's rows where its own allocation puts them."""
        return not (self.buffer_rows or self.nit_sot_sums or self.nit_sot_into_seq
                    or self.seq_into_buffer or self.seq_products)

    def buffer_ring(self, s):
        """The ring length of state `s`'s buffer (`buffer_rows`), or None for a whole buffer."""
        return self.buffer_rows[s] if self.buffer_rows else None

    def nit_sot_sum(self, k):
        """``(j, rows)`` if nit_sot `k`'s output is summed with sequence `j` (`nit_sot_sums`)."""
        return self.nit_sot_sums[k] if self.nit_sot_sums else None

    def nit_sot_row_sum(self, k):
        """Whether nit_sot `k` is summed over its rows (`nit_sot_sums` entry ``(ROW_SUM, rows)``)."""
        e = self.nit_sot_sum(k)
        return e is not None and e[0] == ROW_SUM

    @property
    def summed_seqs(self):
        """The sequences a summed nit_sot multiplies (their rows are read at a chunk's end)."""
        return {e[0] for e in self.nit_sot_sums if e is not None and e[0] != ROW_SUM}

    def sum_transposed(self, k):
        """Whether summed nit_sot `k`'s sum is stored column-major (`sums_transposed`)."""
        return bool(self.sums_transposed) and self.sums_transposed[k]

    def seq_product(self, j):
        """``(w, rows)`` if sequence `j` is read as ``seq_j[t] @ non_seq_w`` (`seq_products`)."""
        return self.seq_products[j] if self.seq_products else None

    @property
    def product_seqs(self):
        """``(j, w, rows)`` for each sequence read as ``seq_j[t] @ non_seq_w``."""
        return tuple((j, *e) for j, e in enumerate(self.seq_products) if e is not None)

    def nit_sot_seq(self, k):
        """The sequence nit_sot `k` is stored in (`nit_sot_into_seq`), or None."""
        return self.nit_sot_into_seq[k] if self.nit_sot_into_seq else None

    def buffer_seq(self, s):
        """The sequence stored in state `s`'s buffer (`seq_into_buffer`), or None."""
        return self.seq_into_buffer[s] if self.seq_into_buffer else None

    @property
    def homed_seqs(self):
        """The sequences whose rows hold a nit_sot or a state buffer."""
        return {j for j in self.nit_sot_into_seq + self.seq_into_buffer if j is not None}

    def check(self, info):
        """Raise ValueError unless the plan fits the loop `info` describes."""
        self._check_rings(info)
        self._check_sums(info)
        into = [j for j in self.nit_sot_into_seq if j is not None]
        if self.nit_sot_into_seq and (len(self.nit_sot_into_seq) != info.n_nit_sot
                                      or len(set(into)) != len(into)
                                      or not all(0 <= j < info.n_seqs for j in into)):
            raise ValueError(f"StoragePlan: nit_sot_into_seq needs one entry per nit_sot "
                             f"({info.n_nit_sot}), None or a distinct sequence index, got "
                             f"{self.nit_sot_into_seq}")
        held = [j for j in self.seq_into_buffer if j is not None]
        if self.seq_into_buffer and (
                len(self.seq_into_buffer) != info.n_states or len(set(held)) != len(held)
                or set(held) & set(into) or not all(0 <= j < info.n_seqs for j in held)
                or any(j is not None and (b.extent != 1 or b.kind == "mit_mot"
                                          or self.buffer_ring(s) is not None)
                       for s, (b, j) in enumerate(zip(info.buffers, self.seq_into_buffer)))):
            raise ValueError(f"StoragePlan: seq_into_buffer needs one entry per state "
                             f"({info.n_states}), None or a distinct sequence index (not a "
                             f"nit_sot's) for a whole buffer of one initial row, got "
                             f"{self.seq_into_buffer}")
        self._check_products(info)
        if self.sums_transposed and (
                len(self.sums_transposed) != info.n_nit_sot
                or any(t and (self.nit_sot_sum(k) is None or self.nit_sot_row_sum(k))
                       for k, t in enumerate(self.sums_transposed))):
            raise ValueError(f"StoragePlan: sums_transposed needs one entry per nit_sot "
                             f"({info.n_nit_sot}), True only for a nit_sot summed with a "
                             f"sequence, got {self.sums_transposed}")

    def _check_rings(self, info):
        if not self.buffer_rows:
            return
        if len(self.buffer_rows) != info.n_states:
            raise ValueError(f"StoragePlan: buffer_rows needs one entry per state "
                             f"({info.n_states}), got {self.buffer_rows}")
        for b, rows in zip(info.buffers, self.buffer_rows):
            if rows is not None and (b.kind == "mit_mot" or rows < b.extent + 1):
                raise ValueError(f"StoragePlan: {b.kind} {b.index} cannot be a ring of "
                                 f"{rows} rows (mit_sot/sit_sot only, >= extent + 1)")

    def _check_sums(self, info):
        sums = [e for e in self.nit_sot_sums if e is not None]
        if self.nit_sot_sums and (len(self.nit_sot_sums) != info.n_nit_sot or info.as_while
                                  or not all(len(e) == 2 and e[1] >= 1 and
                                             (0 <= e[0] < info.n_seqs or e[0] == ROW_SUM)
                                             for e in sums)):
            raise ValueError(f"StoragePlan: nit_sot_sums needs one entry per nit_sot "
                             f"({info.n_nit_sot}), None or (sequence or {ROW_SUM}, rows >= 1), "
                             f"and no until, got {self.nit_sot_sums}")

    def _check_products(self, info):
        # A home needs the sequence's memory, a summed nit_sot its rows: neither is X @ W.
        taken = self.homed_seqs | self.summed_seqs
        if self.seq_products and (
                len(self.seq_products) != info.n_seqs or info.as_while
                or not all(e is None or (len(e) == 2 and 0 <= e[0] < info.n_non_seqs
                                         and e[1] >= 1 and j not in taken)
                           for j, e in enumerate(self.seq_products))):
            raise ValueError(f"StoragePlan: seq_products needs one entry per sequence "
                             f"({info.n_seqs}), None or (non-sequence index, rows >= 1) for a "
                             f"sequence no nit_sot or state is stored in or summed with, and no "
                             f"until, got {self.seq_products}")

    def describe_homes(self, info):
        """The homes as the op's name shows them: ``, nit_sot 0 into seq 3``..."""
        text = "".join(f", nit_sot {k} into seq {j}" for k, j in
                       enumerate(self.nit_sot_into_seq) if j is not None)
        return text + "".join(f", seq {j} into {b.kind} {b.index}" for b, j in
                              zip(info.buffers, self.seq_into_buffer) if j is not None)

    def describe_sums(self):
        """The summed nit_sots as the op's name shows them: ``, nit_sot 1 summed with seq 0``..."""
        return "".join(f", nit_sot {k} summed " + ("over rows" if e[0] == ROW_SUM else
                                                   f"with seq {e[0]}") + f" (chunks of {e[1]} rows"
                       + (", column-major)" if self.sum_transposed(k) else ")")
                       for k, e in enumerate(self.nit_sot_sums) if e is not None)

    def describe_products(self):
        """The product sequences as the op's name shows them."""
        return "".join(f", seq {j} times non-seq {w} (chunks of {rows} rows)"
                       for j, w, rows in self.product_seqs)


#: The plan of a node as `scan()` builds it.
NO_PLAN = StoragePlan()
