"""Save-mem: a scan output keeps only the rows its readers read.

A Scan stores every row of its state buffers (``extent + T`` rows) and of its
nit_sots (T rows). When every outer reader of such an output reads only its
last k rows, the loop needs to keep no more: this pass rebuilds the node so

* a mit_sot / sit_sot buffer is a **ring** of ``max(k, extent + 1)`` rows
  (`StoragePlan.buffer_rows`; the ring is never shorter than ``extent + 1`` so
  the row a step writes is never one it reads);
* a nit_sot keeps ``minimum(length, k)`` rows (its length input: the op
  already keeps a nit_sot as a ring of that many rows);
* the backward-scan mit_mot with in-taps (0, 1) and out-tap (1,) (the
  cotangent of a sit_sot, see docs/scan-gradient.md) becomes a sequence plus
  a sit_sot ring. Its step s reads row s, which step s-1 wrote (row 0: the
  input), and row s+1 of the input, untouched until step s writes it. So row
  s is a carried state and row s+1 a sequence ``input[1:]``: the output is
  ``concatenate(carry buffer, input[E+1:])``, of which the readers see the last
  k rows, which only need the last k rows of the carry.

  When the step's output is ``g + d(c)`` (the running sum of a sit_sot's cotangent:
  the loss cotangent g of the state plus what the step sends back, d not reading
  g but for its shape), the loop carries ``d`` instead (**pre-add form**): step s
  reads row s of the input as g' and the carried ``e = d`` of step s-1 (zeros at
  step 0), computes ``c = g' + e`` and writes ``d(c)``. The sequence is then
  ``input[:E]``, the rows of the states the forward steps *wrote*, and row E
  (the cotangent of the state the first forward step read, a zero fill row of
  the loss cotangent when the loss does not read the initial state) is added
  after the loop: the output's last row is ``input[E] + carry[-1]``. Taken when
  the readers read that row only (the initial state's cotangent of a sit_sot;
  more rows keep the first form).
  `scan_read_through_join` then reads the loss cotangent's rows without a mask
  (the old form's last step read the fill row).

Readers that read only the last k rows, and are rebuilt on the new output
(their values do not change; `_reader` lists them):

    x[-j], x[-j:], x[-j:-i]  (any index on the other axes)      k = j
    x[::-1][i], x[::-1][:j]                                     k = i + 1, j
    x[c:] (c >= 0; what scan() returns for a state) whose own readers are these
    concatenate([..., x, ...]) whose readers read its last rows (first rows when
        x is reversed: a truncated gradient's initial-state cotangent)
    Shape_i{0}(x)      -> the full length, computed without the output
    Shape_i{d}(x), d>0 -> the same on the new output (Shape(x): both)

Any other reader keeps the whole output: a backward scan reads the forward
buffer as a sequence (a ``Subtensor{a:b}`` with symbolic bounds), which is
never cut. Works on any number of executed steps (``until``, zero steps).
Derivatives are taken before this pass runs; `Scan.L_op` refuses a node
with rings.
"""
from __future__ import annotations

import dataclasses
import weakref

from ...graph.basic import Constant
from ...graph.rewriting import graph_pass, replace_checked
from ...tensor.basic import Join
from ...tensor.shape import Shape, Shape_i, shape_i, shape_padleft
from ...tensor.subtensor import FULL, SCALAR, SliceSpec, Subtensor
from ..args import ScanArgs, _consistent
from ..op import Scan

NAME = "scan_save_mem"

#: nit_sot lengths this pass capped (a second run leaves their nodes alone).
_capped = weakref.WeakSet()


# -- which rows the readers read ---------------------------------------------------------
def _const(e):
    return e if isinstance(e, int) else None


def _first_axis_only(op):
    return isinstance(op, Subtensor) and op.idx_list and all(
        e == FULL for e in op.idx_list[1:])


