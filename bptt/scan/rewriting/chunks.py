"""Weight-gradient sums accumulated in chunks of steps: `scan_chunk_accumulators`.

The backward scan of ``h_t = tanh(h_{t-1} @ W + x_t @ U + b)`` carries the
weight gradients as sums over its steps::

    dW_t = dW_{t-1} + dot(h_{t-1}.T, dpre_t)      h_{t-1}, x_t: sequence rows
    dU_t = dU_{t-1} + dot(x_t.T, dpre_t)          dpre_t: computed by the step

One (B, In) x (B, H) product per step runs BLAS at a fraction of its rate
(B = 64 rows); one product over all the stacked steps after the loop runs at
its full rate but needs every ``dpre_t``: a T-long array beside the trace. A
chunk of C steps does both: the step's ``dpre_t`` is copied into a C-row
staging buffer and after every C steps (and after the last, partial chunk)
one gemm with beta = 1 adds ``X_chunk.T @ DPRE_chunk`` ((In, C*B) x (C*B, H))
into the accumulator. Chunks of about a thousand rows come close to the
one-product rate, and a whole call is as fast with 256 rows, the default, for
less staging memory (docs/scan-internals.md has the measurement).

The rewrite turns such a sit_sot into a *summed nit_sot*
(``StoragePlan.nit_sot_sums``): the step returns ``dpre_t`` as a nit_sot whose
outer output is ``sum over executed steps of seq_j[t].T @ dpre_t`` instead of
its stacked rows, and the accumulator's last row becomes its initial row plus
that sum::

    sit_sot acc: acc_t = acc_{t-1} + dot(s_t.T, q_t)       outer: acc[-1]
      -->
    nit_sot q (summed with sequence s, chunks of config.chunk_rows rows)
                                                           outer: acc_init[0] + sum

When ``acc_init`` is provably zeros (`filled_with`: the gradient's
``shape_padleft(zeros_like(W))``, an ``Alloc`` of 0 seen through views), the
outer value is the sum itself: no zeros array and no elementwise add after the
loop. The add also broadcast, so the sum is checked at run time to have the
accumulator row's shape (a `Check` raising ValueError that names the scan, the
accumulator and both shapes), except in the dimensions `shape_keys` proves equal
(a size the sequence, the step value and the accumulator share as one variable needs
no check; one known only at run time, such as an initial state's columns against a
weight's rows, is compared).

A sum of such terms gives one summed nit_sot per term. The accumulator must
be read only as ``acc[-1]`` outside and only by its own update inside; `s`
must be a sequence row (the lowering reads its chunk ``seq[c0:c1]`` in
place), `q` a per-step 2-d value of the same dtype. Loops with ``until`` are
left alone, as by every push-out. A truncated backward scan runs fewer steps
than its sequences hold: the sum covers the steps that ran; with no step the
sum is zeros and the accumulator keeps its initial value.

``Scan.perform`` adds one product per step (the reference); the numba
lowering (``bptt/link/numba/dispatch/scan/sums.py``) chunks. The number of steps
per chunk is chosen at run time from the rows of ``q_t``:
``C = max(1, ceil(R / B))`` with ``R = bptt.config.chunk_rows`` (256, read when
rewriting, so part of the compiled code). Tests lower it so small loops run several
chunks and a partial last one.

The bias gradient's accumulator ``acc + SumTo(q_t, (H,))`` (or ``+ Sum(q_t,
axis=0)``), a sum over the rows of a per-step (B, H) value, becomes a nit_sot
*summed over rows* (sequence entry ``ROW_SUM``): each chunk adds the column
sums of its staged rows, and the staging buffer is that of the products summed from
the same `q_t` (checked at run time, as between two such products). Outside, the SumTo
is applied to the (H,) total (SumTo is linear; a no-op unless the bias
broadcast over H).

`scan_pushout_accumulators` (``pushout.py``), which runs earlier, leaves
these accumulators in the loop (and other per-step sums, which would otherwise
need the T-long ``dpre``).
"""
from __future__ import annotations

from ...config import config
from ...graph.rewriting import InToOut, can_replace, node_rewriter
from ...tensor.assertion import check
from ...tensor.elemwise import Elemwise
from ...tensor.math import Dot, Sum, and_, eq
from ...tensor.rewriting.canonicalize import filled_with
from ...tensor.rewriting.sizes import shape_keys
from ...tensor.shape import DimShuffle, SumTo, shape_i, sum_to
from ...tensor.subtensor import getitem
from ..args import ScanArgs
from ..plan import ROW_SUM
from ..op import Scan
from .basic import rebuild


def chunk_terms(f, seqs, inv):
    """[(sequence index, q)] if `f` is ``dot(s.T, q)`` or a sum of such terms, else None.

    `seqs` maps inner sequence inputs to their index; `inv` holds the step's invariants.
    """
    n = f.owner
    if n is None:
        return None
    if isinstance(n.op, Elemwise) and n.op.scalar_op.name == "add" and \
            all(i.type == f.type for i in n.inputs):
        terms = [chunk_terms(i, seqs, inv) for i in n.inputs]
        return None if any(t is None for t in terms) else [t for ts in terms for t in ts]
    if not isinstance(n.op, Dot) or f.ndim != 2:
        return None
    p, q = n.inputs
    s = p.owner.inputs[0] if p.owner is not None and isinstance(p.owner.op, DimShuffle) \
        and p.owner.op.new_order == (1, 0) else None
    if s not in seqs or q in inv or q.ndim != 2 or not (s.dtype == q.dtype == f.dtype):
        return None
    return [(seqs[s], q)]


