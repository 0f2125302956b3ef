"""The gradient of a Scan: an ordinary Scan running over the forward steps in reverse.

Backpropagation through time, built symbolically. ``Scan.L_op`` calls
`scan_grad`, which differentiates the step graph once (a vector-Jacobian
product of one step) and wraps it in a new `Scan` whose step ``s`` undoes
forward step ``t = E - 1 - s`` (E = steps the forward loop executed). That
backward loop is an ordinary Scan, so the numba lowering runs it like any
other loop, and its own gradient (second order) follows by the same rule.

The backward loop, in the categories of `ScanInfo`::

    forward                          backward
    -------                          --------
    sequence x, row t          ->    sequence x[start:E][::-1]      (values)
                                     nit_sot g_x, row s             (gradient)
    state (mit_mot / mit_sot /       mit_mot over the reversed cotangent window
      sit_sot), taps k           ->    in-taps: -k of every out-tap (its cotangent),
                                       -k of every in-tap not overwritten (a running sum);
                                       out-taps: -k of every in-tap (+ zeros on a
                                       mit_mot slot the step overwrote without reading)
                                     + sequences of the stored rows the step read
    nit_sot y, row t           ->    sequence g_y[start:E][::-1]   (its cotangent)
    non-sequence w             ->    non-sequence w (value), sit_sot g_w (running sum)

A sit_sot becomes the mit_mot with in-taps (0, 1) and out-tap (1,); a mit_sot
with taps (-3, -1) becomes in-taps (0, 3, 1), out-taps (3, 1): at backward
step s, row s holds the finished cotangent of the state forward step t
wrote, and rows s+3 and s+1 (the states step t read) receive their share.

The stages build it, in this order (1-3 in `grad_step.py`, 10 in
`grad_outer.py`), each with a diagram of the layout it consumes and produces:
`_window` (which steps), `_active_states` (which states carry a cotangent),
`_differentiate_step` and `_simplify_step` (the step's vector-Jacobian
product), `_reuse_stored_values` and `_cheap_shape_references` (read stored
rows instead of recomputing), `_feed_forward_values` and `_record_values`
(where every forward value the backward step reads comes from),
`_state_mit_mots`, `_nit_sot_cotangents`, `_sequence_nit_sots`,
`_non_sequence_sit_sots` (the backward loop's variables),
`_remove_unused_inputs` (clean-up) and `_outer_gradients` (back to the forward
layout). docs/scan-gradient.md explains the semantics.

Semantics. ``truncate_gradient=k`` runs the backward loop over the last k
executed steps only (Theano/PyTensor: earlier steps are not backpropagated,
their sequence rows and cotangents contribute nothing). An ``until`` loop is
differentiated over exactly the steps it executed, read from its step-count
output. A float shared variable updated by the step (``shared_outs``) that a
cotangent reaches is differentiated as the sit_sot it is (`grad_shared.py`);
values derived from the others (e.g. random draws) are recorded by an
augmented forward scan rather than recomputed from the wrong state. A
state's initial value that no step reads, and whose initial rows the cost
does not read either (`scan` returns only the computed rows), is
disconnected (`known_zero.py`), as in Theano.

References: Werbos, "Backpropagation through time: what it does and how to
do it" (1990); Theano's ``Scan.L_op`` (mit_mot cotangent buffers);
JAX ``lax.scan`` transpose (the gradient of a loop is a loop).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..graph.basic import Constant
from ..graph.traversal import ancestors, graph_inputs, toposort
from .grad_outer import _outer_gradients
from .grad_shared import grad_with_shared_as_states, shared_states_carrying
from .grad_step import (_Step, _Window, _active_states, _differentiate_step, _has_cotangent,
                        _placeholder, _shift, _simplify, _window)


def scan_grad(op, inputs, outputs, output_grads):
    """One gradient per outer input of the Scan node computing `outputs` (see the module)."""
    node = outputs[0].owner
    carrying_shared = shared_states_carrying(node, output_grads)
    if carrying_shared:
        return grad_with_shared_as_states(node, output_grads, carrying_shared, scan_grad)
    window = _window(node)
    active, carrying = _active_states(node, output_grads)
    step = _differentiate_step(op, active, carrying)
    if not step.contrib and not step.undefined:
        return _outer_gradients(node, output_grads, window, step, None, {})
    bw = _Backward(node, window, step)
    _reuse_stored_values(bw)
    _cheap_shape_references(bw)
    _feed_forward_values(bw)
    _state_mit_mots(bw, output_grads, active)
    _nit_sot_cotangents(bw, output_grads)
    _sequence_nit_sots(bw)
    _non_sequence_sit_sots(bw)
    _remove_unused_inputs(bw.args)
    results = bw.build()
    return _outer_gradients(node, output_grads, window, step, bw, results)


# -- small helpers ----------------------------------------------------------------------
def _rows(x, lo, hi):
    """Rows lo..hi-1 of `x`, last first: the backward loop reads them in step order."""
    return x[lo:hi][::-1]


def _scan_args_class():
    from .args import ScanArgs   # args.py imports the op, which imports this module

    return ScanArgs


def _substitute(outputs, mapping):
    """`outputs` with each key of `mapping` replaced by its value.

    Unlike `clone_replace`, nodes that do not depend on a replaced variable
    are kept (not copied), so later stages can still tell forward variables
    from the nodes the derivative added.
    """
    memo = dict(mapping)
    for node in toposort(outputs, blockers=set(mapping)):
        if any(i in memo for i in node.inputs):
            new_inputs = [memo.get(i, i) for i in node.inputs]
            strict = all(a.type == b.type for a, b in zip(node.inputs, new_inputs))
            new = node.clone_with_new_inputs(new_inputs, strict=strict)
            memo.update(zip(node.outputs, new.outputs))
    return [memo.get(v, v) for v in outputs]



# -- the backward loop under construction --------------------------------------------------
@dataclass
class _Backward:
    """The backward Scan being assembled.

    ``args`` (a `ScanArgs`) collects the backward loop's variables category by
    category; ``contrib`` are the step's contributions (forward inner input
    index -> variable), rewritten stage by stage until they read only
    backward inner inputs; ``outputs`` says where each gradient comes out:
    ("seq", k) / ("non_seq", k) / ("state", s) -> entry of its category.
    """

    node: object
    window: _Window
    step: _Step
    args: object = field(default_factory=lambda: _scan_args_class()())
    contrib: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)

    def __post_init__(self):
        self.contrib = dict(self.step.contrib)
        self.args.n_steps = self.window.steps
        name = self.node.op.info.name
        self.args.name = f"grad of {name}" if name else "grad of scan"

    def add_sequence(self, inner, outer, origin=None):
        self.args.outer_in_seqs.append(outer)
        self.args.inner_in_seqs.append(inner)
        self.args.seq_origins.append(origin)

    def forward_origin(self, j):
        """The origin of a backward sequence cut from the forward's outer sequence `j`:
        the user's name and taps, checked against n_steps only (offset None)."""
        origins = self.node.op.seq_origins
        o = origins[j] if origins else None
        return None if o is None else o._replace(offset=None)

    def add_non_sequence(self, inner, outer):
        self.args.outer_in_non_seqs.append(outer)
        self.args.inner_in_non_seqs.append(inner)

    def rewrite_contributions(self, mapping):
        keys = list(self.contrib)
        new = _substitute([self.contrib[k] for k in keys], mapping)
        self.contrib = dict(zip(keys, new))

    def build(self):
        node = self.args.make_node()
        return node.outputs