def _reader(node, reversed_):
    """How `node` reads its input x: ("shape",), ("rev",), ("view", c) for x[c:],
    ("rows", k) for a reader of the last k rows only, or None (anything else)."""
    op = node.op
    if isinstance(op, (Shape, Shape_i)):
        return ("shape",)
    if isinstance(op, Join) and op.axis == 0:
        return ("join",)
    if not isinstance(op, Subtensor) or not op.idx_list:
        return None
    e = op.idx_list[0]
    if isinstance(e, SliceSpec) and any(p == SCALAR for p in e):
        return None
    if not reversed_ and _first_axis_only(op) and e == SliceSpec(None, None, -1):
        return ("rev",)
    if not reversed_ and _first_axis_only(op) and isinstance(e, SliceSpec) \
            and e.step in (None, 1) and e.stop is None and (e.start or 0) >= 0:
        return ("view", e.start or 0)
    k = _tail_rows(e, reversed_)
    return None if k is None else ("rows", k)


def _tail_rows(e, reversed_):
    """Rows an index on axis 0 reads from the end of its input (k), or None."""
    if not reversed_:
        if _const(e) is not None:
            return -e if e < 0 else None
        if isinstance(e, SliceSpec) and e.step in (None, 1) and _const(e.start) is not None:
            stop_ok = e.stop is None or (_const(e.stop) is not None and e.stop < 0)
            return -e.start if e.start < 0 and stop_ok else None
        return None
    if _const(e) is not None:
        return e + 1 if e >= 0 else None
    if isinstance(e, SliceSpec) and e.step in (None, 1) and e.start in (None, 0):
        return e.stop if _const(e.stop) is not None and e.stop > 0 else None
    return None


def _rows_read(fgraph, var, reversed_=False):
    """The k such that every reader of `var` reads only its last k rows, or None."""
    k = 0
    for node, _ in fgraph.get_clients(var):
        how = None if node == "output" else _reader(node, reversed_)
        if how is None:
            return None
        if how[0] in ("rev", "view", "join"):
            j = _rows_read(fgraph, node.outputs[0], reversed_ or how[0] == "rev")
        else:
            j = how[1] if how[0] == "rows" else 0
        if j is None:
            return None
        k = max(k, j)
    return k


def _rebuild_readers(fgraph, old, new, full_rows, node, reversed_=False):
    """Move every reader of `old` (accepted by `_rows_read`) onto `new`.

    `new` holds the last rows of `old` (at least as many as any reader reads);
    `full_rows` is the length of `old`, for its shape readers. A view
    ``old[c:]`` becomes ``new[max(0, len(new) - (full_rows - c)):]``: the
    same last rows, and empty when ``old[c:]`` is.
    """
    from ...tensor.basic import stack
    from ...tensor.math import maximum

    for client, _ in list(fgraph.get_clients(old)):
        how, op = _reader(client, reversed_), client.op
        if how[0] == "shape" and isinstance(op, Shape):
            dims = [full_rows] + [shape_i(new, d) for d in range(1, new.ndim)]
            replace_checked(fgraph, client.outputs[0], stack(dims), NAME, node)
        elif how[0] == "shape":
            value = full_rows if op.i == 0 else shape_i(new, op.i)
            replace_checked(fgraph, client.outputs[0], value, NAME, node)
        elif how[0] == "rev":
            _rebuild_readers(fgraph, client.outputs[0], op(new, *client.inputs[1:]),
                             full_rows, node, True)
        elif how[0] == "join":
            parts = [new if v is old else v for v in client.inputs]
            others = [shape_i(v, 0) for v in client.inputs if v is not old]
            rows = full_rows * sum(v is old for v in client.inputs) + sum(others)
            _rebuild_readers(fgraph, client.outputs[0], op(*parts), rows, node, reversed_)
        elif how[0] == "view":
            rows = maximum(full_rows - how[1], 0)
            view = new[maximum(shape_i(new, 0) - rows, 0):]
            _rebuild_readers(fgraph, client.outputs[0], view, rows, node, reversed_)
        else:
            replace_checked(fgraph, client.outputs[0], op(new, *client.inputs[1:]), NAME, node)