def row_sum_term(f, inv):
    """``[(ROW_SUM, q)]`` if `f` is ``SumTo(q, (H,))``, ``SumTo(q, (1, H))`` with the 1
    dropped (a broadcast bias row) or ``Sum(q, axis=0)`` of a per-step 2-d `q` of `f`'s
    dtype (a sum over the rows), else None."""
    n = f.owner
    if n is not None and isinstance(n.op, DimShuffle) and n.op.new_order == (1,) and \
            n.inputs[0].owner is not None and isinstance(n.inputs[0].owner.op, SumTo):
        n = n.inputs[0].owner     # SumTo(q, (1, H)) sums the rows (its size-1 target) too
    if n is None or f.ndim != 1 or n.inputs[0] in inv:
        return None
    q = n.inputs[0]
    if q.ndim != 2 or q.dtype != f.dtype:
        return None
    if isinstance(n.op, SumTo) or (isinstance(n.op, Sum) and n.op.axis == (0,)):
        return [(ROW_SUM, q)]
    return None


def is_step_sum(f, inv):
    """Whether `f` is a Sum/SumTo of a per-step value (summed in the loop: no stacked rows)."""
    n = f.owner
    return n is not None and isinstance(n.op, (Sum, SumTo)) and n.inputs[0] not in inv


def _accumulators(fgraph, args, op):
    """[(sit_sot index, readers of acc[-1], terms)] for the accumulators that chunk."""
    from .pushout import _invariants, _last_row_readers, _readers

    inv, _ = _invariants(op, args)
    readers = _readers(op)
    seqs = {v: k for k, v in enumerate(args.inner_in_seqs)}
    out = []
    for j, (a_in, a_out) in enumerate(zip(args.inner_in_sit_sot, args.inner_out_sit_sot)):
        last = _last_row_readers(fgraph, args.outer_out_sit_sot[j])
        add = a_out.owner
        if not last or add is None or readers.get(a_in, []) != [add] or \
                readers.get(a_out) != [None]:
            continue
        if not (isinstance(add.op, Elemwise) and add.op.scalar_op.name == "add"
                and len(add.inputs) == 2 and a_in in add.inputs):
            continue
        f = add.inputs[1 - add.inputs.index(a_in)]
        terms = None if f is a_in or f.type != a_out.type else \
            chunk_terms(f, seqs, inv) or row_sum_term(f, inv)
        if terms:
            out.append((j, last, terms))
    return out


@node_rewriter([Scan])
def scan_chunk_accumulators(fgraph, node):
    """Accumulators ``acc + dot(s_t.T, q_t)`` (or ``+ SumTo(q_t, (H,))``) become nit_sots
    summed in chunks of steps."""
    op = node.op
    if op.info.as_while or not op.info.n_sit_sot:
        return None
    args = ScanArgs.from_node(node)
    done = _accumulators(fgraph, args, op)
    if not done:
        return None
    inits = {j: args.outer_in_sit_sot[j] for j, _, _ in done}
    made, sums = {}, {}   # (seq, q) -> nit_sot index; sit_sot -> its nit_sots
    for j, _, terms in done:
        for seq, q in terms:
            if (seq, q) not in made:
                args.add_nit_sot(q, args.n_steps, summed=(seq, config.chunk_rows))
                made[(seq, q)] = len(args.outer_in_nit_sot) - 1
            sums.setdefault(j, []).append(made[(seq, q)])
    labels = {j: args.labels.get(args.inner_out_sit_sot[j], f"sit_sot {j}") for j in inits}
    for j in sorted(inits, reverse=True):
        args.remove("sit_sot", j)
    repl, new = rebuild(node, args)
    for j, last, _ in done:
        totals = []
        for k in sums[j]:
            total = new.outputs[new.op.info.outer_out_nit_sot[k]]
            if new.op.plan.nit_sot_row_sum(k):   # the step's SumTo, on the total
                total = sum_to(total, (shape_i(inits[j], 1),))
            totals.append(total)
        value = accumulated(fgraph, inits[j], totals, f"{op.info.label}: {labels[j]}")
        if not all(can_replace(v, value) for v in last):
            return None
        repl.update({v: value for v in last})
    return repl


def accumulated(fgraph, init, totals, what):
    """``init[0] + sum(totals)``, the accumulator's last row; when `init` is zeros (the
    backward scan's initial gradient), the sum itself, with a run-time check that it has
    the accumulator row's shape where that is not provably so (`what` names the sum)."""
    total = totals[0]
    for t in totals[1:]:
        total = total + t
    if filled_with(init) != 0:
        return getitem(init, 0) + total
    have = [shape_i(total, d) for d in range(total.ndim)]
    want = [shape_i(init, d + 1) for d in range(total.ndim)]
    unproven = [d for d, (a, b) in enumerate(zip(shape_keys(fgraph, total),
                                                shape_keys(fgraph, init)[1:])) if a != b]
    if not unproven:
        return total
    ok = eq(have[unproven[0]], want[unproven[0]])
    for d in unproven[1:]:
        ok = and_(ok, eq(have[d], want[d]))
    dims = ", ".join(["{}"] * total.ndim) + ("," if total.ndim == 1 else "")
    msg = (what.replace("{", "{{").replace("}", "}}")
           + f" sums to shape ({dims}) over the steps, but its rows have shape ({dims})")
    return check(total, ok, msg, *have, *want)


scan_chunk_accumulators_pass = InToOut([scan_chunk_accumulators], name="scan_chunk_accumulators")
