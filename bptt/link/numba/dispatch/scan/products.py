"""Sequences read as ``seq[t] @ W`` (``StoragePlan.seq_products``,
bptt/scan/rewriting/product_seqs.py): the product of a chunk of steps' rows with W is one
gemm, made when the chunk starts; each step reads its row of it.

    before the loop:  pz = (K, B, N) rows, K = max(1, ceil(rows / B)) steps
    at step t = c0 (a multiple of K):  pz[m] = seq[c0 + m] @ W for the chunk's kk steps
        (seq_product_call: one gemm over the stacked rows, in memory order: pz[kk - 1 - m]
         when the sequence runs backwards in memory, the backward scan's reversed trace)
    step t reads pz's row of step t
"""
from __future__ import annotations

from .writer import fail


def emit_alloc(w, op):
    """Each product sequence's chunk rows (W's rows checked against the sequence's)."""
    info = op.info
    for j, wk, rows in op.plan.product_seqs:
        w(1, f"if seq{j}.shape[2] != ns{wk}.shape[0]:")
        w(2, fail(f"{info.label}: sequence {j} is multiplied by a matrix of ", f"ns{wk}.shape[0]",
                  " rows, but its rows have ", f"seq{j}.shape[2]", " columns"))
        w(1, f"pk{j} = imax(1, imin(n, -(-{rows} // imax(seq{j}.shape[1], 1))))")
        w(1, f"pz{j} = alloc_empty((pk{j}, seq{j}.shape[1], ns{wk}.shape[1]), seq{j}.dtype)")
        w(1, f"pn{j} = pk{j}")
        w(1, f"pi{j} = 0")
        w(1, f"prev{j} = seq{j}.strides[0] < 0")


def emit_step(w, op, d):
    """At a chunk's first step its products; `pr{j}`: step t's row of them."""
    for j, wk, _ in op.plan.product_seqs:
        w(d, f"pi{j} = t % pk{j}")
        w(d, f"if pi{j} == 0:")
        w(d + 1, f"pn{j} = imin(pk{j}, n - t)")
        w(d + 1, f"seq_product_call(pz{j}, seq{j}, t, pn{j}, ns{wk})")
        # (a statement of its own: a conditional expression among many call arguments is
        # bytecode numba does not take, CALL_FUNCTION_EX)
        w(d, f"pr{j} = pn{j} - 1 - pi{j} if prev{j} else pi{j}")