# -- the rewrite ----------------------------------------------------------------------------
def _is_cotangent_carry(info, j):
    return (sorted(info.mit_mot_in_slices[j]) == [0, 1]
            and tuple(info.mit_mot_out_slices[j]) == (1,))


def _carry_to_sit_sot(args, j, info, one_row):
    """Mit_mot j (in-taps (0, 1), out-tap (1,)) -> a sequence + a sit_sot; True for the
    pre-add form (module docstring), taken when the readers read `one_row` at most.

    Before: mit_mot buffer B, inner taps {0: c, 1: g}, inner output c'.
    After:  sequence B[1:] read as g; sit_sot with initial B[:1], read as c, written as c'.
    Pre-add (c' = g + d): sequence B[:n] read as g'; sit_sot with initial zeros, read as e,
    written as d, with c = g' + e (and g's shape read from g').
    The sit_sot's entry in ``outer_out_sit_sot`` is the old mit_mot output (a marker).
    """
    buf = args.outer_in_mit_mot[j]
    taps = dict(zip(info.mit_mot_in_slices[j], args.inner_in_mit_mot[j]))
    out_inner, out_outer = args.inner_out_mit_mot[j][0], args.outer_out_mit_mot[j]
    contrib = _pre_add_contribution(args, out_inner, taps[1]) if one_row else None
    args.remove("mit_mot", j)
    if contrib is None:
        args.outer_in_seqs.append(buf[1:])
        args.inner_in_seqs.append(taps[1])
        args.seq_origins.append(None)
        args.outer_in_sit_sot.append(buf[:1])
        args.inner_in_sit_sot.append(taps[0])
        args.inner_out_sit_sot.append(out_inner)
        args.outer_out_sit_sot.append(out_outer)
        return False
    from ...tensor.basic import zeros
    from ...tensor.math import add

    g_row = args.add_seq(buf[:args.n_steps], inner_type=taps[1].type)
    carried = taps[0].type()
    # one row of zeros of B's row shape (not zeros_like(B[:1]): B's first row is not read)
    args.outer_in_sit_sot.append(zeros([1] + [shape_i(buf, d) for d in range(1, buf.ndim)],
                                       dtype=buf.dtype))
    args.inner_in_sit_sot.append(carried)
    args.inner_out_sit_sot.append(contrib)
    args.outer_out_sit_sot.append(out_outer)
    args.labels[contrib] = args.labels.pop(out_inner, f"the cotangent of {out_outer}")
    args.replace_inner({taps[0]: add(g_row, carried), taps[1]: g_row})
    return True


def _pre_add_contribution(args, out, g):
    """``d`` when the inner output `out` is ``g + d`` and nothing else reads `g` (but for its
    shape, the same as the next row's) or `out`; None otherwise."""
    from ...graph.traversal import toposort
    from ...tensor.elemwise import Elemwise
    from ...tensor.math import add
    from ...tensor.scalar_ops import Add

    node = out.owner
    if node is None or not isinstance(node.op, Elemwise) \
            or not isinstance(node.op.scalar_op, Add) or node.inputs.count(g) != 1:
        return None
    rest = [v for v in node.inputs if v is not g]
    contrib = rest[0] if len(rest) == 1 else add(*rest)
    if contrib.type != out.type or g.type != out.type:
        return None   # d broadcasts against g: the carried rows would change shape
    outs = args.inner_outputs
    if sum(v is out for v in outs) != 1 or args.cond is out:
        return None
    for n in toposort(outs):
        if n is node:
            continue
        if out in n.inputs:
            return None
        if g in n.inputs and not isinstance(n.op, (Shape, Shape_i)):
            return None
    return contrib


