"""`ScanArgs`: a Scan node's variables by category, editable, and able to rebuild a node.

Rewrites and the gradient work on names instead of offsets::

    args = ScanArgs.from_node(node)
    args.remove("non_seqs", 2)                # drop a non-sequence everywhere
    args.outer_in_seqs[0] = new_sequence      # swap an outer input
    new_node = args.make_node()               # a new Scan node (new ScanInfo)

Each category holds parallel lists (one entry per loop variable of that
category); `CATEGORIES` names them. Lists of lists hold the several taps of
one mit_mot / mit_sot. Outer outputs are those of the node read from (None
for a node not built yet).

An edit keeps what the loop computes (`ScanInfo`) and the storage plans that say
what an output is: ring lengths (``<kind>_rows``) and summed nit_sots
(``nit_sot_sums``) are lists beside their loop variables, so they follow every
edit, and `plan` is the `StoragePlan` they make. It drops the homes: their
proofs (who else reads a sequence's memory) hold for the outer graph of the
node they were made for only, and the passes that set them run after the last
edit (``bptt/compile/passes.py``). It refuses a node with product sequences.
"""
from __future__ import annotations

from .info import ScanInfo
from .op import Scan
from .plan import StoragePlan

#: Category -> the parallel lists that hold it.
CATEGORIES = {
    "seqs": ("outer_in_seqs", "inner_in_seqs", "seq_origins"),
    "mit_mot": ("outer_in_mit_mot", "inner_in_mit_mot", "inner_out_mit_mot",
                "outer_out_mit_mot", "mit_mot_in_slices", "mit_mot_out_slices", "mit_mot_rows"),
    "mit_sot": ("outer_in_mit_sot", "inner_in_mit_sot", "inner_out_mit_sot",
                "outer_out_mit_sot", "mit_sot_in_slices", "mit_sot_rows"),
    "sit_sot": ("outer_in_sit_sot", "inner_in_sit_sot", "inner_out_sit_sot",
                "outer_out_sit_sot", "sit_sot_rows"),
    "nit_sot": ("outer_in_nit_sot", "inner_out_nit_sot", "outer_out_nit_sot", "nit_sot_sums"),
    "shared": ("outer_in_shared", "inner_in_shared", "inner_out_shared", "outer_out_shared"),
    "non_seqs": ("outer_in_non_seqs", "inner_in_non_seqs"),
}


