"""The rewrite pipeline run on every compiled graph before linking.

This file is the one place that orders rewrites. Each entry says why it is
there, in the manner of numba's ``pm.add_pass(pass, "why")``. `run_passes`
applies them in order and, when ``config.check_ir`` is on (the test suite
turns it on), verifies the IR after every pass that changed the graph, so a
broken invariant is reported by the pass that broke it.
"""
from __future__ import annotations

from ..config import config
from ..graph.rewriting import Fixpoint, InToOut
from ..graph.verify import verify
from ..scan.rewriting.chunks import scan_chunk_accumulators_pass
from ..scan.rewriting.basic import (scan_inline_constants_pass, scan_merge_inputs_pass,
                                   scan_remove_unused_pass)
from ..scan.rewriting.fill import scan_fill_sequences_pass
from ..scan.rewriting.inner import ScanInnerRewrite
from ..scan.rewriting.pushout import (scan_pushout_accumulators_pass, scan_pushout_non_seqs_pass,
                                      scan_pushout_seqs_pass)
from ..scan.rewriting.pushout import scan_pushout_invariant_nit_sots_pass, scan_pushout_last_step_pass
from ..scan.rewriting.pushout_rows import scan_pushout_rows_pass, scan_state_rows_pass
from ..scan.rewriting.reuse import scan_reuse_forward
from ..scan.rewriting.merge import scan_merge, scan_merge_outputs_pass
from ..scan.rewriting.savemem import scan_save_mem
from ..scan.rewriting.inplace import scan_nit_sot_into_seq_pass
from ..scan.rewriting.seq_buffer import scan_seq_into_buffer_pass
from ..scan.rewriting.sum_layout import scan_sum_layout_pass
from ..scan.rewriting.product_seqs import scan_chunk_seq_products
from ..scan.rewriting.join_rows import scan_read_through_join_pass
from ..scan.rewriting.shapes import scan_step_shapes
from ..tensor.rewriting.blas import gemm_inplace_pass, gemm_pass
from ..tensor.rewriting.elemwise_reduce import reduce_of_elemwise
from ..tensor.rewriting.fusion import fuse_elemwise
from ..tensor.rewriting.inplace_elemwise import inplace_elemwise_pass
from ..tensor.rewriting.inplace_subtensor import inplace_inc_subtensor_pass
from ..tensor.rewriting.reorder import sequence_memory_pass
from ..tensor.rewriting import (canonical_rewriters, constant_folding, merge, remove_dead_code,
                                shape_rewriters)


class PassManager:
    """An ordered list of (graph rewriter, reason) entries."""

    def __init__(self):
        self.passes = []

    def add_pass(self, rewriter, why):
        self.passes.append((rewriter, why))

    def names(self):
        return [rw.name for rw, _ in self.passes]

    def run(self, fgraph, exclude=()):
        self.active_exclude = tuple(exclude)   # read by scan_inner for the step graphs
        fgraph.excluded_passes = self.active_exclude
        for rw, _ in self.passes:
            if rw.name in exclude:
                continue
            before = _fingerprint(fgraph) if config.check_ir else None
            rw.apply(fgraph)
            # A pass that left every node as it was cannot have broken an invariant; most
            # passes change nothing in most graphs, and `verify` rebuilds every node.
            if config.check_ir and not _same(before, _fingerprint(fgraph)):
                verify(fgraph, where=f"after rewrite pass {rw.name!r}")
        return fgraph

    def describe(self):
        """One line per pass: its name and why it runs."""
        return "\n".join(f"{rw.name:<26} {why}" for rw, why in self.passes)


def _fingerprint(fgraph):
    """Every node with its op and inputs, and the outputs: equal iff no pass changed the graph.

    Compared by identity (`_same`): hashing ops by their properties made this a tenth
    of the IR check's cost.
    """
    return ({node: (node.op, *node.inputs) for node in fgraph.apply_nodes},
            tuple(fgraph.outputs))


