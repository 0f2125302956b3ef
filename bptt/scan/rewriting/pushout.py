"""Push work out of Scan loops: loop invariants, per-step products, summed accumulators,
outputs read only at their last step.

Four node rewriters on `Scan`, each building the new node with `ScanArgs`:

`scan_pushout_non_seqs` (loop-invariant code motion)
    A step node whose inputs are non-sequences, constants or other such nodes
    computes the same value at every step. The outermost of them (those read
    by per-step work or returned) are computed once before the loop and
    passed in as new non-sequences, e.g. ``W.T`` in a backward step: a
    transposed *view* is passed (numba's ``np.dot`` takes a transposed
    contiguous array without a copy). Stateful nodes (random draws, in-place
    writes) stay inside. Cost when ``n_steps`` is 0: the hoisted value is
    computed once where the loop would compute it zero times; that is at most
    one step's work, which we accept (every hoisted node runs at least once
    per step otherwise, so for ``n_steps >= 1`` hoisting never costs more).

`scan_pushout_seqs` (sequence push-out)
    A step node computed only from sequence rows and invariants (Elemwise,
    Dot with the sequence row on the left, or a 1-d row on the right,
    DimShuffle) is computed for every step at once before the loop on the
    first ``n_steps`` rows of the sequences, and the loop reads the result as
    a new sequence: ``dot(x_t, U)`` for a (T, B, In) sequence becomes one
    (T*B, In) x (In, H) product reshaped to (T, B, H). Only the outermost
    such nodes become sequences, and only those that contain a product:
    elementwise work alone gains nothing outside (the loop does it row by row
    at the same speed) and would cost a T-long temporary. Loops with
    ``until`` are left alone: the executed steps are not known before the
    loop, and computing all ``n_steps`` rows could be far more work.

`scan_pushout_accumulators`
    A sit_sot ``acc_t = acc_{t-1} + f_t`` that nothing else in the step
    reads, whose outer buffer is only read at its last row, and whose
    increment is linear in per-step values -- ``dot(P_t, Q_t)`` of two
    per-step matrices (``P_t = x_t.T`` for the gradient of a weight),
    ``SumTo``/``Sum`` of a per-step value (the gradient of a bias), or a sum
    of such terms -- is removed from the loop. Its per-step values become
    nit_sot outputs (or are read from the sequence they are rows of) and the
    sum over steps is computed after the loop: ``acc[-1] = acc_init[0] +
    X_flat.T @ DA_flat`` with ``X_flat`` the (E*B, In) stack of the rows of
    the E executed steps. Sequences are sliced to the loop's ``n_steps``, so
    a truncated backward scan (fewer steps than the sequence) sums the steps
    it ran. Loops with ``until`` are left alone. Left in the loop: increments
    ``dot(s_t.T, q_t)`` with ``s_t`` a sequence row (`scan_chunk_accumulators`
    sums them in chunks of steps, ``chunks.py``: no T-long ``q``) and per-step
    ``Sum``/``SumTo`` (a bias gradient: as cheap in the loop, and stacking its
    operand would keep a T-long array), unless `scan_chunk_accumulators` is excluded.

`scan_pushout_last_step` (outputs read only at their last step)
    A nit_sot whose outer readers are ``y[-1]`` (and row-shape queries
    ``y.shape[d]``, d >= 1, as the gradient's zeros make) is removed from the
    loop and computed once after it from the last step's values: the step's
    graph of ``y_t`` is cloned outside with each state the step *writes*
    read as the last row of its outer buffer (``hs[-1]``), each state tap k
    it *reads* as row ``k - 1`` of its buffer, each sequence row as row
    ``E - 1`` of its outer sequence and each non-sequence as itself, where
    E is the number of executed steps (``n_steps``, or the step count
    output of an ``until`` loop). Sequences are already directed outside
    the op (go_backwards, negative n_steps), so row E - 1 is the row the
    last step read. With no step (E = 0) ``y`` had no rows and ``y[-1]``
    raised IndexError; the pushed-out value raises ValueError (a `Check` on
    E >= 1, before any row is read). Left alone: outputs that read a
    mit_mot or shared state (their buffers hold values written after the
    last step's read), ring buffers, stateful or `Check` nodes (a per-step
    check would then run once), and nit_sots whose length input is not
    ``n_steps`` or a constant >= 1.
"""
from __future__ import annotations

