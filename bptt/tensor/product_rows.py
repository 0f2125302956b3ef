"""A matrix product written behind free rows, and the rows that head it.

The forward RNN reads ``P = reshape(x @ U)`` as a sequence while its loop
writes ``h`` into a buffer of one initial row plus a row per step
(bptt/scan/rewriting/seq_buffer.py). Two ops let that buffer and ``P`` be one
array, with no temporary for the product:

* ``rows = ProductRows(k)(head, x, y, shape)``: an array of ``k + R`` rows of
  the product's row shape whose rows ``k..`` hold ``reshape(dot(x, y), shape)``
  (`shape` has no -1 entry: the rewrite passes a vector of sizes)
  (BLAS writes them in place) and whose first `k` rows hold ``head``'s when
  `head` has that row shape (otherwise they are not defined: nothing reads them);
* ``HeadRows(k)(rows, head)``: `rows` when its row shape is `head`'s and `head`
  has at least `k` rows (the first `k` rows of `rows` are then `head`'s), else `head`.

So ``rows[k:]`` is always the product and ``HeadRows(k)(rows, head)[:k]`` always
``head[:k]`` (a head of fewer rows is itself: the loop's check sees it): a loop
reading those as its sequence and initial value sees the same values whatever
the run-time shapes, and may keep its state in `rows` when the second is the
first. Only that compile-time rewrite builds them (after
gradients).
"""
from __future__ import annotations

import numpy as np

from ..graph.basic import Apply
from ..graph.op import Op
from .type import TensorType, as_tensor_variable

_REASON = "built by a compile-time rewrite, after gradients (scan_seq_into_buffer)"


class ProductRows(Op):
    """``k`` rows, then ``reshape(dot(x, y), shape)``; see the module docstring."""

    __props__ = ("k", "product_shape")
    no_gradient = _REASON

    def __init__(self, k, product_shape):
        self.k = int(k)
        self.product_shape = tuple(product_shape)   # static shape of the reshaped product

    def make_node(self, head, x, y, shape):
        head, x, y, shape = (as_tensor_variable(v) for v in (head, x, y, shape))
        nd = len(self.product_shape)
        if x.ndim != 2 or y.ndim != 2 or head.ndim != nd or \
                not x.dtype == y.dtype == head.dtype or x.dtype not in ("float32", "float64"):
            raise TypeError(f"ProductRows: expected a head of {nd} dims and two matrices of "
                            f"one float dtype, got {head.type}, {x.type}, {y.type}")
        if shape.ndim != 1 or shape.type.shape[0] not in (None, nd) \
                or not shape.dtype.startswith("int"):
            raise TypeError(f"ProductRows: expected an integer shape of length {nd}, "
                            f"got {shape.type}")
        out = TensorType(head.dtype, (None,) + self.product_shape[1:])
        return Apply(self, [head, x, y, shape], [out()])

    def perform(self, node, inputs, output_storage):
        head, x, y, shape = inputs
        if any(int(s) < 0 for s in shape):
            raise ValueError(f"ProductRows: negative size in {tuple(shape)}")
        product = np.reshape(np.dot(x, y), tuple(int(s) for s in shape))
        rows = np.zeros((self.k + len(product),) + product.shape[1:], dtype=product.dtype)
        if head.shape[1:] == product.shape[1:] and len(head) >= self.k:
            rows[: self.k] = head[: self.k]
        rows[self.k:] = product
        output_storage[0][0] = rows


class HeadRows(Op):
    """`rows` when its row shape is `head`'s and `head` has `k` rows, else `head`; see the
    module docstring."""

    __props__ = ("k",)
    no_gradient = _REASON

    def __init__(self, k):
        self.k = int(k)

    def make_node(self, rows, head):
        rows, head = as_tensor_variable(rows), as_tensor_variable(head)
        if rows.dtype != head.dtype or rows.ndim != head.ndim or head.ndim < 1:
            raise TypeError(f"HeadRows: expected arrays of one dtype and ndim, got "
                            f"{rows.type} and {head.type}")
        return Apply(self, [rows, head], [TensorType(head.dtype, (None,) + head.type.shape[1:])()])

    def perform(self, node, inputs, output_storage):
        rows, head = inputs
        same = rows.shape[1:] == head.shape[1:] and len(head) >= self.k
        output_storage[0][0] = rows if same else head
