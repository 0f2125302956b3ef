"""The `Scan` op: a loop whose body is an inner graph.

The op holds its step graph (`inner_inputs` -> `inner_outputs`) and a
`ScanInfo` that says which inner and outer variables play which part. Every
position is computed by `ScanInfo`; the layout, with a diagram, is in
``bptt/scan/info.py`` and docs/scan-internals.md.

The op's `StoragePlan` (``bptt/scan/plan.py``) says where the rows live.
``perform`` is the reference loop, in ``bptt/scan/perform.py``; the checks
before the loop (shared with the numba lowering, which raises the same
messages) and the symbolic methods are here.
"""
from __future__ import annotations

import numpy as np

from ..graph.basic import Apply, Variable
from ..graph.evaluate import PerformProgram
from ..graph.op import Op
from ..graph.replace import clone_get_equiv
from ..graph.traversal import ancestors, graph_inputs
from .grad import scan_grad
from .info import ScanInfo
from . import perform as reference_loop
from .plan import NO_PLAN, StoragePlan
from .profiling import ScanProfile
from .rop import scan_rop
from .utils import (as_shape_var, check_closed, checked_origins, graph_signature, infer_shapes,
                    simplified, without_size_reads)


# -- the loop's messages for sequences too short: str.format templates, user text escaped --
def _escaped(text):
    return str(text).replace("{", "{{").replace("}", "}}")


def taps_too_short(label, o, rows="{}"):
    """Sequence `o` (a `SeqOrigin`) with taps has too few rows: fill in (rows), steps, need;
    `rows` given as text (``"at most 2"``) leaves steps and need."""
    return (_escaped(f"{label}: sequence {o.label} (taps {list(o.taps)}) has ") + rows
            + " rows, but {} steps with these taps need {} "
            + _escaped(f"(n_steps + {o.span}); ") + "pass a longer sequence or a smaller n_steps")


def origin_too_short(label, o):
    """Sequence `o` is shorter than n_steps: fill in n_steps."""
    return (_escaped(f"{label}: sequence {o.label} (taps {list(o.taps)}) is too short ")
            + "for n_steps={}: " + _escaped(f"these taps need n_steps + {o.span} rows; ")
            + "pass a longer sequence or a smaller n_steps")


def sequence_too_short(label, k):
    """Outer sequence `k` (no origin) is shorter than n_steps: fill in its rows, n_steps."""
    return (_escaped(f"{label}: sequence {k} has ") + "{} rows, fewer than n_steps={}; "
            "pass a longer sequence or a smaller n_steps")


def negative_steps(label):
    """A symbolic n_steps is negative: fill in n_steps."""
    return (_escaped(f"{label}: n_steps is ") + "{}; a symbolic n_steps must not be negative "
            "at run time (a negative Python int runs backwards)")