# -- stage 4: stored rows instead of recomputation ------------------------------------------
def _reuse_stored_values(bw):
    """Replace each forward inner output the contributions recompute by its stored row.

    ::

        before:  contrib = f(..., y_o(x), ...)        y_o recomputed from the taps
        after:   contrib = f(..., p_o, ...)           p_o a backward sequence:
                   mit_sot / sit_sot (depth d)   out[start+d : E+d][::-1]
                   nit_sot kept for every step   out[start : E][::-1]
                   mit_mot, lowest out-tap k     out[start+k-lo : E+k-lo][::-1]

    (A mit_mot row written by a higher out-tap may be overwritten by a later
    step, so only the lowest out-tap's rows are final.)
    """
    node, w = bw.node, bw.window
    op, info = node.op, node.op.info
    used = set(ancestors(list(bw.contrib.values())))
    stored = {}
    for b in info.buffers:
        out = node.outputs[b.outer_output]
        taps = info.mit_mot_out_slices[b.index] if b.kind == "mit_mot" else (0,)
        for o, off, k in zip(b.inner_outputs, b.out_offsets, taps):
            if b.kind != "mit_mot" or k == min(taps):
                stored.setdefault(o, _rows(out, _shift(w.start, off), _shift(w.executed, off)))
    for k, o in enumerate(info.inner_out_nit_sot):
        if node.inputs[info.outer_in_nit_sot[k]] is node.inputs[0]:
            out = node.outputs[info.outer_out_nit_sot[k]]
            stored.setdefault(o, _rows(out, w.start, w.executed))
    mapping = {}
    for o, source in stored.items():
        y = bw.step.outputs[o]
        if y in used and y.owner is not None and y not in mapping:
            mapping[y] = _placeholder(y.type, f"stored {op.label_of_output(o)}")
            bw.add_sequence(mapping[y], source)
    if mapping:
        bw.rewrite_contributions(mapping)


