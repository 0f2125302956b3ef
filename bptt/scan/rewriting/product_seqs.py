"""Products read as sequences are computed in chunks inside the loop: `scan_chunk_seq_products`.

The sequence push-out (``pushout.py``) turns a step's ``x_t @ W`` into one
product over all the steps, ``P = x @ W``, read by the loop as a sequence: one
GEMM at its full rate, but a T-long array. On an LSTM, ``x @ Wx`` is
``T x B x 4H``: twice the h and c traces together, alive through the forward
loop; the backward loop, which recomputes the pre-activation
``z_t = x_t @ Wx + h_{t-1} @ Wh + b``, reads ``(x @ Wx)[::-1] + (H @ Wh)[::-1] + b``,
two more.

This pass (after `scan_nit_sot_into_seq`, before `scan_seq_into_buffer`, after
every pass that edits a scan through `ScanArgs`) gives the product back to the loop without
giving up the GEMM rate: the loop computes the rows of ``x @ W`` for a chunk
of steps at once (``StoragePlan.seq_products``; one gemm over about
``config.chunk_rows`` stacked rows into a few steps' rows of working space,
``bptt/link/numba/dispatch/scan/products.py``) and step t reads its row::

    before                                      after
    P = reshape(dot(reshape(x), W))  (T, B, N)  Scan(n, x, ..., W)    seq 0 times W,
    Scan(n, P, ...)                                                   in chunks
    Scan(n, f(P[::-1], Q, b_row), ...)          Scan(n, x[::-1], h', ..., Wx, Wh, b_row[0])
                                                step: f(x_t @ Wx, h'_t @ Wh, b_row[0])

A sequence qualifies when its outer value is such a product (``reshape(dot(
reshape(x, (T*B, In)), W), (T, B, N))``, the push-out's form, the sizes proven
by `shape_keys`), the reversed view of one, or an elementwise expression of
those, of invariant rows (a view adding the leading broadcast dimension: the
bias) and of constants. The expression moves into the step graph, where it
runs on one step's rows; the expressions of several sequences may share nodes
and products (a GRU's backward loop read eight stacked gate values, computed
from six products: now six chunked products, each once per chunk, and the
gates in the step). Products, reversed views and expression nodes move only
when every reader of them moves (in every loop reading them): one that stays
computed saves nothing. Not converted: loops with ``until`` (as every
push-out), a sequence a state buffer will hold (``seq_into_buffer``: a product
of the state's own row shape costs no memory there), one a summed nit_sot
multiplies, one whose rows hold a stacked nit_sot computed from the row by
elementwise work (that memory is an output). Another nit_sot stored in the sequence's
rows gets rows of its own: a summed one (a pre-activation's cotangent summed into
a weight gradient) its K-step staging, a stacked one (the cotangent of ``x``,
``dx_t = dz_t @ Wx.T``, which shares the rows only where ``x``'s rows are as wide
as the product's) a T-long array of its own, no larger than the sequence.

Each loop computes its own chunks, so a product read by two loops (a forward
loop's ``x @ Wx`` that its backward loop reads reversed) is computed twice: the
price of not keeping it (more time for less memory: docs/scan-internals.md). With
``bptt.config.reuse_forward`` the backward loop reads the forward's recorded pre-activation instead
(`scan_reuse_forward`, ``reuse.py``), a T-long nit_sot stored in ``x @ Wx``'s
rows, which this pass then leaves alone.
"""
from __future__ import annotations

import dataclasses

from ...config import config
from ...graph.basic import Constant
from ...graph.replace import clone_replace
from ...graph.rewriting import graph_pass
from ...graph.traversal import ancestors
from ...tensor.blas import Gemm
from ...tensor.elemwise import Elemwise
from ...tensor.math import Dot
from ...tensor.rewriting.sizes import shape_keys
from ...tensor.shape import DimShuffle, Reshape
from ...tensor.subtensor import getitem
from ...tensor.type import TensorType
from ..plan import ROW_SUM
from ..plan import StoragePlan
from ..op import Scan
from .pushout import _reversed_source
from .seq_buffer import buffer_homes

NAME = "scan_chunk_seq_products"


