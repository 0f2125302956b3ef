"""Broken versions of the rewrite passes, made in the test harness (monkeypatching).

`tracking()` records which passes of `bptt.compile.passes.pm` edit a graph
(`FunctionGraph.change_input`, through which every replacement goes) while a
function is compiled; `corrupting(name)` makes pass `name` wrong: every value
it puts into a graph (outer or step graph) is off by a little (floats + 1e-3,
integers + 1). A pass the oracle's programs make fire, and whose results reach
an output or a gradient, must then show as a mismatch. `TARGETED` holds
mutations of a pass's own logic (a bug it could really have), each written
here by swapping a function of the pass's module, never in bptt/.
`mutations(name)` lists both kinds for a pass (turned on first when it is off
by default: `ENABLING`); `caught` says whether a program shows one.
"""
from __future__ import annotations

import contextlib
import functools
import importlib

import numpy as np

import bptt.tensor as T
from bptt.compile.passes import pm
from bptt.graph.fg import FunctionGraph
from bptt.tensor.type import TensorType

_state = {"stack": [], "fired": None, "corrupt": None, "made": {}}


def _wrap(rw):
    apply = rw.apply

    def wrapped(fgraph, *a, **k):
        _state["stack"].append(rw.name)
        try:
            return apply(fgraph, *a, **k)
        finally:
            _state["stack"].pop()
    return wrapped


def _off(var):
    """`var` plus a small constant of its dtype (None: not a tensor it makes sense to shift)."""
    if not isinstance(var.type, TensorType) or var.type.dtype == "bool":
        return None
    made = _state["made"]
    if id(var) in made or any(var is v for v in made.values()):
        return made.get(id(var), var)
    delta = 1 if var.type.dtype[0] in "iu" else 1e-3
    out = T.add(var, T.constant(np.asarray(delta, dtype=var.type.dtype)))
    if out.type != var.type:
        return None
    made[id(var)] = out
    return out


@contextlib.contextmanager
def _patched():
    original = FunctionGraph.change_input
    seen = {}
    for rw, _ in pm.passes:
        if id(rw) not in seen:
            seen[id(rw)] = (rw, rw.__dict__.get("apply"))
            rw.apply = _wrap(rw)

    def change_input(self, node, i, new_var):
        old = self.outputs[i] if node == "output" else node.inputs[i]
        stack = _state["stack"]
        if old is not new_var and stack:
            if _state["fired"] is not None:
                _state["fired"].add(stack[-1])
            if _state["corrupt"] in stack:
                bad = _off(new_var)
                if bad is not None and bad is not new_var:
                    new_var = bad
        return original(self, node, i, new_var)

    FunctionGraph.change_input = change_input
    try:
        yield
    finally:
        FunctionGraph.change_input = original
        for rw, apply in seen.values():
            if apply is None:
                del rw.apply
            else:
                rw.apply = apply


@contextlib.contextmanager
def tracking():
    """Yield the set of pass names that edit the graphs compiled inside the block."""
    fired = set()
    _state["fired"] = fired
    try:
        with _patched():
            yield fired
    finally:
        _state["fired"] = None


@contextlib.contextmanager
def corrupting(name):
    """Pass `name` (every entry of that name) puts slightly wrong values into graphs."""
    _state["corrupt"], _state["made"] = name, {}
    try:
        with _patched():
            yield
    finally:
        _state["corrupt"], _state["made"] = None, {}


# -- targeted mutations --------------------------------------------------------------------
@contextlib.contextmanager
def pushout_seqs_rank_bug():
    """scan_pushout_seqs as before its rank fix: a stacked operand of lower rank is aligned
    on the right, so the time axis pairs with a row axis (issue 20 bug (b))."""
    from bptt.scan.rewriting import pushout
    from bptt.tensor.shape import dimshuffle

    def old(n, stacked, outer_inv):
        nd = n.outputs[0].ndim + 1
        ins = []
        for i in n.inputs:
            if i in stacked:
                ins.append(stacked[i])
            else:
                x = outer_inv(i)
                ins.append(dimshuffle(x, ("x",) * (nd - x.ndim) + tuple(range(x.ndim))))
        return n.op(*ins)

    from bptt.tensor.elemwise import Elemwise

    keep = pushout._STACKERS[Elemwise]
    pushout._STACKERS[Elemwise] = old
    try:
        yield
    finally:
        pushout._STACKERS[Elemwise] = keep