def _cheap_shape_references(bw):
    """Let unbroadcasts read a forward intermediate's shape without recomputing it.

    ::

        before: SumTo(g, Shape_i(W @ h, 0))     (only the shape of W @ h is read)
        after:  SumTo(g, Shape_i(W, 0))         (sizes inferred from the step's inputs)

    Runs after `_reuse_stored_values`, once the stored rows have replaced the
    values the derivative reads, then simplifies again (in place: every node
    here is this module's copy).
    """
    from ..tensor.basic import alloc
    from ..tensor.shape import shape_tuple
    from .utils import infer_shapes

    contribs = list(bw.contrib.values())
    forward = set(ancestors(bw.step.outputs))
    values = _value_uses(contribs)
    refs = []
    for n in toposort(contribs):
        ref = n.inputs[0] if type(n.op).__name__ in ("Shape", "Shape_i") else None
        if ref is not None and ref.owner is not None and ref in forward and ref not in values:
            refs.append(ref)
    refs = list(dict.fromkeys(refs))
    if not refs:
        return
    ins = bw.step.inputs
    sizes = infer_shapes(ins, refs, [shape_tuple(v) if hasattr(v.type, "ndim") else None
                                     for v in ins])
    mapping = {r: alloc(np.asarray(0, dtype=r.dtype), *size) for r, size in zip(refs, sizes)}
    bw.rewrite_contributions(mapping)
    keys, n_c = list(bw.contrib), len(bw.contrib)
    outputs = [bw.contrib[k] for k in keys] + bw.step.outputs
    inputs = [v for v in graph_inputs(outputs) if not isinstance(v, Constant)]
    _, outs = _simplify(inputs, outputs, clone=False)
    bw.contrib = dict(zip(keys, outs[:n_c]))
    bw.step.outputs = outs[n_c:]


# -- stage 5: forward values the backward step reads ----------------------------------------
_SHAPE_ONLY = {("Shape", None), ("Shape_i", None)}


def _value_uses(contribs):
    """Variables whose values (not only their shapes) the graph of `contribs` reads."""
    used = set(contribs)
    for n in reversed(toposort(contribs)):
        if not any(o in used for o in n.outputs):
            continue
        name = type(n.op).__name__
        for pos, v in enumerate(n.inputs):
            if (name, None) not in _SHAPE_ONLY and (name, pos) not in _SHAPE_ONLY:
                used.add(v)
    return used


def _mit_mot_tap_source(node, b, k, w):
    """Where the value mit_mot `b` tap `k` had at step t is kept, or None.

    Row r = t + k - lo is written by steps t + k - k' (k' an out-tap). If no
    out-tap exceeds k, no step before t wrote r: the input buffer holds the
    value. If every out-tap exceeds k, no step from t on writes r: the output
    buffer does. Otherwise the value was transient.
    """
    info = node.op.info
    outs = info.mit_mot_out_slices[b.index]
    off = k - info.mit_mot_bounds(b.index)[0]
    if all(j <= k for j in outs):
        return _rows(node.inputs[b.outer_input], _shift(w.start, off), _shift(w.executed, off))
    if all(j > k for j in outs):
        return _rows(node.outputs[b.outer_output], _shift(w.start, off), _shift(w.executed, off))
    return None