def _product(fgraph, p):
    """``(x, W)`` if `p` is ``reshape(dot(reshape(x, (T*B, In)), W), (T, B, N))`` of a
    3-d float `x` and matrix `W`, with the dot read by nothing else."""
    if p.owner is None or not isinstance(p.owner.op, Reshape) or p.ndim != 3:
        return None
    d = p.owner.inputs[0]
    if d.owner is None or not isinstance(d.owner.op, Dot) or len(fgraph.clients.get(d, ())) != 1:
        return None
    x2, w = d.owner.inputs      # x2, a view of x, may feed other products (gates of their own)
    if x2.owner is None or not isinstance(x2.owner.op, Reshape):
        return None
    x = x2.owner.inputs[0]
    if not (x.ndim == 3 and w.ndim == 2 and x.dtype == w.dtype == p.dtype
            and p.dtype in ("float32", "float64")):
        return None
    kx, kx2, kp = shape_keys(fgraph, x), shape_keys(fgraph, x2), shape_keys(fgraph, p)
    # x2 keeps x's columns (so its rows are x's T*B rows) and p x's first two sizes
    # (so its rows are x2's rows regrouped): row t of p is x[t] @ W.
    if kx2[1] != kx[2] or kp[:2] != kx[:2]:
        return None
    return x, w


def _term(fgraph, v):
    """``(P, x, W, reversed)`` if `v` is a product `P` or its reversed view ``P[::-1]``."""
    source = _reversed_source(v)
    rev = source is not None
    found = _product(fgraph, source if rev else v)
    return None if found is None else (source if rev else v, *found, rev)


def _row_invariant(v):
    """Whether `v` is one row broadcast over the steps: a constant or a view adding the
    leading broadcast dimension (the bias, ``b[None, None, :]``)."""
    if isinstance(v, Constant):
        return v.ndim >= 1 and v.type.shape[0] == 1
    n = v.owner
    return n is not None and isinstance(n.op, DimShuffle) and n.op.new_order[:1] == ("x",)


def _expression(fgraph, v, terms, nodes, seen):
    """Whether `v` can be computed in the step from products (appended to `terms`),
    invariant rows and constants by elementwise nodes (appended to `nodes`, inputs first)."""
    if v in seen:
        return seen[v]
    term = _term(fgraph, v)
    if term is not None:
        terms.append(term)
        ok = True
    elif _row_invariant(v):
        ok = True
    else:
        n = v.owner
        ok = (n is not None and isinstance(n.op, Elemwise) and len(n.outputs) == 1 and
              all([_expression(fgraph, i, terms, nodes, seen) for i in n.inputs]))
        if ok:
            nodes.append(n)
    seen[v] = ok
    return ok


def _plan(fgraph, node, j, homes):
    """``(terms, nodes)`` if sequence `j` of Scan `node` can be computed in the loop, else
    None: `terms` lists its products ``(P, x, W, reversed)``, `nodes` the elementwise nodes
    computing it from them (none when the sequence is one product). `homes`: the node's
    `buffer_homes`."""
    info = node.op.info
    if j in {e for e in node.op.plan.seq_into_buffer if e is not None}:
        return None
    if j in node.op.plan.summed_seqs:
        return None
    if _held_by_its_state(node, j, homes) or _holds_stacked_rows(node, j):
        return None
    terms, nodes = [], []
    if not _expression(fgraph, node.inputs[info.outer_in_seqs[j]], terms, nodes, {}):
        return None
    return (terms, nodes) if terms else None


def _held_by_its_state(node, j, homes):
    """Whether `scan_seq_into_buffer` (next) will store sequence `j` in a state buffer whose
    rows will have the sequence's row shape (a product ``x @ U`` in the trace of a state
    it is added to: no memory at all). The shapes are rarely provable, so: when the state's value is
    computed from the sequence row by elementwise work and gemm accumulation only (then its
    rows are the row's, or a broadcast of it). Where the row is cut first (a wide
    pre-activation sliced into gates of the state's width), the chunks save for sure."""
    op = node.op
    for s, k in enumerate(homes):
        if k == j:
            row = op.inner_inputs[op.info.inner_in_seqs[j]]
            return _elementwise_of(op.inner_outputs[op.info.buffers[s].inner_outputs[0]], row)
    return False


def _holds_stacked_rows(node, j):
    """Whether a stacked nit_sot lives in sequence `j`'s rows and is computed from the
    row by elementwise work (so its rows have the row's shape: the recorded pre-activation
    in ``x @ Wx``'s, with `reuse_forward`): that memory is an output, and computing the
    sequence in chunks would save none of it."""
    op, info = node.op, node.op.info
    row = op.inner_inputs[info.inner_in_seqs[j]]
    return any(s == j and op.plan.nit_sot_sum(k) is None and
               _elementwise_of(op.inner_outputs[info.inner_out_nit_sot[k]], row)
               for k, s in enumerate(op.plan.nit_sot_into_seq))


def _elementwise_of(v, row):
    """Whether `v` is `row`, or computed from it through Elemwise inputs and gemm's z."""
    while v is not row:
        n = v.owner
        if n is None:
            return False
        if isinstance(n.op, Gemm):
            v = n.inputs[0]
        elif isinstance(n.op, Elemwise):
            nxt = [i for i in n.inputs if _depends_on(i, row)]
            if len(nxt) != 1:
                return False
            v = nxt[0]
        else:
            return False
    return True