class Scan(Op):
    """A loop over an inner graph; see the module docstring and `ScanInfo`.

    Parameters
    ----------
    inner_inputs, inner_outputs : list of Variable
        The step graph, in the order `ScanInfo` describes. It is cloned: the
        op owns its copy.
    info : ScanInfo
    seq_origins : tuple of SeqOrigin, optional
        One per outer sequence, to name the user's sequence in errors.
    output_labels : tuple of str, optional
        One per inner output, naming it in errors.
    plan : StoragePlan, optional
        Where the rows live (``bptt/scan/plan.py``); the empty plan by default.

    Two Scan ops are equal when their infos and plans are equal and their inner
    graphs are structurally equal (`graph_signature`), so merging works on loops.
    """

    __props__ = ("info", "plan", "signature")
    accepts_disconnected_output_grads = True

    def __init__(self, inner_inputs, inner_outputs, info, seq_origins=None, output_labels=None,
                 profile=None, plan=NO_PLAN):
        if not isinstance(info, ScanInfo):
            raise TypeError(f"Scan: info must be a ScanInfo, got {type(info).__name__}")
        if not isinstance(plan, StoragePlan):
            raise TypeError(f"Scan: plan must be a StoragePlan, got {type(plan).__name__}")
        plan.check(info)
        equiv = clone_get_equiv(list(inner_inputs), list(inner_outputs))
        self.inner_inputs = [equiv[v] for v in inner_inputs]
        self.inner_outputs = [equiv[v] for v in inner_outputs]
        self.info = info
        self.plan = plan
        self._check_inner()
        self.signature = graph_signature(self.inner_inputs, self.inner_outputs)
        self.seq_origins = tuple(seq_origins) if seq_origins else None
        self.output_labels = tuple(output_labels) if output_labels else None
        self._hash = None
        self._program = None
        # Statistics are not part of the op's identity (see bptt/scan/profiling.py).
        self.profile = _make_profile(profile, info)

    # -- identity -------------------------------------------------------------
    def __hash__(self):
        if self._hash is None:
            self._hash = hash((Scan, self.info, self.plan, self.signature))
        return self._hash

    def __str__(self):
        into = self.plan.describe_homes(self.info) + self.plan.describe_sums()
        into += self.plan.describe_products()
        return f"Scan{{{self.info.name or 'scan'}{into}}}"

    __repr__ = __str__

    @property
    def stateful(self):
        """Whether the step graph holds a stateful op (then rewrites must not fold the loop)."""
        from ..graph.traversal import toposort

        return any(getattr(n.op, "stateful", False)
                   for n in toposort(self.inner_outputs, blockers=self.inner_inputs))

    @property
    def var_mappings(self):
        """The 12 outer/inner index maps (see `ScanInfo.var_mappings`)."""
        return self.info.var_mappings

    def _check_inner(self):
        info, where = self.info, f"Scan ({self.info.label})"
        if len(self.inner_inputs) != info.n_inner_inputs:
            raise ValueError(f"{where}: info describes {info.n_inner_inputs} inner inputs, "
                             f"got {len(self.inner_inputs)}")
        if len(self.inner_outputs) != info.n_inner_outputs:
            raise ValueError(f"{where}: info describes {info.n_inner_outputs} inner outputs, "
                             f"got {len(self.inner_outputs)}")
        check_closed(self.inner_inputs, self.inner_outputs, where)
        for b in info.buffers:
            for i in b.inner_inputs:
                for o in b.inner_outputs:
                    _require_fit(self.inner_inputs[i].type, self.inner_outputs[o].type,
                                 f"{where}: {b.kind} {b.index} output {self.inner_outputs[o]}")
        for i, o in zip(info.inner_in_shared, info.inner_out_shared):
            _require_fit(self.inner_inputs[i].type, self.inner_outputs[o].type,
                         f"{where}: shared output {o}")
        if info.as_while:
            cond = self.inner_outputs[info.inner_out_until]
            if getattr(cond.type, "ndim", None) != 0:
                raise TypeError(f"{where}: the until condition must be a scalar, got {cond.type}")

    def label_of_output(self, o):
        """A phrase naming inner output `o` in messages."""
        if self.output_labels is not None:
            return self.output_labels[o]
        return f"inner output {o}"

    # -- building ---------------------------------------------------------------
    def make_node(self, *inputs):
        from ..tensor.type import TensorType, as_tensor_variable

        info, where = self.info, self.info.label
        if len(inputs) != info.n_outer_inputs:
            raise ValueError(f"{where}: expected {info.n_outer_inputs} outer inputs, "
                             f"got {len(inputs)}")
        inputs = [v if isinstance(v, Variable) else as_tensor_variable(v) for v in inputs]
        inputs[0] = _int_scalar(inputs[0], f"{where}: n_steps")
        for i in info.outer_in_nit_sot:
            inputs[i] = _int_scalar(inputs[i], f"{where}: nit_sot length (outer input {i})")
        for k, i in enumerate(info.outer_in_seqs):
            _require_row_fit(self._seq_rows(k, inputs),
                             self.inner_inputs[info.inner_in_seqs[k]].type,
                             f"{where}: sequence {k}")
        for b in info.buffers:
            for i in b.inner_inputs:
                _require_row_fit(inputs[b.outer_input], self.inner_inputs[i].type,
                                 f"{where}: {b.kind} {b.index} initial buffer")
        for a, b in ((info.outer_in_shared, info.inner_in_shared),
                     (info.outer_in_non_seqs, info.inner_in_non_seqs)):
            for i, j in zip(a, b):
                _require_fit(self.inner_inputs[j].type, inputs[i].type,
                             f"{where}: outer input {i}")
        outputs = [t() for t in self._output_types(inputs)]
        if info.as_while:
            outputs.append(TensorType("int64", ())())
        return Apply(self, inputs, outputs)

    def _seq_rows(self, k, inputs):
        """What sequence `k`'s rows are: its outer input, or, when the step reads
        ``X[t] @ W`` (`StoragePlan.seq_products`), a variable of that product's type."""
        from ..tensor.type import TensorType

        e, x = self.plan.seq_product(k), inputs[self.info.outer_in_seqs[k]]
        if e is None:
            return x
        w = inputs[self.info.outer_in_non_seqs[e[0]]]
        where = f"{self.info.label}: sequence {k} (read times non-sequence {e[0]})"
        if x.type.ndim != 3 or w.type.ndim != 2 or x.type.dtype != w.type.dtype:
            raise TypeError(f"{where}: expected a 3-d sequence and a matrix of one dtype, "
                            f"got {x.describe()} and {w.describe()}")
        if None not in (x.type.shape[2], w.type.shape[0]) and x.type.shape[2] != w.type.shape[0]:
            raise TypeError(f"{where}: the sequence's rows have {x.type.shape[2]} columns, "
                            f"the matrix {w.type.shape[0]} rows")
        return TensorType(x.type.dtype, x.type.shape[:2] + w.type.shape[1:])()

    def _output_types(self, inputs):
        from ..graph.basic import Constant
        from ..tensor.type import TensorType

        info, plan = self.info, self.plan
        n = int(inputs[0].data) if isinstance(inputs[0], Constant) and not info.as_while else None
        types = []
        for s, b in enumerate(info.buffers):
            outer_t = inputs[b.outer_input].type
            if b.kind == "mit_mot":
                types.append(outer_t)
                continue
            row = _merge_shapes(outer_t.shape[1:], self.inner_outputs[b.inner_outputs[0]].type.shape)
            rows, ring = None if n is None else b.extent + n, plan.buffer_ring(s)
            if rows is not None and ring is not None:
                rows = min(rows, ring)
            types.append(TensorType(outer_t.dtype, (rows,) + row))
        for k, o in enumerate(info.inner_out_nit_sot):
            t = self.inner_outputs[o].type
            if plan.nit_sot_row_sum(k):    # y_t.sum(axis=0) summed over the steps
                types.append(TensorType(t.dtype, (t.shape[-1],)))
                continue
            if plan.nit_sot_sum(k) is not None:    # seq_j[t].T @ y_t summed over the steps
                seq_t = inputs[info.outer_in_seqs[plan.nit_sot_sum(k)[0]]].type
                types.append(TensorType(t.dtype, (seq_t.shape[-1], t.shape[-1])))
                continue
            ln = inputs[info.outer_in_nit_sot[k]]
            rows = min(n, int(ln.data)) if n is not None and isinstance(ln, Constant) else None
            types.append(TensorType(t.dtype, (rows,) + t.shape))
        for i, o in zip(info.outer_in_shared, info.inner_out_shared):
            # The final value is the initial one or the last step's: a size is static
            # only where both types give it (the step's update proves it, or it is unknown).
            t, inner = inputs[i].type, self.inner_outputs[o].type
            if not isinstance(t, TensorType) or t == inner:
                types.append(t)
                continue
            types.append(t.clone(shape=tuple(a if a == b else None
                                             for a, b in zip(t.shape, inner.shape))))
        return types

    # -- running ----------------------------------------------------------------
    @property
    def program(self):
        """The inner graph prepared for repeated evaluation (built on first use)."""
        if self._program is None:
            self._program = PerformProgram(self.inner_inputs, self.inner_outputs)
        return self._program

    def perform(self, node, inputs, output_storage):
        reference_loop.perform(self, inputs, output_storage)

    # -- checks before the loop -------------------------------------------------------
    def check_before_loop(self, n, inputs):
        """Raise ValueError, naming the culprit, if `n` steps cannot run on `inputs`.

        Checks every sequence's length (before any step: never an
        out-of-bounds read), the initial buffers' lengths and the nit_sot
        lengths. The numba lowering raises the same messages.
        """
        info = self.info
        lengths = [np.shape(inputs[i])[0] for i in info.outer_in_seqs]
        msg = self.sequence_error(n, lengths)
        if msg is None:
            msg = self.buffer_error(n, [np.shape(inputs[b.outer_input])[0] for b in info.buffers])
        if msg is None:
            msg = self.product_error(inputs)
        if msg is None:
            for k, i in enumerate(info.outer_in_nit_sot):
                if int(inputs[i]) < 0:
                    msg = f"{info.label}: nit_sot {k} has a negative length {int(inputs[i])}"
        if msg is not None:
            raise ValueError(msg)

    def sequence_error(self, n, seq_lengths):
        """The message for sequences too short for `n` steps (or a negative `n`), else None.

        The messages are this module's templates (`taps_too_short` and the others), which
        the numba loop, the row-wise push-outs and the fill pass format too."""
        label = self.info.label
        for k, o in checked_origins(self.seq_origins):
            rows, need = seq_lengths[k] + o.offset, max(n, 0) + o.span
            if rows < need:
                if o.offset and not seq_lengths[k]:
                    return taps_too_short(label, o, f"at most {o.offset}").format(max(n, 0), need)
                return taps_too_short(label, o).format(rows, max(n, 0), need)
        for k, m in enumerate(seq_lengths):
            if m < n:
                o = self.seq_origins[k] if self.seq_origins is not None else None
                if o is not None:
                    return origin_too_short(label, o).format(n)
                return sequence_too_short(label, k).format(m, n)
        if n < 0:
            return negative_steps(label).format(n)
        return None

    def product_error(self, inputs):
        """The message for a sequence read as ``X[t] @ W`` whose `W` does not fit, else None."""
        info = self.info
        for j, wk, _ in self.plan.product_seqs:
            x = np.shape(inputs[info.outer_in_seqs[j]])
            w = np.shape(inputs[info.outer_in_non_seqs[wk]])
            if x[2] != w[0]:
                return (f"{info.label}: sequence {j} is multiplied by a matrix of {w[0]} rows, "
                        f"but its rows have {x[2]} columns")
        return None

    def buffer_error(self, n, buffer_lengths):
        """The message for an initial buffer too short for its taps (and `n`), else None."""
        for b, m in zip(self.info.buffers, buffer_lengths):
            need = b.extent + (max(n, 0) if b.kind == "mit_mot" else 0)
            if m < need:
                o = self.label_of_output(b.inner_outputs[0])
                return (f"{self.info.label}: the initial value of {o} ({b.kind}) has {m} rows "
                        f"along its first axis, but its taps need {need}")
        return None

    def zero_step_row_shape(self, o, inputs):
        """The row shape of inner output `o` when no step ran (its static shape where known)."""
        static = self.inner_outputs[o].type.shape
        if all(s is not None for s in static):
            return tuple(static)
        try:
            values = self._row_shape_program()(*self._zero_step_args(inputs))
            return tuple(int(s) for s in values[o])
        except Exception:  # noqa: BLE001  (a value-dependent shape: unknown without a step)
            return tuple(0 if s is None else s for s in static)

    def _row_shape_program(self):
        if getattr(self, "_shape_program", None) is None:
            from ..tensor.basic import stack

            from ..tensor.type import as_tensor_variable

            own = [_own_shape_or_none(v) for v in self.inner_inputs]
            shapes = infer_shapes(self.inner_inputs, self.inner_outputs, own)
            empty = as_tensor_variable(np.zeros(0, dtype="int64"))
            outs = [stack([as_shape_var(s) for s in sh]) if sh else empty for sh in shapes]
            # Sizes only: no step value computed to read its shape (the n == 0 branch
            # of the numba loop is compiled code, four elementwise loops in the LSTM's).
            outs = without_size_reads(self.inner_inputs, outs, own)
            self._shape_program = PerformProgram(*simplified(self.inner_inputs, outs))
        return self._shape_program

    def _zero_step_args(self, inputs):
        info = self.info
        args = [None] * info.n_inner_inputs
        for k, (i, j) in enumerate(zip(info.inner_in_seqs, info.outer_in_seqs)):
            seq = np.asarray(inputs[j])
            e = self.plan.seq_product(k)
            row = seq.shape[1:] if e is None else \
                seq.shape[1:2] + np.shape(inputs[info.outer_in_non_seqs[e[0]]])[1:]
            args[i] = np.zeros(row, seq.dtype)
        for b in info.buffers:
            buf = np.asarray(inputs[b.outer_input])
            for i, off in zip(b.inner_inputs, b.in_offsets):
                args[i] = buf[off] if off < len(buf) else np.zeros(buf.shape[1:], buf.dtype)
        for a, c in ((info.inner_in_shared, info.outer_in_shared),
                     (info.inner_in_non_seqs, info.outer_in_non_seqs)):
            for i, j in zip(a, c):
                args[i] = inputs[j]
        return args

    # -- derivatives (bptt/scan/grad.py, bptt/scan/rop.py) ----------------------------------
    def L_op(self, inputs, outputs, output_grads):
        self._require_whole_buffers("L_op")
        return scan_grad(self, inputs, outputs, output_grads)

    def R_op(self, inputs, eval_points):
        self._require_whole_buffers("R_op")
        return scan_rop(self, inputs, eval_points)

    def _require_whole_buffers(self, what):
        # Derivatives read every stored row; save-mem runs at compile time, after them.
        if self.plan.buffer_rows:
            raise NotImplementedError(f"{self.info.label}: {what} of a scan whose buffers "
                                      f"save-mem shortened (buffer_rows={self.plan.buffer_rows})")
        if self.plan.nit_sot_sums:
            raise NotImplementedError(f"{self.info.label}: {what} of a scan whose nit_sots "
                                      f"are summed (nit_sot_sums={self.plan.nit_sot_sums})")
        if self.plan.seq_products:
            raise NotImplementedError(f"{self.info.label}: {what} of a scan that computes "
                                      f"sequence products in chunks "
                                      f"(seq_products={self.plan.seq_products})")

    # -- symbolic properties --------------------------------------------------------------
    def inner_connection_pattern(self):
        """``[i][o]``: whether inner output o depends on inner input i."""
        pattern = []
        deps = [set(ancestors([o], blockers=self.inner_inputs)) for o in self.inner_outputs]
        for v in self.inner_inputs:
            pattern.append([v in d for d in deps])
        return pattern

    def connection_pattern(self, node):
        """``[i][j]``: whether outer output j depends differentiably on outer input i.

        Follows the recurrence: a state's inner outputs feed its inner inputs
        at the next step. n_steps, nit_sot lengths and the step count are
        not differentiable connections.
        """
        info = self.info
        inner = self.inner_connection_pattern()
        maps = info.var_mappings
        pattern = [[False] * info.n_outer_outputs for _ in range(info.n_outer_inputs)]
        for i in range(info.n_outer_inputs):
            if i == 0 or i in info.outer_in_nit_sot:
                continue
            reached_in = set(maps["inner_inp_from_outer_inp"][i])
            reached_out = set()
            frontier = list(reached_in)
            while frontier:
                r = frontier.pop()
                for o, conn in enumerate(inner[r]):
                    if conn and o not in reached_out:
                        reached_out.add(o)
                        for nxt in maps["inner_inp_from_inner_out"][o]:
                            if nxt not in reached_in:
                                reached_in.add(nxt)
                                frontier.append(nxt)
            for o in reached_out:
                j = maps["outer_out_from_inner_out"][o]
                if j >= 0:
                    pattern[i][j] = True
            own = maps["outer_out_from_outer_inp"][i]
            if own >= 0 and i not in info.outer_in_nit_sot:
                pattern[i][own] = True
        return pattern

    def work_bound(self, node):
        """Elements the loop computes at most (constant folding's bound), or None.

        Known when ``n_steps`` is a constant (a while loop runs at most that
        many steps) and every node of the step has static output shapes.
        """
        from ..graph.basic import Constant
        from ..graph.traversal import toposort
        from ..tensor.rewriting.constant_folding import work_bound

        if not isinstance(node.inputs[0], Constant):
            return None
        per_step = 1   # a step that computes nothing still costs a step
        for inner in toposort(self.inner_outputs):
            w = work_bound(inner)
            if w is None:
                return None
            per_step += w
        return abs(int(node.inputs[0].data)) * per_step

    def infer_shape(self, fgraph, node, input_shapes):
        """Output shapes from input shapes (see the layout in `ScanInfo`).

        Row shapes of nit_sot and shared outputs come from the inner graph
        when they are expressible in outer terms (non-sequences, and the outer
        shapes of inner inputs whose sizes they read); otherwise from the output.
        """
        from ..graph.replace import clone_replace
        from ..tensor.math import minimum
        from ..tensor.shape import shape_i

        info, plan, ins = self.info, self.plan, node.inputs
        n = node.inputs[0]
        per_inner, inner_shapes = self._outer_inner_shapes(input_shapes)
        allowed = {self.inner_inputs[i]: ins[j] for i, j in
                   zip(info.inner_in_non_seqs, info.outer_in_non_seqs)}
        inner_set = set(self.inner_inputs)
        sizes = {v: sh for v, sh in zip(self.inner_inputs, per_inner) if sh is not None}
        out = []
        for s, b in enumerate(info.buffers):
            sh = tuple(input_shapes[b.outer_input])
            if b.kind != "mit_mot":
                rows = shape_i(node.outputs[b.outer_output], 0) if info.as_while else n + b.extent
                if plan.buffer_ring(s) is not None and not info.as_while:
                    rows = minimum(rows, plan.buffer_ring(s))
                sh = (rows,) + sh[1:]
            out.append(sh)
        for k, o in enumerate(info.inner_out_nit_sot):
            j = info.outer_out_nit_sot[k]
            if plan.nit_sot_row_sum(k):
                out.append((_outer_expr(inner_shapes[o][-1], allowed, inner_set,
                                        clone_replace, shape_i(node.outputs[j], 0)),))
                continue
            if plan.nit_sot_sum(k) is not None:
                seq_sh = input_shapes[info.outer_in_seqs[plan.nit_sot_sum(k)[0]]]
                out.append((seq_sh[-1], _outer_expr(inner_shapes[o][-1], allowed, inner_set,
                                                    clone_replace, shape_i(node.outputs[j], 1))))
                continue
            rows = shape_i(node.outputs[j], 0) if info.as_while else \
                minimum(n, ins[info.outer_in_nit_sot[k]])
            row = tuple(_outer_expr(s, allowed, inner_set, clone_replace,
                                    shape_i(node.outputs[j], d + 1), sizes)
                        for d, s in enumerate(inner_shapes[o]))
            out.append((rows,) + row)
        for k, i in enumerate(info.outer_in_shared):
            j = info.outer_out_shared[k]
            sh = inner_shapes[info.inner_out_shared[k]]
            own = input_shapes[i]
            if sh is None or own is None:
                out.append(None)
            elif _same_entries(sh, per_inner[info.inner_in_shared[k]]):
                out.append(tuple(own))
            else:
                out.append(tuple(shape_i(node.outputs[j], d) for d in range(len(own))))
        if info.as_while:
            out.append(())
        return out

    def _outer_inner_shapes(self, input_shapes):
        """Inner output shapes with inner input shapes given by the outer input shapes."""
        info = self.info
        per_inner = [None] * info.n_inner_inputs
        for k, (i, j) in enumerate(zip(info.inner_in_seqs, info.outer_in_seqs)):
            per_inner[i] = tuple(input_shapes[j])[1:]
            e = self.plan.seq_product(k)
            if e is not None:   # rows of X[t] @ W: (B, N)
                per_inner[i] = per_inner[i][:1] + tuple(input_shapes[info.outer_in_non_seqs[e[0]]])[1:]
        for b in info.buffers:
            for i in b.inner_inputs:
                per_inner[i] = tuple(input_shapes[b.outer_input])[1:]
        for a, c in ((info.inner_in_shared, info.outer_in_shared),
                     (info.inner_in_non_seqs, info.outer_in_non_seqs)):
            for i, j in zip(a, c):
                per_inner[i] = None if input_shapes[j] is None else tuple(input_shapes[j])
        return per_inner, infer_shapes(self.inner_inputs, self.inner_outputs, per_inner)