def _feed_forward_values(bw):
    """Give every forward variable the contributions read a backward inner input.

    ::

        forward inner input         backward input (at step s, forward step t)
        sequence k          ->      sequence  x_k[start:E][::-1]
        mit_sot/sit_sot tap ->      sequence  out[start+off : E+off][::-1]   (stored rows)
        mit_mot tap         ->      sequence  of the input or output buffer (see
                                    `_mit_mot_tap_source`), else recorded
        non-sequence        ->      non-sequence, same outer value
        shared state        ->      recorded (`_record_values`); its initial value
                                    when only its shape is read

    Values not kept by the forward loop are recorded by `_record_values`.
    """
    node, w = bw.node, bw.window
    info = node.op.info
    kind = {}
    for ent in info.entities:
        for i in ent[2]:
            kind[i] = ent
    position = {v: i for i, v in enumerate(bw.step.inputs)}
    values = _value_uses(list(bw.contrib.values()))
    missing, shape_only = [], {}
    for v in graph_inputs(list(bw.contrib.values())):
        i = position.get(v)
        if i is None:
            continue   # a constant or a placeholder of an earlier stage
        ent = kind[i]
        if ent[0] == "seq":
            j = info.outer_in_seqs.index(ent[1])
            bw.add_sequence(v, _rows(node.inputs[ent[1]], w.start, w.executed),
                            bw.forward_origin(j))
        elif ent[0] == "non_seq":
            bw.add_non_sequence(v, node.inputs[ent[1]])
        elif ent[0] in ("mit_sot", "sit_sot"):
            b = next(b for b in info.buffers if b.outer_input == ent[1])
            off = b.in_offsets[b.inner_inputs.index(i)]
            bw.add_sequence(v, _rows(node.outputs[b.outer_output], _shift(w.start, off),
                                     _shift(w.executed, off)))
        else:
            _feed_transient(bw, v, i, ent, v in values, missing, shape_only)
    if shape_only:
        bw.rewrite_contributions(shape_only)
    if missing:
        _record_values(bw, missing)


def _feed_transient(bw, v, i, ent, value_read, missing, shape_only):
    """A mit_mot tap or shared state: kept rows, a same-shaped stand-in, or recorded."""
    node, w = bw.node, bw.window
    info = node.op.info
    source = None
    if ent[0] == "mit_mot":
        b = next(b for b in info.buffers if b.outer_input == ent[1])
        k = info.mit_mot_in_slices[b.index][b.inner_inputs.index(i)]
        source = _mit_mot_tap_source(node, b, k, w)
        if source is not None:
            bw.add_sequence(v, source)
            return
        if not value_read:   # any row of the buffer has the shape of this one
            off = b.in_offsets[b.inner_inputs.index(i)]
            stand_in = _placeholder(v.type, f"shape of {v}")
            shape_only[v] = stand_in
            bw.add_sequence(stand_in, _rows(node.inputs[ent[1]], _shift(w.start, off),
                                            _shift(w.executed, off)))
            return
    elif not value_read:
        stand_in = _placeholder(v.type, f"shape of {v}")
        shape_only[v] = stand_in
        bw.add_non_sequence(stand_in, node.inputs[ent[1]])
        return
    missing.append(v)


# -- stage 6: recording values the forward loop did not keep ------------------------------
def _record_values(bw, missing):
    """Record, with an augmented forward scan, the values derived from transient inputs.

    ::

        transient inputs m (shared states, overwritten mit_mot taps) whose values
        the contributions read; the frontier F = forward variables computed from m
        and read by a node of the derivative (or returned by it)

        forward scan  + nit_sot F (one row per step)       (same inputs, same steps)
        backward      contrib(F -> p_F), p_F a sequence rec_F[start:E][::-1]

    The augmented scan repeats the forward computation (random draws included:
    it starts from the same shared states), so it is used only when needed.
    """
    from ..tensor.basic import tensor_copy

    node, w, step = bw.node, bw.window, bw.step
    op = node.op
    forward = set(ancestors(step.outputs)) | set(step.inputs)
    contribs = list(bw.contrib.values())
    dep = set(missing)
    frontier = []
    for n in toposort(contribs):
        if any(v in dep for v in n.inputs):
            dep.update(n.outputs)
        if n.outputs[0] not in forward:
            frontier += [v for v in n.inputs if v in dep and v in forward]
    frontier += [v for v in contribs if v in dep and v in forward]
    frontier = list(dict.fromkeys(frontier))
    for v in frontier:
        if not hasattr(v.type, "dtype"):
            raise NotImplementedError(
                f"{op.info.label}: the gradient needs {v.describe()} at every step, a "
                f"{v.type} that the loop updates and does not keep; compute it outside the "
                f"loop and pass it as a sequence")
    args = _scan_args_class().from_node(node)
    on_original = _substitute(frontier, dict(zip(step.inputs, op.inner_inputs)))
    for v in on_original:
        # A copy: a row view of a state would change when the step writes that row.
        v = tensor_copy(v)
        args.outer_in_nit_sot.append(node.inputs[0])
        args.inner_out_nit_sot.append(v)
        args.outer_out_nit_sot.append(None)
        args.labels[v] = f"recorded {v}"
    augmented = args.make_node()
    nits = augmented.op.info.outer_out_nit_sot
    mapping = {}
    for v, j in zip(frontier, nits[len(nits) - len(frontier):]):
        mapping[v] = _placeholder(v.type, f"recorded {v}")
        bw.add_sequence(mapping[v], _rows(augmented.outputs[j], w.start, w.executed))
    bw.rewrite_contributions(mapping)