def _plan(fgraph, node):
    """(mit_mots to carry, {output: rows read}) for the outputs save-mem can shorten."""
    info = node.op.info
    reads = {}
    carries = []
    for s, b in enumerate(info.buffers):
        out = node.outputs[b.outer_output]
        k = _rows_read(fgraph, out)
        if k is None:
            continue
        if b.kind == "mit_mot":
            if _is_cotangent_carry(info, b.index):
                carries.append(b.index)
                reads[out] = k
        elif node.op.plan.buffer_ring(s) is None:
            reads[out] = k
    for i, j in zip(info.outer_in_nit_sot, info.outer_out_nit_sot):
        k, length = _rows_read(fgraph, node.outputs[j]), node.inputs[i]
        short = length in _capped or (isinstance(length, Constant) and k is not None
                                      and int(length.data) <= max(k, 1))
        if k is not None and not short:
            reads[node.outputs[j]] = k
    return carries, reads


def _new_op(args, buffer_rows):
    outs = args.inner_outputs
    labels = [args.labels.get(v, f"inner output {o}") for o, v in enumerate(outs)]
    return Scan(args.inner_inputs, outs, args.info, seq_origins=_consistent(args.seq_origins),
                output_labels=labels, profile=args.profile,
                plan=dataclasses.replace(args.plan, buffer_rows=buffer_rows))


def _save_mem_node(fgraph, node):
    from ...tensor.basic import concatenate
    from ...tensor.math import minimum

    carries, reads = _plan(fgraph, node)
    if not reads:
        return False
    old_info = node.op.info
    args = ScanArgs.from_node(node)
    carried = {}
    for j in sorted(carries, reverse=True):
        out, buf = args.outer_out_mit_mot[j], args.outer_in_mit_mot[j]
        carried[out] = (buf, _carry_to_sit_sot(args, j, old_info, reads[out] <= 1))
    nit_full = {}
    for k, out in enumerate(args.outer_out_nit_sot):
        if out in reads:
            length = args.outer_in_nit_sot[k]
            nit_full[out] = length
            args.outer_in_nit_sot[k] = minimum(length, max(reads[out], 1))
            _capped.add(args.outer_in_nit_sot[k])
    info = args.info
    outer_outs = args.outer_outputs
    rings = {node.outputs[b.outer_output]: node.op.plan.buffer_ring(s)
             for s, b in enumerate(old_info.buffers) if node.op.plan.buffer_ring(s) is not None}
    rows = [None] * info.n_states
    for s, b in enumerate(info.buffers):
        out = outer_outs[b.outer_output]
        rows[s] = max(reads[out], b.extent + 1) if out in reads else rings.get(out)
    new = _new_op(args, tuple(rows)).make_node(*args.outer_inputs)
    steps = new.outputs[info.outer_out_n_steps] if info.as_while else node.inputs[0]
    for s, b in enumerate(info.buffers):
        out = outer_outs[b.outer_output]
        if out in carried:
            buf, pre_add = carried[out]
            last = new.outputs[b.outer_output]
            if pre_add:   # the last cotangent: the input's row plus the carried sum (one
                # row of static length 1: a zero row then adds nothing)
                last = shape_padleft(buf[steps] + last[-1])
            whole = concatenate([last, buf[steps + 1:]])
            _rebuild_readers(fgraph, out, whole, shape_i(buf, 0), node)
        elif out in reads:
            _rebuild_readers(fgraph, out, new.outputs[b.outer_output], steps + b.extent, node)
    for out, length in nit_full.items():
        j = next(j for j, v in enumerate(outer_outs) if v is out)
        _rebuild_readers(fgraph, out, new.outputs[j], minimum(length, steps), node)
    for old, nv in zip(outer_outs, new.outputs):
        if old not in reads:
            replace_checked(fgraph, old, nv, NAME, node)
    return True


@graph_pass(NAME)
def scan_save_mem(fgraph):
    """Shorten every scan output whose readers read only its last rows (module docstring)."""
    changed = False
    for node in list(fgraph.toposort()):
        if isinstance(node.op, Scan) and node.outputs[0] in fgraph.variables:
            changed |= _save_mem_node(fgraph, node)
    return changed