@contextlib.contextmanager
def _swapped(module, name, make):
    """`module.name` replaced by ``make(original)`` inside the block."""
    module = importlib.import_module(module)
    keep = getattr(module, name)
    setattr(module, name, make(keep))
    try:
        yield
    finally:
        setattr(module, name, keep)


@contextlib.contextmanager
def invariant_nit_sot_one_row_short():
    """scan_pushout_invariant_nit_sots: the repeated value gets n_steps - 1 rows, an
    off-by-one in the length of the alloc that replaces the nit_sot."""
    from bptt.scan.rewriting import pushout
    from bptt.tensor import basic

    rewriter = pushout.scan_pushout_invariant_nit_sots
    original = rewriter.fn

    def short_alloc(value, n, *shape):
        return basic.Alloc()(value, n - 1, *shape)

    def fn(fgraph, node):
        keep, basic.alloc = basic.alloc, short_alloc
        try:
            return original(fgraph, node)
        finally:
            basic.alloc = keep

    rewriter.fn = fn
    try:
        yield
    finally:
        rewriter.fn = original


def _merge_inputs_by_type(fgraph, node):
    """`basic.scan_merge_inputs` keying the inputs by type instead of identity."""
    from bptt.scan.args import ScanArgs
    from bptt.scan.rewriting.basic import rebuild

    args = ScanArgs.from_node(node)
    mapping = {}
    for cat, outer, inner in (("non_seqs", args.outer_in_non_seqs, args.inner_in_non_seqs),
                              ("seqs", args.outer_in_seqs, args.inner_in_seqs)):
        first, dups = {}, []
        for k, v in enumerate(outer):
            key = v.type     # the bug: two different values of one type are "the same"
            if key in first and inner[k].type == inner[first[key]].type:
                mapping[inner[k]] = inner[first[key]]
                dups.append(k)
            else:
                first.setdefault(key, k)
        if dups:
            args.replace_inner({inner[k]: mapping[inner[k]] for k in dups})
            for k in reversed(dups):
                args.remove(cat, k)
    if not mapping:
        return None
    return rebuild(node, args)[0]


@contextlib.contextmanager
def merge_inputs_by_type():
    """scan_merge_inputs: inputs compared by type, not identity, so two different
    non-sequences (or sequences) of one type are passed as one."""
    from bptt.scan.rewriting import basic

    rewriter, original = basic.scan_merge_inputs, basic.scan_merge_inputs.fn
    rewriter.fn = _merge_inputs_by_type
    try:
        yield
    finally:
        rewriter.fn = original


def fill_rows_of_zeros():
    """scan_fill_sequences: the row is filled with zeros, not with the fill's value (as if
    every fill were the zeros cotangent of a state nobody reads)."""
    def make(fill_source):
        def wrong(v):
            src = fill_source(v)
            return None if src is None else (T.zeros_like(src[0]), src[1], src[2])
        return wrong
    return _swapped("bptt.scan.rewriting.fill", "fill_source", make)


def merge_outputs_by_length():
    """scan_merge_outputs: nit_sots are grouped by their length only, not by the value they
    store, so different outputs of one length are stored once."""
    def make(_nit_groups):
        def wrong(args):
            groups = {}
            for k, length in enumerate(args.outer_in_nit_sot):
                groups.setdefault(length, []).append((k, None))
            return [(members[0][0], args.inner_out_nit_sot[members[0][0]], members)
                    for members in groups.values() if len(members) > 1]
        return wrong
    return _swapped("bptt.scan.rewriting.merge", "_nit_groups", make)


def join_fill_one_row_short():
    """scan_read_through_join: J's fill is taken to be one row shorter than it is (k - 1
    rows), so the last fill row is read as P's row."""
    def make(zeros_then_rows):
        def wrong(fgraph, j):
            src = zeros_then_rows(fgraph, j)
            return src if src is None or src.k < 1 else src._replace(k=src.k - 1)
        return wrong
    return _swapped("bptt.scan.rewriting.join_rows", "_zeros_then_rows", make)


