"""A reduction of an elementwise expression, computed in one pass without its array.

``sum(h * h, axis=...)`` is two nodes: an `Elemwise` that writes every
element of the product into a fresh array, then a `Reduce` that reads it
again. ``ElemwiseReduce(reduce, elemwise)`` is the same value as one node:
its numba lowering (link/numba/dispatch/elemwise_reduce.py) loops once over
the broadcast shape of the elementwise inputs, evaluates the scalar
expression per element in the Elemwise's exact dtype and adds it (or
multiplies, or compares) into the accumulator, the reduction's own. No
array of the expression's shape exists: for a loss over a state trace,
``sum(H[1:] * H[1:])``, a T x B x H temporary less, and one pass over memory
instead of three (write the product, read it back).

Only the rewrite `reduce_of_elemwise` (tensor/rewriting/elemwise_reduce.py)
makes it, at compile time; ``perform`` is the two ops one after the other,
and the gradient is theirs chained.
"""
from __future__ import annotations

from ..graph.basic import Apply
from ..graph.op import Op
from .elemwise import Elemwise
from .math import Reduce


class ElemwiseReduce(Op):
    """``reduce(elemwise(*inputs))`` as one op.

    Parameters
    ----------
    reduce : Reduce
        The reduction (`Sum`, `Prod`, `Max`, `Min`) and its axes, numbered in
        the elementwise output's dimensions.
    elemwise : Elemwise
        The elementwise op (not in place); its output is never stored.
    """

    __props__ = ("reduce", "elemwise")

    def __init__(self, reduce, elemwise):
        if not isinstance(reduce, Reduce) or not isinstance(elemwise, Elemwise) \
                or elemwise.inplace_input is not None:
            raise TypeError(f"ElemwiseReduce needs a Reduce and a not-in-place Elemwise, "
                            f"got {reduce} and {elemwise}")
        self.reduce, self.elemwise = reduce, elemwise

    def __str__(self):
        return f"{self.reduce}({self.elemwise})"

    def parts(self, node):
        """(elementwise node, reduce node) computing what `node` computes, in a new graph."""
        ew = self.elemwise.make_node(*node.inputs)
        return ew, self.reduce.make_node(ew.outputs[0])

    def make_node(self, *inputs):
        ew = self.elemwise.make_node(*inputs)
        out = self.reduce.make_node(ew.outputs[0]).outputs[0]
        return Apply(self, ew.inputs, [out.type()])

    def perform(self, node, inputs, output_storage):
        ew, red = self.parts(node)
        cell = [None]
        self.elemwise.perform(ew, inputs, [cell])
        self.reduce.perform(red, [cell[0]], output_storage)

    def L_op(self, inputs, outputs, output_grads):
        x = self.elemwise(*inputs)
        (g_x,) = self.reduce.L_op([x], outputs, output_grads)
        return self.elemwise.L_op(inputs, [x], [g_x])

    def infer_shape(self, fgraph, node, input_shapes):
        (shape,) = self.elemwise.infer_shape(fgraph, node, input_shapes)
        return self.reduce.infer_shape(fgraph, node, [shape])