class ScanArgs:
    """The variables of a Scan node, by category (see `CATEGORIES` and docs/scan-internals.md).

    Attributes besides the category lists: ``n_steps`` (outer), ``cond``
    (inner until condition or None), ``outer_out_n_steps`` (the executed-step
    count output of an until loop, or None), ``truncate_gradient``, ``name``,
    ``labels`` (inner output variable -> phrase used in run-time errors) and
    ``profile`` (the user's `ScanProfile`, kept by every rebuilt op).
    """

    def __init__(self):
        for fields in CATEGORIES.values():
            for f in fields:
                setattr(self, f, [])
        self.n_steps = None
        self.cond = None
        self.outer_out_n_steps = None
        self.truncate_gradient = -1
        self.name = None
        self.labels = {}
        self.profile = None

    @classmethod
    def from_node(cls, node):
        """The view of an existing Scan node."""
        op, info = node.op, node.op.info
        if op.plan.seq_products:
            # Not dropped with the rest of the plan: the sequence would silently become X
            # instead of X @ W.
            raise ValueError(f"ScanArgs: {info.label} reads sequence products "
                             f"(seq_products={op.plan.seq_products}), set by a storage-plan "
                             f"rewrite; no rewrite may edit such a scan")
        ins, outs = node.inputs, node.outputs
        ii, io = op.inner_inputs, op.inner_outputs
        a = cls()
        a.profile = op.profile   # the user's profile follows the loop through rewrites
        a.n_steps = ins[0]
        a.outer_in_seqs = [ins[i] for i in info.outer_in_seqs]
        a.inner_in_seqs = [ii[i] for i in info.inner_in_seqs]
        a.seq_origins = list(op.seq_origins) if op.seq_origins else [None] * info.n_seqs
        rows = op.plan.buffer_rows or (None,) * info.n_states
        for b, r in zip(info.buffers, rows):
            getattr(a, f"{b.kind}_rows").append(r)    # ring length (save-mem) or None
            a.add_buffer(info, b, ins[b.outer_input], outs[b.outer_output],
                         [ii[i] for i in b.inner_inputs], [io[o] for o in b.inner_outputs])
        a.outer_in_nit_sot = [ins[i] for i in info.outer_in_nit_sot]
        a.inner_out_nit_sot = [io[o] for o in info.inner_out_nit_sot]
        a.outer_out_nit_sot = [outs[j] for j in info.outer_out_nit_sot]
        a.nit_sot_sums = [op.plan.nit_sot_sum(k) for k in range(info.n_nit_sot)]
        a.outer_in_shared = [ins[i] for i in info.outer_in_shared]
        a.inner_in_shared = [ii[i] for i in info.inner_in_shared]
        a.inner_out_shared = [io[o] for o in info.inner_out_shared]
        a.outer_out_shared = [outs[j] for j in info.outer_out_shared]
        a.outer_in_non_seqs = [ins[i] for i in info.outer_in_non_seqs]
        a.inner_in_non_seqs = [ii[i] for i in info.inner_in_non_seqs]
        if info.as_while:
            a.cond = io[info.inner_out_until]
            a.outer_out_n_steps = outs[info.outer_out_n_steps]
        a.truncate_gradient, a.name = info.truncate_gradient, info.name
        a.labels = {io[o]: op.label_of_output(o) for o in range(info.n_inner_outputs)}
        return a

    # -- editing ---------------------------------------------------------------------
    def remove(self, category, j):
        """Drop entry `j` of `category` from every list that holds it."""
        for f in CATEGORIES[category]:
            del getattr(self, f)[j]

    def replace_inner(self, mapping):
        """Rebuild the inner outputs with each inner variable of `mapping` computed by its value.

        The values may be new inner inputs (add them to a category too) or
        graphs of the remaining inner inputs and constants.
        """
        from ..graph.replace import clone_replace

        old = self.inner_outputs
        if not mapping or not old:
            return
        new = dict(zip(old, clone_replace(old, dict(mapping))))
        self.map_inner_outputs(new)

    def map_inner_outputs(self, new):
        """Swap every inner output `v` for ``new[v]`` (labels follow)."""
        get = lambda v: new.get(v, v)   # noqa: E731
        self.inner_out_mit_mot = [[get(v) for v in g] for g in self.inner_out_mit_mot]
        for f in ("inner_out_mit_sot", "inner_out_sit_sot", "inner_out_nit_sot",
                  "inner_out_shared"):
            setattr(self, f, [get(v) for v in getattr(self, f)])
        if self.cond is not None:
            self.cond = get(self.cond)
        self.labels = {get(v): label for v, label in self.labels.items()}

    def add_buffer(self, info, b, outer_in, outer_out, inner_ins, inner_outs):
        """Append a state of `b`'s kind, with the taps `info` gives buffer `b`: its initial
        buffer and outer output, its inner tap inputs and inner outputs."""
        k = b.kind
        getattr(self, f"outer_in_{k}").append(outer_in)
        getattr(self, f"outer_out_{k}").append(outer_out)
        if k == "sit_sot":
            self.inner_in_sit_sot.append(inner_ins[0])
            self.inner_out_sit_sot.append(inner_outs[0])
        elif k == "mit_sot":
            self.inner_in_mit_sot.append(inner_ins)
            self.inner_out_mit_sot.append(inner_outs[0])
            self.mit_sot_in_slices.append(info.mit_sot_in_slices[b.index])
        else:
            self.inner_in_mit_mot.append(inner_ins)
            self.inner_out_mit_mot.append(inner_outs)
            self.mit_mot_in_slices.append(info.mit_mot_in_slices[b.index])
            self.mit_mot_out_slices.append(info.mit_mot_out_slices[b.index])

    def add_non_seq(self, outer, inner_type=None):
        """Append `outer` as a non-sequence; return its new inner input (of `inner_type`)."""
        inner = (inner_type or outer.type)()
        self.outer_in_non_seqs.append(outer)
        self.inner_in_non_seqs.append(inner)
        return inner

    def add_seq(self, outer, origin=None, inner_type=None):
        """Append `outer` as a sequence; return its new inner input (one row, of `inner_type`)."""
        inner = (inner_type or outer.type.clone(shape=outer.type.shape[1:]))()
        self.outer_in_seqs.append(outer)
        self.inner_in_seqs.append(inner)
        self.seq_origins.append(origin)
        return inner

    def add_nit_sot(self, inner_out, length, label=None, summed=None):
        """Append `inner_out` as a nit_sot output of `length` rows (its outer output is None);
        `summed`: its `StoragePlan.nit_sot_sums` entry."""
        self.nit_sot_sums = self._sums() + [summed]
        self.outer_in_nit_sot.append(length)
        self.inner_out_nit_sot.append(inner_out)
        self.outer_out_nit_sot.append(None)
        if label is not None:
            self.labels[inner_out] = label

    # -- the layout ------------------------------------------------------------------
    @property
    def info(self):
        """The `ScanInfo` describing the current lists."""
        return ScanInfo(
            n_seqs=len(self.outer_in_seqs), mit_mot_in_slices=tuple(self.mit_mot_in_slices),
            mit_mot_out_slices=tuple(self.mit_mot_out_slices),
            mit_sot_in_slices=tuple(self.mit_sot_in_slices), n_sit_sot=len(self.outer_in_sit_sot),
            n_nit_sot=len(self.outer_in_nit_sot), n_shared_outs=len(self.outer_in_shared),
            n_non_seqs=len(self.outer_in_non_seqs), as_while=self.cond is not None,
            truncate_gradient=self.truncate_gradient, name=self.name)

    @property
    def plan(self):
        """The `StoragePlan` the lists carry: rings and summed nit_sots; no homes, no products."""
        return StoragePlan(
            buffer_rows=tuple(r for k in ("mit_mot", "mit_sot", "sit_sot") for r in self._rows(k)),
            nit_sot_sums=tuple(self._sums()))

    def _sums(self):
        """`StoragePlan.nit_sot_sums` entries; nit_sots appended without one are stacked rows."""
        return list(self.nit_sot_sums) + [None] * (len(self.outer_in_nit_sot)
                                                   - len(self.nit_sot_sums))

    def _rows(self, kind):
        """Ring lengths of the `kind` states; states appended without one keep every row."""
        rows = list(getattr(self, f"{kind}_rows"))
        return rows + [None] * (len(getattr(self, f"outer_in_{kind}")) - len(rows))

    @property
    def inner_inputs(self):
        return (list(self.inner_in_seqs) + _flat(self.inner_in_mit_mot)
                + _flat(self.inner_in_mit_sot) + list(self.inner_in_sit_sot)
                + list(self.inner_in_shared) + list(self.inner_in_non_seqs))

    @property
    def inner_outputs(self):
        return (_flat(self.inner_out_mit_mot) + list(self.inner_out_mit_sot)
                + list(self.inner_out_sit_sot) + list(self.inner_out_nit_sot)
                + list(self.inner_out_shared) + ([self.cond] if self.cond is not None else []))

    @property
    def outer_inputs(self):
        return ([self.n_steps] + list(self.outer_in_seqs) + list(self.outer_in_mit_mot)
                + list(self.outer_in_mit_sot) + list(self.outer_in_sit_sot)
                + list(self.outer_in_shared) + list(self.outer_in_nit_sot)
                + list(self.outer_in_non_seqs))

    @property
    def outer_outputs(self):
        return (list(self.outer_out_mit_mot) + list(self.outer_out_mit_sot)
                + list(self.outer_out_sit_sot) + list(self.outer_out_nit_sot)
                + list(self.outer_out_shared)
                + ([self.outer_out_n_steps] if self.cond is not None else []))

    # -- rebuilding --------------------------------------------------------------------
    def make_op(self):
        """A `Scan` op for the current inner graph, layout and plan (`plan`)."""
        origins = _consistent(self.seq_origins)
        inner_outputs = self.inner_outputs
        labels = [self.labels.get(v, f"inner output {o}") for o, v in enumerate(inner_outputs)]
        return Scan(self.inner_inputs, inner_outputs, self.info, seq_origins=origins,
                    output_labels=labels, profile=self.profile, plan=self.plan)

    def make_node(self):
        """A new Scan node (an `Apply`) computing the current layout from the outer inputs."""
        return self.make_op().make_node(*self.outer_inputs)

    def __repr__(self):
        parts = []
        for cat, fields in CATEGORIES.items():
            n = len(getattr(self, fields[0]))
            if n:
                parts.append(f"{cat}={n}")
        return f"ScanArgs({', '.join(parts)}{', until' if self.cond is not None else ''})"


def _consistent(origins):
    """The origins if any is known, else None.

    Each user's sequence is checked against its taps from its least shifted
    slice left (`utils.checked_origins`); a sequence derived from the user's
    (offset None) is checked against n_steps only, under the user's name; a
    sequence of no origin (None) is numbered in messages.
    """
    return None if all(o is None for o in origins) else origins


def _flat(lists):
    return [v for group in lists for v in group]
