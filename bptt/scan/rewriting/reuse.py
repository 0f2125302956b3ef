"""A backward step reads the products its forward step computed, instead of recomputing them.

The gradient of a scan recomputes, in the backward step, the intermediate
values of the forward step that are not loop outputs (docs/scan-gradient.md).
For an LSTM that is the pre-activation ``z_t = x_t @ Wx + h_{t-1} @ Wh + b``:
two products per step, which the sequence push-out turns into a T-long
``(x @ Wx)[::-1] + (H @ Wh)[::-1] + b`` before the backward loop. Before this
pass, four T x B x 4H-sized arrays were computed for it per call (the forward's
``x @ Wx``, the backward's ``H @ Wh`` and their sum), and two of them were alive together.

`scan_reuse_forward` makes the forward loop record the value (one more nit_sot)
and the backward loop read it as a sequence::

    forward  F: step t reads X[t], h[t-1] (buffer row t), Wx, Wh, b
                computes z_t = x_t @ Wx + h_{t-1} @ Wh + b      -> new nit_sot Z, row t
    backward B: step s reads X[::-1][s], buffer[a:E][::-1][s], Wx, Wh, b
                recomputed z_s from them                        -> reads Z[::-1][s]

Row s of ``V[a:E+off][::-1]`` is ``V[E+off-1-s]``, what forward step
``t = E-1-s`` read when it reads row ``t + off`` of `V` (off = 0 for a
sequence; a buffer's tap offset, or its output offset for the row the step
wrote). So the backward step's value equals the forward step's value at step
``E-1-s``, row s of ``Z[::-1]``, when it is computed by the same ops from inputs
that correspond this way (or from the same non-sequences, or equal constants).
Later, `scan_nit_sot_into_seq` stores Z in the rows of the forward's
pushed-out ``x @ Wx`` (dead after its step) and the backward's gate cotangent in Z's rows.

When: ``bptt.config.reuse_forward``. Under ``"auto"`` (the default) a value is
recorded where that saves work: where recomputing it takes a product over an inner
size not known to be below `MIN_INNER` (an outer product, k = 1, costs one multiply
per element, no more than the record's store and load). ``True`` records every
such value, ``False`` none: then the backward loop recomputes the products, in
chunks of steps where `scan_chunk_seq_products` (``product_seqs.py``) applies, with no
T-long record (the memory-lean plan, at the price of the recomputed products:
docs/scan-internals.md, "Products in chunks", has the figures). The record is a T x B x 4H array
on an LSTM, twice its h and c traces, unless its rows can hold it (below).

Which values: those computed by a product (`Dot`) of corresponding inputs or a
sum with such a product (the part the push-out would run as whole-trace
GEMMs), cut where something else reads them. Elementwise work on them
(sigmoid, tanh) is still recomputed: it costs less than storing it.

Conditions: neither loop has ``until`` (the backward push-outs then keep
no T-long array, and a recorded value would add one); the forward's states read
this way are not rings; the backward runs at most E steps (its n_steps is E,
or ``minimum(E, k)`` for truncate_gradient), so every row it reads was
written; stateful nodes (random draws) are never matched.
"""
from __future__ import annotations

import numpy as np

from ...config import config
from ...graph.basic import Constant
from ...graph.rewriting import graph_pass, replace_checked
from ...graph.traversal import toposort
from ...tensor.elemwise import Elemwise
from ...tensor.math import Dot
from ...tensor.rewriting.constant_folding import is_stateful
from ...tensor.rewriting.reorder import lin_length, lin_value
from ...tensor.scalar_ops import Add, Minimum
from ...tensor.subtensor import SCALAR, SliceSpec, Subtensor, getitem
from ..args import ScanArgs
from ..op import Scan
from .basic import rebuild

NAME = "scan_reuse_forward"

#: under reuse_forward "auto", a product is recorded unless its inner size is known
#: to be below this
MIN_INNER = 2


# -- which backward inputs are forward inputs, reversed ------------------------------------
def _reversed_rows(var):
    """``(V, stop)`` when `var` is ``V[::-1]`` (stop None) or ``V[a:stop][::-1]``, else None."""
    node = var.owner
    if node is None or not isinstance(node.op, Subtensor) or \
            node.op.idx_list != (SliceSpec(None, None, -1),):
        return None
    inner = node.inputs[0]
    n = inner.owner
    if n is None or not isinstance(n.op, Subtensor) or len(n.op.idx_list) != 1:
        return inner, None
    first = n.op.idx_list[0]
    if not isinstance(first, SliceSpec) or first.step not in (None, 1) or first.stop is None:
        return inner, None
    values = iter(n.inputs[1:])
    parts = [next(values) if p == SCALAR else p for p in first]
    return n.inputs[0], parts[1]