from ...graph.basic import Constant
from ...graph.replace import clone_replace
from ...graph.rewriting import InToOut, can_replace, node_rewriter
from ...graph.traversal import toposort
from ...tensor.assertion import Check, check
from ...tensor.elemwise import Elemwise
from ...tensor.math import Dot, Sum, dot, ge, minimum
from ...tensor.rewriting.constant_folding import is_stateful
from ...tensor.shape import DimShuffle, Shape_i, SumTo, dimshuffle, reshape, shape_i
from ...tensor.rewriting.sizes import dim_key, size_facts, value_key
from ...tensor.subtensor import Subtensor, getitem
from ..args import ScanArgs
from ..op import Scan
from ..step_errors import mark_moved_out
from .basic import rebuild
from .chunks import chunk_terms, is_step_sum


def _inner_nodes(op):
    return toposort(op.inner_outputs, blockers=op.inner_inputs)


def _invariants(op, args):
    """Inner variables with the same value at every step, and the nodes computing them."""
    inv = set(args.inner_in_non_seqs)
    nodes = []
    for n in _inner_nodes(op):
        if is_stateful(n) or isinstance(n.op, Scan):
            continue
        if all(isinstance(i, Constant) or i in inv for i in n.inputs):
            inv.update(n.outputs)
            nodes.append(n)
    return inv, nodes


def _readers(op):
    """inner variable -> the inner nodes reading it (inner outputs count as a reader None)."""
    out = {}
    for n in _inner_nodes(op):
        for i in n.inputs:
            out.setdefault(i, []).append(n)
    for v in op.inner_outputs:
        out.setdefault(v, []).append(None)
    return out


def _frontier(nodes, inside, readers):
    """Outputs of `nodes` read by a node outside `inside` (or returned by the step)."""
    out = []
    for n in nodes:
        for v in n.outputs:
            if any(r is None or r not in inside for r in readers.get(v, ())) and v not in out:
                out.append(v)
    return out


# -- loop invariants --------------------------------------------------------------------------
@node_rewriter([Scan])
def scan_pushout_non_seqs(fgraph, node):
    """Compute step nodes that depend only on non-sequences once, before the loop."""
    op = node.op
    args = ScanArgs.from_node(node)
    inv, nodes = _invariants(op, args)
    ns = set(args.inner_in_non_seqs)
    hoist = [n for n in nodes if any(i in ns or i.owner in nodes for i in n.inputs)]
    moved = _frontier(hoist, set(hoist), _readers(op))
    if not moved:
        return None
    outer = clone_replace(moved, dict(zip(args.inner_in_non_seqs, args.outer_in_non_seqs)))
    mapping = {}
    for v, o in zip(moved, outer):
        mapping[v] = args.add_non_seq(o, inner_type=v.type)
    args.replace_inner(mapping)
    return rebuild(node, args)[0]


# -- sequence push-out ------------------------------------------------------------------------
def _stack_elemwise(n, stacked, outer_inv):
    """The elementwise node over stacked rows: every operand gets the time axis first and
    its row axes aligned on the right of the output's row, as the step broadcast them.

        step:     u_t ()  *  w (H,)        ->  (H,)
        stacked:  u (T, 1)  *  w (1, H)    ->  (T, H)    (not u (T,) against w (1, H))
    """
    rank = n.outputs[0].ndim
    ins = []
    for i in n.inputs:
        if i in stacked:
            x = stacked[i]
            ins.append(dimshuffle(x, (0,) + ("x",) * (rank - i.ndim)
                                  + tuple(range(1, i.ndim + 1))))
        else:
            x = outer_inv(i)
            ins.append(dimshuffle(x, ("x",) * (rank + 1 - x.ndim) + tuple(range(x.ndim))))
    return n.op(*ins)


def _reversed_source(v):
    """`x` when `v` is ``x[::-1]``, else None."""
    node = v.owner
    if node is not None and isinstance(node.op, Subtensor) and len(node.inputs) == 1 \
            and tuple(node.op.idx_list) == ((None, None, -1),):
        return node.inputs[0]
    return None


def _row_wise(f, stack):
    """``f(stack)`` for an `f` that maps each row on its own. A product of reversed
    rows is the reversed product of the rows: computed that way, the backward
    scan's ``x[::-1] @ W`` is the forward scan's ``x @ W`` (merged), not a second
    product."""
    source = _reversed_source(stack)
    if source is None:
        return f(stack)
    return getitem(f(source), slice(None, None, -1))