def _same(before, after):
    (nodes_a, outs_a), (nodes_b, outs_b) = before, after
    if len(nodes_a) != len(nodes_b) or len(outs_a) != len(outs_b) \
            or any(a is not b for a, b in zip(outs_a, outs_b)):
        return False
    for node, parts_a in nodes_a.items():
        parts_b = nodes_b.get(node)
        if parts_b is None or len(parts_a) != len(parts_b) \
                or any(a is not b for a, b in zip(parts_a, parts_b)):
            return False
    return True


# The gemm and fusion passes hide `add(z, dot)` from the scan push-outs: step graphs get them last.
_GEMM_PASSES = ("gemm", "gemm_inplace", "scan_inner_gemm", "fuse_elemwise", "reduce_of_elemwise",
                "scan_seq_into_buffer", "scan_nit_sot_into_seq", "scan_chunk_seq_products",
                "scan_sum_layout",
                "inplace_elemwise", "inplace_inc_subtensor")


def _run_without_gemm(fgraph):
    exclude = pm.active_exclude
    pm.run(fgraph, exclude + _GEMM_PASSES)
    pm.active_exclude = exclude


def _run_gemm_passes(fgraph):
    for rw, _ in pm.passes:
        if rw.name in _GEMM_PASSES and rw.name not in pm.active_exclude:
            rw.apply(fgraph)


pm = PassManager()
pm.add_pass(merge, "one node per value: later rewrites then see each repeated "
                   "subexpression once")
pm.add_pass(InToOut([constant_folding], name="constant_folding"),
            "compute constant subgraphs once at compile time instead of at every call")
pm.add_pass(Fixpoint([InToOut(shape_rewriters() + canonical_rewriters() + [constant_folding],
                              name="canonicalize_walk"), merge],
                     name="canonicalize"),
            "shrink gradient graphs: sizes from their sources, no x*1, x+0, -(-x), x**1, "
            "x**2 (x*x), switch on a constant, stacked views or sum_tos, casts, one zeros "
            "buffer for incs added up, or sum_to/broadcast_to/alloc that change nothing; "
            "constant factors multiplied (0.5 * (2.0 * h) is h), views of zeros are zeros, "
            "a whole write into zeros is its value, a sum over a length-1 axis a view, a "
            "reversed one-row axis or the row of a new axis the input")
pm.add_pass(scan_inline_constants_pass, "constant non-sequences folded into the step graph")
pm.add_pass(scan_merge_inputs_pass, "a value passed twice to a scan is passed once")
pm.add_pass(scan_remove_unused_pass, "scans compute only the outputs someone reads")
pm.add_pass(ScanInnerRewrite(lambda fg: _run_without_gemm(fg)),
            "step graphs get every rewrite the outer graph gets (recursively)")
pm.add_pass(scan_pushout_last_step_pass, "an output read only at [-1] is computed once after the "
                                          "loop (before seq push-out would stack all T rows)")
pm.add_pass(scan_reuse_forward, "a backward step reads the products its forward step computed "
                                "(recorded as a nit_sot) instead of recomputing them")
pm.add_pass(scan_pushout_non_seqs_pass, "loop-invariant step work runs once, before the loop")
pm.add_pass(scan_pushout_invariant_nit_sots_pass, "an output that is the same at every step is "
                                                  "its value repeated, outside the loop")
pm.add_pass(scan_pushout_rows_pass, "a loop whose every output is computed row by row from "
                                    "its sequences is whole-array operations (a map of x_t + 2)")
pm.add_pass(scan_state_rows_pass, "a state whose new value is computed from sequence rows is "
                                  "read as shifted views of its buffer (before seq push-out, "
                                  "which then moves products of it out)")
pm.add_pass(scan_pushout_seqs_pass, "per-step products of sequence rows become one product "
                                    "over all steps")
pm.add_pass(scan_pushout_accumulators_pass, "weight gradients summed over steps are one "
                                            "product over the stacked steps, after the loop")
pm.add_pass(scan_remove_unused_pass, "drop what the push-outs left unused")
pm.add_pass(merge, "one node per value for the work pushed out of loops")
pm.add_pass(scan_merge, "scans over the same steps that do not read each other are one loop "
                        "(after merge: their n_steps are one variable)")