# -- helpers -------------------------------------------------------------------------
def _make_profile(profile, info):
    if isinstance(profile, ScanProfile) or not profile:
        return profile or None
    return ScanProfile(profile if isinstance(profile, str) else (info.name or "scan"))


def _int_scalar(v, what):
    from ..tensor.basic import cast

    if getattr(v.type, "ndim", None) != 0 or v.type.dtype not in (
            "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"):
        raise TypeError(f"{what} must be an integer scalar, got {v.describe()}")
    return v if v.type.dtype == "int64" else cast(v, "int64")


def _fits(want, got):
    """Whether values of type `got` can stand where type `want` is expected."""
    if want == got:
        return True
    if not (hasattr(want, "dtype") and hasattr(got, "dtype")):
        return False
    return want.dtype == got.dtype and want.ndim == got.ndim and all(
        a is None or b is None or a == b for a, b in zip(want.shape, got.shape))


def _require_fit(want, got, what):
    if not _fits(want, got):
        raise TypeError(f"{what}: expected {want}, got {got}")


def _require_row_fit(outer, inner_type, what):
    t = outer.type
    if not hasattr(t, "dtype") or t.ndim != inner_type.ndim + 1:
        raise TypeError(f"{what}: expected a {inner_type.ndim + 1}-d tensor of {inner_type.dtype} "
                        f"(rows of {inner_type}), got {outer.describe()}")
    row = t.clone(shape=t.shape[1:])
    if not _fits(inner_type, row):
        raise TypeError(f"{what}: its rows ({row}) do not fit the inner input type {inner_type}")