def _stack_dot(n, stacked, outer_inv):
    a, b = n.inputs
    if a in stacked and b not in stacked:
        w = outer_inv(b)
        return _row_wise(lambda rows: dot(rows, w), stacked[a])
    if b in stacked and a not in stacked and b.ndim == 1:
        w = outer_inv(a)
        w = dimshuffle(w, (1, 0)) if w.ndim == 2 else w
        return _row_wise(lambda rows: dot(rows, w), stacked[b])
    return None


def _first_rows(fgraph, seq, n_steps):
    """The first `n_steps` rows of `seq`: `seq` itself when its length is provably
    `n_steps` (so the forward and backward scans stack the same array)."""
    facts = size_facts(fgraph)
    if facts.find(value_key(n_steps, facts)) == dim_key(fgraph, seq, 0):
        return seq
    return getitem(seq, slice(None, n_steps))


def _stack_dimshuffle(n, stacked, outer_inv):
    order = (0,) + tuple(o if o == "x" else o + 1 for o in n.op.new_order)
    return dimshuffle(stacked[n.inputs[0]], order)


_STACKERS = {Elemwise: _stack_elemwise, Dot: _stack_dot, DimShuffle: _stack_dimshuffle}


def _outer_of_invariant(args):
    ns = dict(zip(args.inner_in_non_seqs, args.outer_in_non_seqs))
    memo = {}

    def outer(v):
        if isinstance(v, Constant) or v in ns:
            return ns.get(v, v)
        if v not in memo:
            memo[v] = clone_replace(v, ns)
        return memo[v]

    return outer


@node_rewriter([Scan])
def scan_pushout_seqs(fgraph, node):
    """Compute step nodes that read only sequence rows and invariants for all steps at once."""
    op = node.op
    if op.info.as_while:
        return None
    args = ScanArgs.from_node(node)
    inv, _ = _invariants(op, args)
    n_steps = args.n_steps
    stacked = {v: _first_rows(fgraph, o, n_steps)
               for v, o in zip(args.inner_in_seqs, args.outer_in_seqs)}
    origin = {v: args.seq_origins[k] for k, v in enumerate(args.inner_in_seqs)}
    outer_inv = _outer_of_invariant(args)
    moved_nodes, computes = [], set()
    for n in _inner_nodes(op):
        stacker = _STACKERS.get(type(n.op))
        if stacker is None or len(n.outputs) != 1 or is_stateful(n):
            continue
        if not any(i in stacked for i in n.inputs) or \
                not all(i in stacked or i in inv for i in n.inputs):
            continue
        out = stacker(n, stacked, outer_inv)
        if out is None:
            continue
        stacked[n.outputs[0]] = out
        origin[n.outputs[0]] = next(origin[i] for i in n.inputs if i in origin)
        moved_nodes.append(n)
        if isinstance(n.op, Dot) or any(i.owner in computes for i in n.inputs):
            computes.add(n)
    moved = [v for v in _frontier(moved_nodes, set(moved_nodes), _readers(op))
             if v.owner in computes]
    if not moved:
        return None
    # A derived sequence names the user's sequence in messages, but its length is
    # n_steps, not the user's (offset None: not checked against taps).
    mapping = {v: args.add_seq(stacked[v], inner_type=v.type, origin=None if origin[v] is None
                               else origin[v]._replace(offset=None)) for v in moved}
    mark_moved_out(fgraph, node, {v: stacked[v] for v in moved})   # errors name the step's value
    args.replace_inner(mapping)
    return rebuild(node, args)[0]


# -- summed accumulators ----------------------------------------------------------------------
class _Stacks:
    """Per-step inner values and the (placeholder) outer arrays holding them for every step."""

    def __init__(self, args):
        self.args = args
        self.seqs = {v: getitem(o, slice(None, args.n_steps))
                     for v, o in zip(args.inner_in_seqs, args.outer_in_seqs)}
        self.nits = {v: k for k, v in enumerate(args.inner_out_nit_sot)}
        self.new = {}    # placeholder -> index of the new nit_sot

    def __call__(self, v):
        if v in self.seqs:
            return self.seqs[v]
        k = self.nits.get(v)
        if k is None:
            self.args.add_nit_sot(v, self.args.n_steps)
            k = self.nits[v] = len(self.args.inner_out_nit_sot) - 1
        out = self.args.outer_out_nit_sot[k]
        if out is None:
            out = v.type.clone(shape=(None,) + v.type.shape)()
            self.new[out] = k
            self.args.outer_out_nit_sot[k] = out
        return out


