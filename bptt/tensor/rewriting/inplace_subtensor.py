"""A write into a region (``set_subtensor``/``inc_subtensor``) of a buffer nothing else reads.

`IncSubtensor` and `AdvancedIncSubtensor` return a copy of `x` with the
region written. When `x` is a buffer made for this write alone, the copy is
a whole pass over it for nothing. The gradient makes such buffers all the
time: the LSTM's gate cotangent in the backward step is four writes into
zeros, each a copy of the (B, 4H) row before (five passes per step instead
of one), and the cotangent of a trace sliced ``h[1:]`` a T-long zeros buffer
copied once more before its rows are written::

    z0 = Alloc(0, B, 4H)                  fresh, read only by the first write
    z1 = IncSubtensor{:, 0:H}(z0, di)     -> {inplace}: z1 is z0's buffer
    z2 = IncSubtensor{:, H:2H}(z1, df)    -> {inplace}: z1 is read only here

`inplace_inc_subtensor` sets ``inplace=True`` on the op when `x` is proven
private, by the rule `inplace_elemwise` applies to an elementwise loop's
input (`inplace_elemwise._fresh_base`): `x`, reached through `Reshape` only,
is computed into fresh memory (`aliasing.fresh`: `Alloc`,
`Join`, an `IncSubtensor`, a new float elementwise result; or a `Dot`/`Gemm`),
every variable from that base to `x` has exactly one client, the next one (no
other reader, view or graph output), and neither the values nor an index may
share memory with the base (`aliasing.may_alias`). An inplace write's own output is
then the base's memory with no other reader, so the next write of a chain
qualifies the same way. Both modes write into `x`: ``perform`` skips its
``x.copy()``, the numba kernel its ``c_copy(x)``.

The pass runs with the other in-place passes, after every rewrite that could
build a node from a flagged op or add a reader (bptt/compile/passes.py), on
the outer graph and on step graphs.
"""
from __future__ import annotations

from ...graph.rewriting import InToOut, node_rewriter
from ..subtensor import AdvancedIncSubtensor, IncSubtensor
from .aliasing import may_alias
from .inplace_elemwise import _fresh_base


@node_rewriter([IncSubtensor, AdvancedIncSubtensor])
def inplace_inc_subtensor(fgraph, node):
    """``IncSubtensor(x, y, ...)`` -> its ``inplace`` twin when nothing else can see `x`."""
    op = node.op
    x = node.inputs[0]
    if op.inplace or x.ndim == 0:
        return None
    base = _fresh_base(fgraph, x, node, 0)
    if base is None or any(may_alias(v, base) for v in node.inputs[1:]):
        return None
    twin = type(op)(op.idx_list, op.set_instead_of_inc, inplace=True)
    return twin.make_node(*node.inputs).outputs


inplace_inc_subtensor_pass = InToOut([inplace_inc_subtensor], name="inplace_inc_subtensor")