def _merge_shapes(a, b):
    return tuple(x if x is not None else y for x, y in zip(a, b))


def _own_shape_or_none(v):
    ndim = getattr(v.type, "ndim", None)
    if ndim is None:
        return None
    from ..tensor.shape import shape_tuple

    return shape_tuple(v)


def _outer_expr(s, allowed, inner_set, clone_replace, fallback, sizes=None):
    """`s` rewritten in outer variables if it needs only outer shapes and non-sequences.

    `sizes` maps inner inputs to their shapes in outer terms: a size read from
    an inner input (``Shape_i(k)(x_t)``, a sequence row's width) is that entry.
    """
    if isinstance(s, (int, np.integer)):
        return int(s)
    subs = _outer_sizes(s, sizes or {})
    if subs:
        s = clone_replace(s, subs)
    used = [v for v in graph_inputs([s]) if v in inner_set]
    if all(v in allowed for v in used):
        return clone_replace(s, {v: allowed[v] for v in used}) if used else s
    return fallback


def _outer_sizes(s, sizes):
    """{``Shape_i(k)(x)`` in `s`'s graph: x's k-th size from `sizes`} (variables only)."""
    from ..tensor.shape import Shape_i
    from ..tensor.type import TensorConstant, TensorType

    subs = {}
    for v in ancestors([s]):
        node = v.owner
        if node is None or not isinstance(node.op, Shape_i):
            continue
        shape = sizes.get(node.inputs[0])
        size = None if shape is None or node.op.i >= len(shape) else shape[node.op.i]
        if isinstance(size, (int, np.integer)):
            size = TensorConstant(TensorType("int64", ()), np.asarray(size, dtype="int64"))
        if isinstance(size, Variable) and size.type == v.type:
            subs[v] = size
    return subs


def _same_entries(a, b):
    return b is not None and len(a) == len(b) and all(
        x is y or (isinstance(x, int) and isinstance(y, int) and x == y) for x, y in zip(a, b))