# -- stage 7: one mit_mot per forward state --------------------------------------------------
def _state_taps(info, b):
    """(kind, in-taps I, out-taps O) of forward state `b`, a mit_sot seen as a mit_mot."""
    if b.kind == "mit_mot":
        return info.mit_mot_in_slices[b.index], info.mit_mot_out_slices[b.index]
    if b.kind == "mit_sot":
        return info.mit_sot_in_slices[b.index], (0,)
    return (-1,), (0,)


def _state_mit_mots(bw, output_grads, active):
    """A backward mit_mot per active forward state, over its reversed cotangent window.

    ::

        forward state, taps I (read), O (written), extent X = max - min of I u O
          outer output rows  [start, E+X)   window the last B steps touch
        backward mit_mot buffer = cotangent rows [start, E+X) reversed
          in-taps   -k (k in O): cotangent g_k of what step t wrote at tap k
                    -k (k in I, not in O): running sum a_k of tap k's cotangent
          out-taps  -k (k in I):  a_k + contrib_k   (k in O too: contrib_k alone:
                                  the step overwrote that slot after reading it)
                    -k (k in O, not in I; mit_mot only): zeros (overwritten, unread)
    """
    from ..tensor.basic import tensor_copy, zeros_like

    node, w = bw.node, bw.window
    op, info = node.op, node.op.info
    for s in sorted(active):
        b = info.buffers[s]
        ins, outs = _state_taps(info, b)
        tap_in = dict(zip(ins, b.inner_inputs))
        g = {k: bw.step.cotangent.get(o) for k, o in zip(outs, b.inner_outputs)}
        in_vars, in_taps = [], []
        for k in outs:
            g[k] = g[k] if g[k] is not None else _placeholder(
                bw.step.outputs[b.inner_outputs[outs.index(k)]].type, "unused cotangent")
            in_vars.append(g[k])
            in_taps.append(-k)
        acc = {}
        for k in ins:
            if k not in outs:
                acc[k] = _placeholder(bw.step.inputs[tap_in[k]].type, f"g_{b.kind} tap {k}")
                in_vars.append(acc[k])
                in_taps.append(-k)
        out_vars, out_taps = [], []
        for k in ins:
            c = bw.contrib.get(tap_in[k])
            if k in outs:
                value = tensor_copy(c) if c is not None else zeros_like(g[k])
            else:
                value = acc[k] if c is None else acc[k] + c
            out_vars.append(value)
            out_taps.append(-k)
        if b.kind == "mit_mot":
            for k in outs:
                if k not in ins:
                    out_vars.append(zeros_like(g[k]))
                    out_taps.append(-k)
        G = output_grads[b.outer_output]
        out = node.outputs[b.outer_output]
        full = G if _has_cotangent(G) else zeros_like(out)
        a = bw.args
        a.outer_in_mit_mot.append(_rows(full, w.start, _shift(w.executed, b.extent)))
        a.inner_in_mit_mot.append(in_vars)
        a.inner_out_mit_mot.append(out_vars)
        a.outer_out_mit_mot.append(None)
        a.mit_mot_in_slices.append(tuple(in_taps))
        a.mit_mot_out_slices.append(tuple(out_taps))
        for v in out_vars:
            a.labels[v] = f"the gradient of {op.label_of_output(b.inner_outputs[0])}"
        bw.outputs[("state", s)] = len(a.outer_in_mit_mot) - 1


# -- stage 8: sequences and non-sequences ------------------------------------------------------
def _sequence_nit_sots(bw):
    """A nit_sot per forward sequence: its gradient row at each backward step.

    ::

        forward sequence k, row t      ->   backward nit_sot g_x_k, row s = E-1-t
        outer: zeros like x_k, rows [start, E) = g_x_k[::-1]      (other rows: zero)
    """
    from ..tensor.basic import tensor_copy

    info = bw.node.op.info
    a = bw.args
    rows = {v for group, ins, outs in zip(a.inner_in_mit_mot, a.mit_mot_in_slices,
                                          a.mit_mot_out_slices)
            for v, k in zip(group, ins) if k in outs}     # rows the step also writes
    for k, i in enumerate(info.inner_in_seqs):
        c = bw.contrib.get(i)
        if c is None:
            continue
        if _views_one_of(c, rows):   # nit_sots are written after the step's mit_mot rows
            c = tensor_copy(c)
        a.outer_in_nit_sot.append(bw.window.steps)
        a.inner_out_nit_sot.append(c)
        a.outer_out_nit_sot.append(None)
        a.labels[c] = f"the gradient of sequence {k} of {info.label}"
        bw.outputs[("seq", k)] = len(a.outer_in_nit_sot) - 1