pm.add_pass(scan_merge_outputs_pass, "outputs of a scan storing the same rows are stored once "
                                     "(a step cotangent read by several weight gradients)")
pm.add_pass(scan_step_shapes, "step graphs know the sizes their outer inputs prove equal "
                              "(after the push-outs made them sequences): no SumTo that "
                              "changes nothing")
pm.add_pass(scan_save_mem, "scan outputs read only at their last rows keep only those rows "
                           "(after merge: a ring scan no longer merges with its twin)")
pm.add_pass(scan_fill_sequences_pass, "a sequence that is one value everywhere is a row "
            "computed in the step (after save_mem: a state's zeros cotangent is one)")
pm.add_pass(sequence_memory_pass, "no T-long array kept alive by an empty join, added into a "
            "zeros copy, or copied reversed across the backward loop for a weight gradient")
pm.add_pass(scan_chunk_accumulators_pass, "weight gradients sum seq_t.T @ dpre_t in chunks of "
            "~256 stacked rows in the loop: GEMM-rate products without a T-long dpre (last "
            "of the scan passes that edit sequences: nit_sot_sums holds their indices)")
pm.add_pass(scan_read_through_join_pass, "a loop reads join(zeros, P[k:]) as P's rows (and a "
            "mask only where it reads fill rows too): no copy of the trace for the loss "
            "cotangent (after the chunk sums: a summed cotangent needs no rows of J)")
pm.add_pass(Fixpoint([InToOut(shape_rewriters() + canonical_rewriters() + [constant_folding],
                              name="canonicalize_walk"), merge], name="canonicalize"),
            "again: the push-outs add weight gradients to views of zeros (zeros + dot is dot)")
pm.add_pass(gemm_pass, "z + dot(x, y) is one BLAS gemm call: no temporary for the product")
pm.add_pass(fuse_elemwise, "a chain of elementwise ops is one loop without temporaries")
pm.add_pass(InToOut([reduce_of_elemwise], name="reduce_of_elemwise"),
            "a sum/prod/max/min of a (fused) elementwise expression nothing else reads is one "
            "loop accumulating as it goes: no temporary (the loss sum(h * h))")
pm.add_pass(gemm_inplace_pass, "a gemm whose z nothing else reads accumulates into z's buffer")
pm.add_pass(ScanInnerRewrite(lambda fg: _run_gemm_passes(fg), name="scan_inner_gemm"),
            "step graphs get the gemm passes only now: the push-outs above match dot + add")
pm.add_pass(scan_nit_sot_into_seq_pass, "a nit_sot is stored in the rows of a sequence nothing "
            "reads after its step (the backward cotangent in the loss cotangent's buffer)")
pm.add_pass(scan_chunk_seq_products, "a product read as a sequence that nothing else keeps is "
            "computed in chunks of steps in the loop: no T-long x @ W; but for one that a "
            "state buffer of its row shape will hold (scan_seq_into_buffer)")
pm.add_pass(scan_seq_into_buffer_pass, "a product read as a sequence is stored in the rows of "
            "the state buffer step t writes over row t (one trace for both; after "
            "scan_nit_sot_into_seq, which may store a nit_sot in that product)")
pm.add_pass(scan_sum_layout_pass, "a weight gradient summed in the loop and read only "
            "transposed (W.T a non-sequence) is accumulated column-major: its transpose, "
            "which the optimizer reads, is a C array (after the last ScanArgs edit)")
pm.add_pass(inplace_elemwise_pass, "an elementwise loop writes into a fresh input nothing else "
            "reads (last: no later rewrite sees the flag; x @ Wx + h @ Wh + b into x @ Wx)")
pm.add_pass(inplace_inc_subtensor_pass, "a write into a region of a fresh buffer nothing else "
            "reads skips the copy (gate cotangents: several writes into one zeros row)")
pm.add_pass(remove_dead_code, "the linker and printer see only the nodes an output needs")


def run_passes(fgraph, exclude=()):
    """Rewrite `fgraph` in place with every pass of `pm` except those named in `exclude`."""
    return pm.run(fgraph, exclude)
