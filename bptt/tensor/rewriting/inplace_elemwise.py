"""An elementwise loop writes its output into an input's buffer that nothing reads after it.

Before the LSTM's backward loop, ``x @ Wx`` (reversed), the recomputed
``h @ Wh`` and the fused pre-activation sum ``x @ Wx + h @ Wh + b`` are three
T x B x 4H arrays alive together. The sum can be written into the fresh
product ``h @ Wh`` instead::

    p = Reshape(Dot(h2d, Wh))          fresh, read only by the sum
    s = composite(xw[::-1], p, b)      -> composite{inplace_input=1}: s is p's buffer

`inplace_elemwise` sets ``Elemwise.inplace_input = k`` when all of this is
proven (the gemm in-place rule of `blas.gemm_inplace`, for an elementwise loop):

* the op is not stateful; input k has the output's dtype, ndim and static shape
  (static 1s match). Whether it is broadcast at run time is checked at run
  time: both modes write into it only when its shape is the output's (then
  the loop reads and then writes each element at one index, `loop_source`),
  and allocate otherwise. The size facts (`sizes.shape_keys`) cannot prove
  the LSTM's sum unbroadcast: its dims are ``bcast(T, rows of the trace)``
  and ``bcast(B, rows of h0)``, equal only at run time;
* its *base*, reached from it through `Reshape` only (every element of the
  base appears once in the reshaped array), is computed into fresh memory
  (`aliasing.fresh`, or a `Dot`/`Gemm`), and every variable
  from the base to input k has exactly one client that reads its values, the
  next one: the node at position k alone reads it (no other position, view,
  reader or graph output). Clients that read only the shape (`Shape`,
  `Shape_i`: the gradient of a Reshape reshapes back to the product's
  shape) do not count, since the write keeps the shape;
* no other input of the node may share memory with the base
  (`aliasing.may_alias`: implied by the single client, checked
  anyway).

The pass runs after every other rewrite (`bptt/compile/passes.py`), so no
later rewrite or gradient builds a node from a flagged op, and only on the
outer graph. An Elemwise without the flag (every node any other code makes)
allocates its output as before.
"""
from __future__ import annotations

from ...graph.rewriting import InToOut, node_rewriter
from ..blas import Gemm
from ..elemwise import Elemwise
from ..math import Dot
from ..shape import Reshape, Shape, Shape_i
from .aliasing import fresh, may_alias
from .constant_folding import is_stateful


def _fresh_base(fgraph, var, node, k):
    """The fresh base `var` (input k of `node`) is a Reshape chain of, if every variable
    from it to `var` has one client, the next one; else None."""
    reader, pos = node, k
    while True:
        if _value_readers(fgraph, var) != [(reader, pos)]:
            return None
        if fresh(var) or (var.owner is not None and isinstance(var.owner.op, (Dot, Gemm))
                          and var.ndim > 0):
            return var
        if var.owner is None or not isinstance(var.owner.op, Reshape):
            return None
        reader, pos, var = var.owner, 0, var.owner.inputs[0]


def _value_readers(fgraph, var):
    """The clients of `var` but those that read only its shape (`Shape`, `Shape_i`): a
    write in place keeps the shape, so they see the same whenever they run."""
    return [tuple(c) for c in fgraph.clients.get(var, [])
            if not isinstance(getattr(c[0], "op", None), (Shape, Shape_i))]


def _same_type(a, b):
    return a.type.dtype == b.type.dtype and a.type.shape == b.type.shape


def _writable_input(fgraph, node):
    """The first input the node's output may be written into, or None."""
    out = node.outputs[0]
    for k, x in enumerate(node.inputs):
        if not _same_type(x, out):
            continue
        base = _fresh_base(fgraph, x, node, k)
        if base is None:
            continue
        if not any(may_alias(y, base) for j, y in enumerate(node.inputs) if j != k):
            return k
    return None


@node_rewriter([Elemwise])
def inplace_elemwise(fgraph, node):
    """``Elemwise(f)`` -> ``Elemwise(f, inplace_input=k)`` when no one else can see input k."""
    op = node.op
    if (op.inplace_input is not None or len(node.outputs) != 1 or node.outputs[0].ndim == 0
            or is_stateful(node)):
        return None
    k = _writable_input(fgraph, node)
    if k is None:
        return None
    return Elemwise(op.scalar_op, inplace_input=k).make_node(*node.inputs).outputs


inplace_elemwise_pass = InToOut([inplace_elemwise], name="inplace_elemwise")