_VIEWS = ("DimShuffle", "Subtensor", "Reshape", "SumTo")


def _views_one_of(v, inputs):
    """Whether `v` may share memory with one of `inputs` (it is one, or a view of one)."""
    while v not in inputs:
        if v.owner is None or type(v.owner.op).__name__ not in _VIEWS:
            return False
        v = v.owner.inputs[0]
    return True


def _nit_sot_cotangents(bw, output_grads):
    """Each nit_sot cotangent becomes a backward sequence.

    ::

        forward nit_sot y (keeps its last min(len, E) rows)  ->  cotangent g_y
        backward sequence  pad(g_y)[start:E][::-1]       (pad: zero rows in front
                                                          up to E when len < E)
    """
    from ..tensor.basic import alloc, concatenate
    from ..tensor.shape import shape_tuple

    node, w = bw.node, bw.window
    info = node.op.info
    for k, o in enumerate(info.inner_out_nit_sot):
        g = bw.step.cotangent.get(o)
        if g is None:
            continue
        G = output_grads[info.outer_out_nit_sot[k]]
        if node.inputs[info.outer_in_nit_sot[k]] is not node.inputs[0]:
            size = shape_tuple(G)
            pad = alloc(np.asarray(0, dtype=G.dtype), w.executed - size[0], *size[1:])
            G = concatenate([pad, G])
        bw.add_sequence(g, _rows(G, w.start, w.executed))


def _non_sequence_sit_sots(bw):
    """A sit_sot per forward non-sequence: the running sum of its gradient.

    ::

        forward non-sequence w   ->   backward sit_sot a_w, initial zeros,
                                      a_w <- a_w + contrib_w at each step;
                                      the gradient is its last row
    """
    from ..tensor.basic import zeros_like
    from ..tensor.shape import shape_padleft

    node = bw.node
    info = node.op.info
    a = bw.args
    for k, i in enumerate(info.inner_in_non_seqs):
        c = bw.contrib.get(i)
        if c is None:
            continue
        v = bw.step.inputs[i]
        acc = _placeholder(v.type, f"g_{v}")
        a.outer_in_sit_sot.append(shape_padleft(zeros_like(node.inputs[info.outer_in_non_seqs[k]])))
        a.inner_in_sit_sot.append(acc)
        a.inner_out_sit_sot.append(acc + c)
        a.outer_out_sit_sot.append(None)
        a.labels[a.inner_out_sit_sot[-1]] = f"the gradient of non-sequence {k} of {info.label}"
        bw.outputs[("non_seq", k)] = len(a.outer_in_sit_sot) - 1


# -- stage 9: clean-up -------------------------------------------------------------------------
def _remove_unused_inputs(args):
    """Drop sequences, non-sequences and mit_mot in-taps no inner output reads.

    ::

        before: inner inputs as the stages added them (some read only by
                contributions that turned out disconnected)
        after:  only inner inputs some inner output depends on

    A mit_mot in-tap stays when dropping it would move the lowest or highest
    tap: the buffer's rows are laid out from those.
    """
    used = set(ancestors(args.inner_outputs))
    for cat, inner in (("seqs", args.inner_in_seqs), ("non_seqs", args.inner_in_non_seqs)):
        for j in reversed(range(len(inner))):
            if inner[j] not in used:
                args.remove(cat, j)
    for j, taps in enumerate(args.mit_mot_in_slices):
        outs = args.mit_mot_out_slices[j]
        bounds = (min(taps + outs), max(taps + outs))
        keep = list(range(len(taps)))
        for n in range(len(taps)):
            rest = [taps[m] for m in keep if m != n] + list(outs)
            if args.inner_in_mit_mot[j][n] not in used and (min(rest), max(rest)) == bounds:
                keep.remove(n)
        args.inner_in_mit_mot[j] = [args.inner_in_mit_mot[j][n] for n in keep]
        args.mit_mot_in_slices[j] = tuple(taps[n] for n in keep)