def _flat_rows(stack):
    """(E, B, n) -> (E*B, n)."""
    return reshape(stack, [shape_i(stack, 0) * shape_i(stack, 1), shape_i(stack, 2)], ndim=2)


def _summed(f, inv, outer_inv, stacks):
    """An outer expression for the sum of `f` over the executed steps, or None."""
    if f in inv or f.owner is None:
        return None
    n, op = f.owner, f.owner.op
    if isinstance(op, Dot) and all(i.ndim == 2 for i in n.inputs):
        p, q = n.inputs
        if p in inv or q in inv:
            return None
        if isinstance(getattr(p.owner, "op", None), DimShuffle) and p.owner.op.new_order == (1, 0):
            pt = dimshuffle(_flat_rows(stacks(p.owner.inputs[0])), (1, 0))
        else:
            ps = stacks(p)
            pt = reshape(dimshuffle(ps, (1, 0, 2)),
                         [shape_i(ps, 1), shape_i(ps, 0) * shape_i(ps, 2)], ndim=2)
        return dot(pt, _flat_rows(stacks(q)))
    if isinstance(op, SumTo) and n.inputs[0] not in inv and \
            all(d in inv or isinstance(d, Constant) for d in n.inputs[1:]):
        # SumTo sums leading dimensions away: summing the stacked steps is one SumTo
        return op(stacks(n.inputs[0]), *(outer_inv(d) for d in n.inputs[1:]))
    if isinstance(op, Sum) and n.inputs[0] not in inv:
        return Sum((0,) + tuple(a + 1 for a in op.axis))(stacks(n.inputs[0]))
    if isinstance(op, Elemwise) and op.scalar_op.name == "add" and \
            all(i.type == f.type for i in n.inputs):
        terms = [_summed(i, inv, outer_inv, stacks) for i in n.inputs]
        if any(t is None for t in terms):
            return None
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total
    return None


def _last_row_readers(fgraph, var):
    """The outputs of the ``var[-1]`` nodes reading `var`, or None if anything else reads it."""
    outs = []
    for client, _ in fgraph.clients.get(var, ()):
        if client == "output" or not isinstance(client.op, Subtensor) or \
                client.op.idx_list != (-1,):
            return None
        outs.append(client.outputs[0])
    return outs


def _chunking(fgraph):
    """Whether `scan_chunk_accumulators` runs on `fgraph` (else every accumulator is stacked)."""
    return "scan_chunk_accumulators" not in fgraph.excluded_passes


@node_rewriter([Scan])
def scan_pushout_accumulators(fgraph, node):
    """Sum linear sit_sot increments over the stacked steps after the loop."""
    op = node.op
    if op.info.as_while or not op.info.n_sit_sot:
        return None
    args = ScanArgs.from_node(node)
    inv, _ = _invariants(op, args)
    outer_inv = _outer_of_invariant(args)
    readers = _readers(op)
    stacks = _Stacks(args)
    seqs = {v: k for k, v in enumerate(args.inner_in_seqs)}
    chunking = _chunking(fgraph)
    done = []    # (sit_sot index, readers of acc[-1], outer sum placeholder expression)
    for j, (a_in, a_out) in enumerate(zip(args.inner_in_sit_sot, args.inner_out_sit_sot)):
        last = _last_row_readers(fgraph, args.outer_out_sit_sot[j])
        if not last or a_out.owner is None or readers.get(a_in, []) != [a_out.owner]:
            continue
        if not (isinstance(a_out.owner.op, Elemwise) and a_out.owner.op.scalar_op.name == "add"
                and len(a_out.owner.inputs) == 2 and a_in in a_out.owner.inputs):
            continue
        if readers.get(a_out) != [None]:
            continue
        f = a_out.owner.inputs[1 - a_out.owner.inputs.index(a_in)]
        if f is a_in or f.dtype != a_out.dtype or f.ndim != a_out.ndim:
            continue
        if chunking and (chunk_terms(f, seqs, inv) or is_step_sum(f, inv)):
            continue    # summed in chunks by scan_chunk_accumulators, or in the loop
        total = _summed(f, inv, outer_inv, stacks)
        if total is not None:
            done.append((j, last, total))
    if not done:
        return None
    inits = {j: args.outer_in_sit_sot[j] for j, _, _ in done}
    for j in sorted((j for j, _, _ in done), reverse=True):
        args.remove("sit_sot", j)
    repl, new = rebuild(node, args)
    fill = {ph: new.outputs[args.info.outer_out_nit_sot[k]] for ph, k in stacks.new.items()}
    for j, last, total in done:
        value = getitem(inits[j], 0) + clone_replace(total, fill)
        if not all(can_replace(v, value) for v in last):
            return None
        repl.update({v: value for v in last})
    return repl