def _same_lin(a, b, off=0):
    return a is not None and b is not None and a[0] == b[0] and a[1] == b[1] + off


def _ends_at(fgraph, var, e_lin, off):
    """Whether row s of `var` is row ``E + off - 1 - s`` of some V; returns V or None."""
    found = _reversed_rows(var)
    if found is None:
        return None
    v, stop = found
    if stop is None:
        end = lin_length(fgraph, v, 0)
    elif isinstance(stop, (int, np.integer)):
        end = (None, int(stop)) if stop >= 0 else None
    else:
        end = lin_value(fgraph, stop)
    return v if _same_lin(end, e_lin, off) else None


def _at_most(fgraph, n, e_lin):
    """Whether the backward's n_steps `n` is E or ``minimum(E, k)``."""
    if _same_lin(lin_value(fgraph, n), e_lin):
        return True
    node = n.owner
    return (node is not None and isinstance(node.op, Elemwise)
            and isinstance(node.op.scalar_op, Minimum)
            and any(_same_lin(lin_value(fgraph, i), e_lin) for i in node.inputs))


def _input_map(fgraph, bwd, fwd):
    """Backward inner input -> the forward inner variable it holds at the mirrored step."""
    bop, fop, finfo = bwd.op, fwd.op, fwd.op.info
    e_lin = lin_value(fgraph, fwd.inputs[0])
    if e_lin is None or not _at_most(fgraph, bwd.inputs[0], e_lin):
        return {}
    binfo = bop.info
    sources = {}        # (outer variable, offset) -> forward inner variable
    for j, pos in enumerate(finfo.outer_in_seqs):
        sources[(fwd.inputs[pos], 0)] = fop.inner_inputs[finfo.inner_in_seqs[j]]
    for s, buf in enumerate(finfo.buffers):
        if buf.kind == "mit_mot" or fop.plan.buffer_ring(s) is not None:
            continue
        out = fwd.outputs[buf.outer_output]
        for i, off in zip(buf.inner_inputs, buf.in_offsets):
            sources.setdefault((out, off), fop.inner_inputs[i])
        for o, off in zip(buf.inner_outputs, buf.out_offsets):
            sources.setdefault((out, off), fop.inner_outputs[o])
    offsets = sorted({off for _, off in sources})
    mapping = {}
    for j, pos in enumerate(binfo.outer_in_seqs):
        for off in offsets:
            v = _ends_at(fgraph, bwd.inputs[pos], e_lin, off)
            if v is not None and (v, off) in sources:
                mapping[bop.inner_inputs[binfo.inner_in_seqs[j]]] = sources[(v, off)]
                break
    f_non_seqs = {fwd.inputs[p]: fop.inner_inputs[i]
                  for p, i in zip(finfo.outer_in_non_seqs, finfo.inner_in_non_seqs)}
    for p, i in zip(binfo.outer_in_non_seqs, binfo.inner_in_non_seqs):
        if bwd.inputs[p] in f_non_seqs:
            mapping[bop.inner_inputs[i]] = f_non_seqs[bwd.inputs[p]]
    return mapping


# -- which backward step values are forward step values -------------------------------------
def _equal_constants(a, b):
    return (isinstance(a, Constant) and isinstance(b, Constant) and a.type == b.type
            and np.array_equal(np.asarray(a.data), np.asarray(b.data)))


def _clients(outputs):
    clients = {}
    for node in toposort(outputs):
        for i, v in enumerate(node.inputs):
            clients.setdefault(v, []).append((node, i))
    return clients


def _translate(bop, fop, mapping):
    """Backward inner variable -> the forward inner variable computing the same value."""
    f_clients = _clients(fop.inner_outputs)
    memo = dict(mapping)
    for node in toposort(bop.inner_outputs):
        if is_stateful(node):
            continue
        ins = [memo.get(v, v if isinstance(v, Constant) else None) for v in node.inputs]
        anchor = next((v for v in ins if v is not None and not isinstance(v, Constant)), None)
        if any(v is None for v in ins) or anchor is None:
            continue
        for f_node, _ in f_clients.get(anchor, []):
            if f_node.op == node.op and len(f_node.inputs) == len(ins) and all(
                    a is b or _equal_constants(a, b) for a, b in zip(f_node.inputs, ins)):
                memo.update(zip(node.outputs, f_node.outputs))
                break
    return memo


