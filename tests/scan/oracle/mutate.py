"""Broken versions of the rewrite passes, made in the test harness (monkeypatching).

`tracking()` records which passes of `bptt.compile.passes.pm` edit a graph
(`FunctionGraph.change_input`, through which every replacement goes) while a
function is compiled; `corrupting(name)` makes pass `name` wrong: every value
it puts into a graph (outer or step graph) is off by a little (floats + 1e-3,
integers + 1). A pass the oracle's programs make fire, and whose results reach
an output or a gradient, must then show as a mismatch. `TARGETED` holds
mutations of a pass's own logic (a bug it could really have).
"""
from __future__ import annotations

import contextlib

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

    keep = pushout._stack_elemwise
    pushout._stack_elemwise = old
    try:
        yield
    finally:
        pushout._stack_elemwise = keep


TARGETED = {"scan_pushout_seqs": pushout_seqs_rank_bug}