# -- outputs read only at their last step -------------------------------------------------------
def _last_step_cuts(args):
    """inner variable -> (kind, where) for the values the last step reads or writes.

    kind "seq"/"non_seq": index into the outer sequences / non-sequences;
    "row": (category, index, negative row of the outer buffer). Unsupported
    inputs (mit_mot, shared, ring states) map to None.
    """
    cuts = {}
    for i, v in enumerate(args.inner_in_seqs):
        cuts[v] = ("seq", i)
    for i, v in enumerate(args.inner_in_non_seqs):
        cuts[v] = ("non_seq", i)
    for v in [w for g in args.inner_in_mit_mot for w in g] + list(args.inner_in_shared):
        cuts[v] = None
    for j, (taps, ins) in enumerate(zip(args.mit_sot_in_slices, args.inner_in_mit_sot)):
        ring = args.mit_sot_rows[j] is not None
        for k, v in zip(taps, ins):
            cuts[v] = None if ring else ("row", "mit_sot", j, k - 1)
    for j, v in enumerate(args.inner_in_sit_sot):
        cuts[v] = None if args.sit_sot_rows[j] is not None else ("row", "sit_sot", j, -2)
    # what the step writes: checked first, so a state's new value is read, not recomputed
    for cat in ("mit_sot", "sit_sot"):
        for j, v in enumerate(getattr(args, f"inner_out_{cat}")):
            if getattr(args, f"{cat}_rows")[j] is None:
                cuts.setdefault(("out", v), ("row", cat, j, -1))
    return cuts


def _last_step_graph(y, cuts):
    """The cut variables `y` is computed from (in the step), or None if it cannot leave."""
    used, seen, stack = {}, set(), [y]
    while stack:
        v = stack.pop()
        if v in seen or isinstance(v, Constant):
            continue
        seen.add(v)
        cut = cuts.get(("out", v)) or cuts.get(v, False)
        if cut is None:
            return None
        if cut is not False:
            used[v] = cut
            continue
        n = v.owner
        if n is None or is_stateful(n) or isinstance(n.op, Check):
            return None
        stack.extend(n.inputs)
    return used


def _pushable_nit_sots(fgraph, node, args, cuts):
    """[(nit_sot index, readers of y[-1], cut variables of y_t)] for the nit_sots that leave."""
    out = []
    for k, (y, outer, length) in enumerate(zip(args.inner_out_nit_sot, args.outer_out_nit_sot,
                                               args.outer_in_nit_sot)):
        if not (length is args.n_steps or (isinstance(length, Constant) and length.data >= 1)):
            continue
        last = _last_step_readers(fgraph, outer)
        if last is None:
            continue
        used = _last_step_graph(y, cuts)
        if used is not None:
            out.append((k, last, used))
    return out


def _last_step_readers(fgraph, var):
    """[(reader output, axis)] of `var`: ``var[-1]`` (axis None) and ``var.shape[d]`` (d - 1).

    None unless `var[-1]` is among them and nothing else reads `var`. A
    row-shape reader (d >= 1) is answered by the pushed-out value's shape:
    every node of a graph runs, so where no step ran (no row to take a shape
    from) ``var[-1]`` raises anyway. The length (d = 0) is the number of rows
    the nit_sot kept.
    """
    out = []
    for client, _ in fgraph.clients.get(var, ()):
        if client != "output" and isinstance(client.op, Subtensor) and \
                client.op.idx_list == (-1,):
            out.append((client.outputs[0], None))
        elif client != "output" and isinstance(client.op, Shape_i):
            out.append((client.outputs[0], client.op.i - 1))
        else:
            return None
    return out if any(axis is None for _, axis in out) else None


def _has_outputs(args):
    return bool(args.outer_in_mit_mot or args.outer_in_mit_sot or args.outer_in_sit_sot
                or args.outer_in_nit_sot or args.outer_in_shared or args.cond is not None)


