"""Scan clean-ups: drop what the loop does not need, inline constants, merge repeated inputs.

* `scan_remove_unused`: an outer output nobody reads goes, with its inner
  output, unless a kept inner output reads its state (the needed states are
  found by a fixpoint over the recurrence: a kept output needs the inner
  inputs it depends on, and a needed state input keeps that state's outputs).
  Sequences and non-sequences that no kept inner output reads go too. The
  until condition and the outputs read outside are always kept.
* `scan_inline_constants`: a non-sequence whose outer value is a constant
  becomes that constant inside the step (constant folding can then use it).
* `scan_merge_inputs`: the same outer variable passed twice as a
  non-sequence, or twice as a sequence, is passed once.

Each is a node rewriter on `Scan`; the new node is built by `ScanArgs`.
"""
from __future__ import annotations

from ...graph.basic import Constant
from ...graph.rewriting import InToOut, node_rewriter
from ...graph.traversal import ancestors
from ..args import ScanArgs
from ..op import Scan

#: ScanArgs category of each `ScanInfo.entities` kind.
CATEGORY = {"seq": "seqs", "non_seq": "non_seqs", "mit_mot": "mit_mot", "mit_sot": "mit_sot",
            "sit_sot": "sit_sot", "nit_sot": "nit_sot", "shared": "shared"}


def rebuild(node, args):
    """(replacements of `node`'s outputs, the new node) for the layout `args` describes.

    Outputs `args` no longer lists are unused (the caller checked); outputs
    added to `args` (None there) are new and only reachable through the node.
    """
    new = args.make_node()
    return {old: out for old, out in zip(args.outer_outputs, new.outputs) if old is not None}, new


def _used(fgraph, var):
    return bool(fgraph.clients.get(var))


def needed_entities(fgraph, node):
    """Indices into ``info.entities`` of the loop variables the node's readers need."""
    op, info = node.op, node.op.info
    ents = info.entities
    inner_deps = {}  # inner output -> inner inputs it depends on

    def deps(o):
        if o not in inner_deps:
            inner_deps[o] = {i for i, v in enumerate(op.inner_inputs)
                             if v in _ancestor_set(op, o)}
        return inner_deps[o]

    needed_outs = set()
    if info.as_while:
        needed_outs.add(info.inner_out_until)
    keep = set()
    for e, (kind, _, _, outs, outer_out) in enumerate(ents):
        if outer_out >= 0 and _used(fgraph, node.outputs[outer_out]):
            keep.add(e)
            needed_outs.update(outs)
    while True:
        needed_ins = set().union(*(deps(o) for o in needed_outs)) if needed_outs else set()
        grew = False
        for e, (kind, _, ins, outs, _) in enumerate(ents):
            if e not in keep and needed_ins.intersection(ins):
                keep.add(e)
                if outs:
                    needed_outs.update(outs)
                    grew = True
        if not grew:
            return keep


def _ancestor_set(op, o):
    cache = op.__dict__.setdefault("_rw_ancestors", {})
    if o not in cache:
        cache[o] = set(ancestors([op.inner_outputs[o]], blockers=op.inner_inputs))
    return cache[o]


def _remove_entities(args, info, drop):
    """Remove the entities `drop` (indices into ``info.entities``) from `args`."""
    by_cat = {}
    counters = {}
    for e, ent in enumerate(info.entities):
        cat = CATEGORY[ent[0]]
        k = counters.get(cat, 0)
        counters[cat] = k + 1
        if e in drop:
            by_cat.setdefault(cat, []).append(k)
    for cat, ks in by_cat.items():
        for k in sorted(ks, reverse=True):
            args.remove(cat, k)


@node_rewriter([Scan])
def scan_remove_unused(fgraph, node):
    """Drop outputs nobody reads and inputs no kept output needs."""
    info = node.op.info
    if not any(_used(fgraph, v) for v in node.outputs):
        return None
    keep = needed_entities(fgraph, node)
    drop = set(range(len(info.entities))) - keep
    if not drop:
        return None
    args = ScanArgs.from_node(node)
    _remove_entities(args, info, drop)
    return rebuild(node, args)[0]


@node_rewriter([Scan])
def scan_inline_constants(fgraph, node):
    """Put constant non-sequences into the step graph."""
    args = ScanArgs.from_node(node)
    consts = [k for k, v in enumerate(args.outer_in_non_seqs) if isinstance(v, Constant)]
    if not consts:
        return None
    args.replace_inner({args.inner_in_non_seqs[k]: args.outer_in_non_seqs[k].clone()
                        for k in consts})
    for k in reversed(consts):
        args.remove("non_seqs", k)
    return rebuild(node, args)[0]


@node_rewriter([Scan])
def scan_merge_inputs(fgraph, node):
    """Pass an outer variable given twice as a non-sequence (or sequence) once."""
    args = ScanArgs.from_node(node)
    mapping = {}
    for cat, outer, inner in (("non_seqs", args.outer_in_non_seqs, args.inner_in_non_seqs),
                              ("seqs", args.outer_in_seqs, args.inner_in_seqs)):
        first, dups = {}, []
        for k, v in enumerate(outer):
            if v in first and inner[k].type == inner[first[v]].type:
                mapping[inner[k]] = inner[first[v]]
                dups.append(k)
            else:
                first.setdefault(v, k)
        if dups:
            args.replace_inner({inner[k]: mapping[inner[k]] for k in dups})
            for k in reversed(dups):
                args.remove(cat, k)
    if not mapping:
        return None
    return rebuild(node, args)[0]


scan_remove_unused_pass = InToOut([scan_remove_unused], name="scan_remove_unused")
scan_inline_constants_pass = InToOut([scan_inline_constants], name="scan_inline_constants")
scan_merge_inputs_pass = InToOut([scan_merge_inputs], name="scan_merge_inputs")