@contextlib.contextmanager
def dead_code_missing_last_output():
    """remove_dead_code: the live nodes are found from every output but the last (an
    off-by-one in the outputs' slice), so the nodes only the last output needs are removed."""
    from bptt.tensor.rewriting import remove_dead_code

    original = remove_dead_code.fn

    def fn(fgraph):
        outputs = fgraph.outputs
        fgraph.outputs = outputs[:-1]
        try:
            return original(fgraph)
        finally:
            fgraph.outputs = outputs

    remove_dead_code.fn = fn
    try:
        yield
    finally:
        remove_dead_code.fn = original


def rows_state_buffer_shifted():
    """scan_pushout_rows and scan_state_rows: a state's buffer drops its last initial row
    and repeats its first computed one, an off-by-one in where the initial rows end."""
    def make(original):
        def buffer(node, args, kind, taps, y, init, rows):
            from bptt.tensor.basic import join
            from bptt.tensor.subtensor import getitem

            out, extent = original(node, args, kind, taps, y, init, rows)
            head = getitem(init, slice(None, extent - 1))
            return join(0, head, getitem(rows, slice(None, 1)), rows), extent
        return buffer
    return _swapped("bptt.scan.rewriting.pushout_rows", "_state_buffer", make)


def rows_reversed():
    """scan_pushout_rows: a nit_sot's stacked rows come out in reverse order, as if the
    sequence's direction were applied twice."""
    def make(original):
        def stack_of(y, stacked, inv, outer_inv, n_steps):
            from bptt.tensor.subtensor import getitem

            out = original(y, stacked, inv, outer_inv, n_steps)
            return None if out is None else getitem(out, slice(None, None, -1))
        return stack_of
    return _swapped("bptt.scan.rewriting.pushout_rows", "_stack_of", make)


TARGETED = {
    "scan_pushout_seqs": pushout_seqs_rank_bug,
    "scan_pushout_rows": rows_reversed,
    "scan_state_rows": rows_state_buffer_shifted,
    "scan_pushout_invariant_nit_sots": invariant_nit_sot_one_row_short,
    "scan_merge_inputs": merge_inputs_by_type,
    "scan_fill_sequences": fill_rows_of_zeros,
    "scan_merge_outputs": merge_outputs_by_length,
    "scan_read_through_join": join_fill_one_row_short,
    "remove_dead_code": dead_code_missing_last_output,
}
"""Pass name -> a context manager making that pass's targeted bug (its docstring's first
line names the pass and the bug)."""


@contextlib.contextmanager
def reuse_forward_on():
    """Run `scan_reuse_forward` with ``config.reuse_forward = True`` (every product value
    recorded, not only those "auto" finds worth it)."""
    from bptt.config import config

    keep, config.reuse_forward = config.reuse_forward, True
    try:
        yield
    finally:
        config.reuse_forward = keep


#: passes off by default -> the context manager turning them on
ENABLING = {}


def enabled(name):
    """A context in which pass `name` runs (it may be off by default: `ENABLING`)."""
    return ENABLING[name]() if name in ENABLING else contextlib.nullcontext()


def mutations(name):
    """[(kind, context manager factory)] breaking pass `name` (and turning it on when it is
    off by default): "corrupt" (`corrupting`) and, when `TARGETED` has one, "targeted"."""
    out = [("corrupt", functools.partial(corrupting, name))]
    if name in TARGETED:
        out.append(("targeted", TARGETED[name]))
    if name in ENABLING:
        out = [(kind, functools.partial(_both, name, make)) for kind, make in out]
    return out


@contextlib.contextmanager
def _both(name, make):
    with enabled(name), make():
        yield


def describe(make):
    """One line saying what the mutation `make` (an item of `mutations`) breaks."""
    if getattr(make, "func", None) is _both:
        make = make.args[1]
    if getattr(make, "func", None) is corrupting:
        return "every value it writes off by 1e-3 (floats) or 1 (integers)"
    return " ".join(make.__doc__.split()).split(":", 1)[1].split(". ")[0].strip().rstrip(".")


def caught(evaluation, reference, make):
    """True when `evaluation` (a `check.Evaluation`) run with the mutation `make` differs
    from `reference` (its rewrite-free result) or raises."""
    from .check import agree

    try:
        with make():
            got = evaluation.run()
    except Exception:  # noqa: BLE001 - a crash is a catch too
        return True
    return not agree(got, reference, evaluation.prog)