def _depends_on(v, row):
    return row in ancestors([v], blockers=[row])


def _plans(fgraph, skip):
    """{Scan node: {sequence: plan}} for the sequences computed in their loops (but the
    (node, sequence) pairs in `skip`): those whose products and elementwise nodes have no
    reader that keeps them computed (then moving them saves nothing)."""
    plans = {}
    for node in fgraph.toposort():
        if not isinstance(node.op, Scan) or node.op.info.as_while:
            continue
        homes = buffer_homes(fgraph, node)
        for j in range(node.op.info.n_seqs):
            if node.op.plan.seq_product(j) is None and (node, j) not in skip:
                plan = _plan(fgraph, node, j, homes)
                if plan is not None:
                    plans[node, j] = plan
    while True:
        moved = {n for _, nodes in plans.values() for n in nodes}
        read = {(node, node.op.info.outer_in_seqs[j]) for node, j in plans}

        def covered(client, idx, moved=moved, read=read):
            if client in moved or (client, idx) in read:
                return True
            # the reversed view of a product, itself read by the moved expressions
            return client != "output" and _reversed_source(client.outputs[0]) is not None and \
                all(covered(c, i) for c, i in fgraph.clients.get(client.outputs[0], ()))

        def kept(v):
            return not all(covered(c, i) for c, i in fgraph.clients.get(v, ()))

        drop = {key for key, (terms, nodes) in plans.items()
                if any(kept(t[0]) for t in terms) or any(kept(n.outputs[0]) for n in nodes)}
        if not drop:
            break
        plans = {key: plan for key, plan in plans.items() if key not in drop}
    out = {}
    for (node, j), plan in plans.items():
        out.setdefault(node, {})[j] = plan
    return out


def _rebuild(node, plans):
    """The Scan node computing the planned sequences in the loop, or None."""
    op, info = node.op, node.op.info
    ins = list(node.inputs)
    seqs = [ins[i] for i in info.outer_in_seqs]
    inner_seqs = [op.inner_inputs[i] for i in info.inner_in_seqs]
    non_seqs = [ins[i] for i in info.outer_in_non_seqs]
    inner_ns = [op.inner_inputs[i] for i in info.inner_in_non_seqs]
    products = [op.plan.seq_product(j) for j in range(info.n_seqs)]
    origins = list(op.seq_origins) if op.seq_origins else None
    into = list(op.plan.nit_sot_into_seq) or [None] * info.n_nit_sot
    free = sorted(plans)            # slots of the moved sequences, taken by products first
    first_slot = free[0]
    memo = {}

    def non_seq(outer):
        """The inner variable of non-sequence `outer` (added unless passed already)."""
        for k, o in enumerate(non_seqs):
            if o is outer:
                return inner_ns[k], k
        non_seqs.append(outer)
        inner_ns.append(outer.type())
        return inner_ns[-1], len(non_seqs) - 1

    def product_seq(term):
        """Inner variable of a sequence reading ``x[t] @ W``, in a freed slot or a new one."""
        _, x, w, rev = term
        _, wk = non_seq(w)
        outer = getitem(x, slice(None, None, -1)) if rev else x
        var = _row_type(x, w)()
        if free:
            k = free.pop(0)
            seqs[k], inner_seqs[k], products[k] = outer, var, (wk, config.chunk_rows)
            return var
        seqs.append(outer)
        inner_seqs.append(var)
        products.append((wk, config.chunk_rows))
        if origins is not None:
            origins.append(origins[first_slot]._replace(offset=None))
        return var

    terms = [t for ts, _ in plans.values() for t in ts]

    def planned_term(v):
        """The planned product `v` is (P itself, or P[::-1] for a reversed term), or None."""
        source = _reversed_source(v)
        return next((t for t in terms if t[0] is (source if t[3] else v)), None)

    def inner(v):
        """The step's value of row t of outer `v` (a product, an invariant row or an
        elementwise node over those)."""
        if v not in memo:
            term = planned_term(v)
            if term is not None:     # one sequence per product and direction
                key = (term[0], term[3])
                if key not in memo:
                    memo[key] = product_seq(term)
                memo[v] = memo[key]
            elif isinstance(v, Constant):
                memo[v] = getitem(v, 0)
            elif _row_invariant(v):
                memo[v] = non_seq(getitem(v, 0))[0]
            else:
                n = v.owner
                memo[v] = Elemwise(n.op.scalar_op)(*[inner(i) for i in n.inputs])
        return memo[v]

    replace = _step_replacements(node, plans, inner)
    if replace is None:
        return None
    # A nit_sot stored in a moved sequence's rows gets its own (a summed one: its staging).
    into = [None if s in plans else s for s in into]
    loop = _Loop(seqs, inner_seqs, products, origins, non_seqs, inner_ns, into)
    return _node_without_slots(node, loop, free, replace)