def _is_sum(node):
    return isinstance(node.op, Elemwise) and isinstance(node.op.scalar_op, Add)


def _saved(bop, memo):
    """The backward values to read from the forward: products of corresponding inputs and
    sums with them, where something other than such a sum reads them."""
    heavy = set()
    for node in toposort(bop.inner_outputs):
        out = node.outputs[0]
        if len(node.outputs) != 1 or out not in memo:
            continue
        if isinstance(node.op, Dot) or (_is_sum(node) and any(i in heavy for i in node.inputs)):
            heavy.add(out)
    clients = _clients(bop.inner_outputs)
    outputs = set(bop.inner_outputs)
    saved = [v for v in toposort_vars(bop.inner_outputs, heavy)
             if v in outputs or any(not (_is_sum(c) and c.outputs[0] in heavy)
                                    for c, _ in clients.get(v, []))]
    if config.reuse_forward == "auto":
        saved = [v for v in saved if _saves_work(v, heavy)]
    return saved


def _saves_work(v, heavy):
    """Whether `v` (a product, or a sum with products) takes a product whose inner size
    is not known to be below `MIN_INNER` (reuse_forward "auto")."""
    node = v.owner
    if isinstance(node.op, Dot):
        inner = node.inputs[0].type.shape[-1]
        return inner is None or inner >= MIN_INNER
    return any(_saves_work(i, heavy) for i in node.inputs if i in heavy)


def toposort_vars(outputs, keep):
    """The variables of `keep` in the order their nodes run."""
    return [o for node in toposort(outputs) for o in node.outputs if o in keep]


# -- the rewrite -----------------------------------------------------------------------------
def _forward_candidates(bwd):
    """Scan nodes whose outputs or inputs the backward's reversed sequences are taken from."""
    found = []
    for pos in bwd.op.info.outer_in_seqs:
        rev = _reversed_rows(bwd.inputs[pos])
        base = rev[0] if rev else None
        owner = getattr(base, "owner", None)
        if owner is not None and isinstance(owner.op, Scan) and owner not in found:
            found.append(owner)
    return found


def _eligible(node):
    info = node.op.info
    return not info.as_while and not node.op.plan.nit_sot_into_seq


def _reuse(fgraph, bwd, fwd):
    """Rewrite the pair; return whether it changed."""
    if fwd is bwd or not _eligible(fwd):
        return False
    memo = _translate(bwd.op, fwd.op, _input_map(fgraph, bwd, fwd))
    saved = _saved(bwd.op, memo)
    if not saved:
        return False
    fargs = ScanArgs.from_node(fwd)
    for v in saved:
        fargs.add_nit_sot(memo[v], fargs.n_steps, label=f"recorded for the gradient: {v}")
    replacements, new_fwd = rebuild(fwd, fargs)
    recorded = list(new_fwd.op.info.outer_out_nit_sot)[-len(saved):]
    _replace(fgraph, replacements)
    bargs = ScanArgs.from_node(bwd)
    reads = {v: bargs.add_seq(getitem(new_fwd.outputs[k], slice(None, None, -1)),
                              inner_type=v.type)
             for v, k in zip(saved, recorded)}
    bargs.replace_inner(reads)
    replacements, _ = rebuild(bwd, bargs)
    _replace(fgraph, replacements)
    return True


def _replace(fgraph, replacements):
    # a rebuilt loop's outputs may have a more precise static shape than the old ones
    # (a constant n_steps): replace_checked accepts those, FunctionGraph.replace does not
    for old, new in replacements.items():
        replace_checked(fgraph, old, new, NAME)


@graph_pass(NAME)
def scan_reuse_forward(fgraph):
    """Backward scans read the forward step's product values (see the module docstring)."""
    if not config.reuse_forward:
        return False    # recomputed in chunks by scan_chunk_seq_products (config docstring)
    changed = True
    done = False
    while changed:
        changed = False
        for bwd in fgraph.toposort():
            if isinstance(bwd.op, Scan) and _eligible(bwd):
                if any(_reuse(fgraph, bwd, fwd) for fwd in _forward_candidates(bwd)):
                    changed = done = True
                    break
    return done