@node_rewriter([Scan])
def scan_pushout_last_step(fgraph, node):
    """Compute nit_sots read only at ``[-1]`` once, after the loop, from the last step's values."""
    args = ScanArgs.from_node(node)
    cuts = _last_step_cuts(args)
    pushed = _pushable_nit_sots(fgraph, node, args, cuts)
    if not pushed:
        return None
    ys = {k: (args.inner_out_nit_sot[k], args.labels.get(args.inner_out_nit_sot[k], "an output"),
              args.outer_in_nit_sot[k]) for k, _, _ in pushed}
    old_outs = {("mit_sot", j): v for j, v in enumerate(args.outer_out_mit_sot)}
    old_outs.update({("sit_sot", j): v for j, v in enumerate(args.outer_out_sit_sot)})
    old_n_steps = args.outer_out_n_steps
    for k in sorted(ys, reverse=True):
        args.remove("nit_sot", k)
    repl, new_of = {}, {}
    if _has_outputs(args):
        repl, _ = rebuild(node, args)
        new_of = repl
    executed = new_of[old_n_steps] if old_n_steps is not None else args.n_steps
    for k, last, used in pushed:
        y, label, _ = ys[k]
        value = _last_step_value(y, used, args, old_outs, new_of, executed,
                                 f"{args.name or 'scan'}: {label}")
        length = ys[k][2]
        for v, axis in last:
            w = value if axis is None else shape_i(value, axis) if axis >= 0 else \
                executed if length is args.n_steps else minimum(length, executed)
            if not can_replace(v, w):
                return None
            repl[v] = w
    return repl


def _last_step_value(y, used, args, old_outs, new_of, executed, what):
    """The outer expression of `y` at the last executed step (see the module docstring)."""
    msg = (what.replace("{", "{{").replace("}", "}}")
           + " is read at its last step ([-1]), but the loop ran {} steps")
    ok = ge(executed, 1)
    e = check(executed, ok, msg, executed)
    mapping = {}
    for v, cut in used.items():
        if cut[0] == "seq":
            mapping[v] = getitem(args.outer_in_seqs[cut[1]], e - 1)
        elif cut[0] == "non_seq":
            mapping[v] = args.outer_in_non_seqs[cut[1]]
        else:
            _, cat, j, row = cut
            mapping[v] = getitem(new_of[old_outs[(cat, j)]], row)
    value = clone_replace(y, mapping) if y not in mapping else mapping[y]
    if not any(cut[0] == "seq" for cut in used.values()):
        value = check(value, ok, msg, executed)
    return value


# -- outputs that are a non-sequence ---------------------------------------------------------
@node_rewriter([Scan])
def scan_pushout_invariant_nit_sots(fgraph, node):
    """A nit_sot whose step value is a non-sequence is that value repeated ``n_steps`` times.

    It is built outside as ``alloc(v, n_steps, *v.shape)`` and leaves the loop (after
    `scan_pushout_non_seqs`, any loop-invariant output is a non-sequence); a loop
    left without outputs is gone. Loops with ``until`` are left alone (the
    executed steps are known only after the loop), and so are nit_sots whose
    length input is not ``n_steps``.
    """
    from ...tensor.basic import alloc
    from ...tensor.shape import shape_tuple

    args = ScanArgs.from_node(node)
    if args.cond is not None:
        return None
    inv = dict(zip(args.inner_in_non_seqs, args.outer_in_non_seqs))
    pushed = {k: (inv[y], args.outer_out_nit_sot[k])
              for k, (y, length) in enumerate(zip(args.inner_out_nit_sot, args.outer_in_nit_sot))
              if y in inv and length is args.n_steps}
    if not pushed:
        return None
    for k in sorted(pushed, reverse=True):
        args.remove("nit_sot", k)
    repl = rebuild(node, args)[0] if _has_outputs(args) else {}
    for value, out in pushed.values():
        w = alloc(value, args.n_steps, *shape_tuple(value))
        if not can_replace(out, w):
            return None
        repl[out] = w
    return repl


scan_pushout_last_step_pass = InToOut([scan_pushout_last_step], name="scan_pushout_last_step")
scan_pushout_invariant_nit_sots_pass = InToOut([scan_pushout_invariant_nit_sots],
                                               name="scan_pushout_invariant_nit_sots")
scan_pushout_non_seqs_pass = InToOut([scan_pushout_non_seqs], name="scan_pushout_non_seqs")
scan_pushout_seqs_pass = InToOut([scan_pushout_seqs], name="scan_pushout_seqs")
scan_pushout_accumulators_pass = InToOut([scan_pushout_accumulators],
                                         name="scan_pushout_accumulators")