def _step_replacements(node, plans, inner):
    """The step's row of each planned sequence -> its value computed in the loop by
    `inner`, or None if a value's type does not fit where the row was read."""
    op, info, ins = node.op, node.op.info, node.inputs
    replace = {}
    for j in sorted(plans):
        old = op.inner_inputs[info.inner_in_seqs[j]]
        value = inner(ins[info.outer_in_seqs[j]])
        if value.type != old.type:
            if value.type.dtype != old.type.dtype or value.type.ndim != old.type.ndim:
                return None
            if any(a is not None and a != b for a, b in zip(old.type.shape, value.type.shape)):
                return None     # the step graph was typed for other static sizes
        replace[old] = value
    return replace


@dataclasses.dataclass
class _Loop:
    """The rebuilt loop's sequences (outer, inner, products, origins), non-sequences
    (outer, inner) and nit_sot homes, before the unused sequence slots are removed."""

    seqs: list
    inner_seqs: list
    products: list
    origins: list
    non_seqs: list
    inner_ns: list
    into: list


def _node_without_slots(node, loop, free, replace):
    """The Scan node of `loop` with the sequence slots in `free` removed and the step's
    inputs replaced by `replace`, or None if its outputs' types differ from `node`'s."""
    op, info, ins = node.op, node.op.info, list(node.inputs)
    seqs, inner_seqs, products, origins = loop.seqs, loop.inner_seqs, loop.products, loop.origins
    non_seqs, inner_ns, into = loop.non_seqs, loop.inner_ns, loop.into
    # Slots no product took are removed; indices held elsewhere move down.
    gone = sorted(free)
    keep = [k for k in range(len(seqs)) if k not in gone]
    index = {k: i for i, k in enumerate(keep)}
    seqs, inner_seqs, products = ([xs[k] for k in keep] for xs in (seqs, inner_seqs, products))
    if origins is not None:
        origins = [origins[k] for k in keep]
    sums = _remap_sums(op.plan.nit_sot_sums, index)
    into = [None if s is None else index[s] for s in into]
    held = tuple(None if s is None else index[s] for s in op.plan.seq_into_buffer)
    inner_outs = clone_replace(op.inner_outputs, replace)
    states = op.inner_inputs[info.n_seqs:info.inner_in_non_seqs.start]
    outer_states = ins[info.outer_in_seqs.stop:info.outer_in_non_seqs.start]
    new_info = dataclasses.replace(info, n_seqs=len(seqs), n_non_seqs=len(non_seqs))
    plan = StoragePlan(buffer_rows=op.plan.buffer_rows, nit_sot_sums=sums,
                       nit_sot_into_seq=tuple(into), seq_into_buffer=held,
                       seq_products=tuple(products))
    new_op = Scan(inner_seqs + states + inner_ns, inner_outs, new_info, seq_origins=origins,
                  output_labels=op.output_labels, profile=op.profile, plan=plan)
    new = new_op.make_node(ins[0], *seqs, *outer_states, *non_seqs)
    if any(a.type != b.type for a, b in zip(node.outputs, new.outputs)):
        return None
    return new


def _remap_sums(sums, index):
    """`StoragePlan.nit_sot_sums` with sequence indices through `index` (ROW_SUM kept)."""
    return tuple(None if e is None else (e[0] if e[0] == ROW_SUM else index[e[0]], e[1])
                 for e in sums)


def _row_type(x, w):
    """The type of ``x[t] @ w``."""
    return TensorType(x.dtype, (x.type.shape[1], w.type.shape[1]))


@graph_pass(NAME)
def scan_chunk_seq_products(fgraph):
    """Sequences that are products of sequence rows are computed in chunks in the loop."""
    skip = set()
    while True:
        plans = {node: seqs for node, seqs in _plans(fgraph, skip).items() if seqs}
        built = {node: (list(node.inputs), _rebuild(node, seqs)) for node, seqs in plans.items()}
        failed = [node for node, (_, new) in built.items() if new is None]
        if not failed:
            break
        # A loop that cannot take its products keeps them computed: plan again without
        # them, so that no other loop recomputes a product that stays anyway.
        skip |= {(node, j) for node in failed for j in plans[node]}
    changed = False
    for node, (ins, new) in built.items():      # in order: readers after the loops they read
        if any(a is not b for a, b in zip(ins, node.inputs)):
            new = _rebuild(node, plans[node])   # it reads a loop replaced above: build anew
        if new is not None:
            fgraph.replace_all(list(zip(node.outputs, new.outputs)), reason=NAME)
            changed = True
    return changed
