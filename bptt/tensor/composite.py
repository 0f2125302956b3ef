"""`Composite`: a small graph of scalar ops evaluated as one scalar op.

The elementwise fusion rewrite (`bptt.tensor.rewriting.fusion`) replaces a
chain of `Elemwise` nodes by one ``Elemwise(Composite)``, whose numba lowering
is a single loop computing every inner op per element, without temporaries.

Layout of the inner graph (values are numbered; ``n`` is the number of inputs)::

    value 0 .. n-1     the composite's inputs, of dtypes `in_dtypes`
    value n + i        the result of ``nodes[i] = (scalar_op, args, arg_dtypes, out_dtype)``,
                       computed from values ``args`` (all < n + i), each converted to
                       its computation dtype ``arg_dtypes[k]`` first
    value n + len - 1  the output

Every dtype is recorded when the composite is built from a tensor graph, so
the composite computes exactly what the Elemwise nodes did: the same NumPy 2
promotions and the same conversions between them. Equal inner graphs give
equal (and equally hashed) composites, so merging works on fused nodes.
"""
from __future__ import annotations

import numpy as np

from ..graph.traversal import toposort
from .scalar_ops import ScalarOp, numba_cast


class Composite(ScalarOp):
    """A scalar op defined by an inner graph of scalar ops (see the module docstring).

    Parameters
    ----------
    in_dtypes : sequence of str
        Dtype of each input.
    nodes : sequence of (ScalarOp, tuple of int, tuple of str, str)
        The inner nodes in topological order; the last one is the output.
    """

    def __init__(self, in_dtypes, nodes):
        self.in_dtypes = tuple(in_dtypes)
        self.nodes = tuple((op, tuple(args), tuple(dts), out) for op, args, dts, out in nodes)
        if not self.nodes:
            raise ValueError("a Composite needs at least one inner node")
        self.nin = len(self.in_dtypes)

    def __eq__(self, other):
        return (type(other) is Composite and self.in_dtypes == other.in_dtypes
                and self.nodes == other.nodes)

    def __hash__(self):
        return hash((Composite, self.in_dtypes, self.nodes))

    @property
    def out_dtype(self):
        return self.nodes[-1][3]

    @property
    def name(self):
        return "composite{" + self._text(len(self.in_dtypes) + len(self.nodes) - 1) + "}"

    def _text(self, v):
        n = len(self.in_dtypes)
        if v < n:
            return f"i{v}"
        op, args, _, _ = self.nodes[v - n]
        return f"{op.name}({', '.join(self._text(a) for a in args)})"

    def _dtype(self, v):
        n = len(self.in_dtypes)
        return self.in_dtypes[v] if v < n else self.nodes[v - n][3]

    # -- construction -------------------------------------------------------------

    @classmethod
    def from_graph(cls, inputs, output):
        """The composite computing `output` from `inputs` through Elemwise nodes only.

        Inner ``Elemwise(Composite)`` nodes are inlined. Raises ValueError if
        `output` depends on anything but `inputs` through Elemwise nodes.
        """
        from .elemwise import Elemwise

        index = {v: k for k, v in enumerate(inputs)}
        nodes = []
        for node in toposort([output], blockers=inputs):
            if not isinstance(node.op, Elemwise):
                raise ValueError(f"Composite.from_graph: {node.op} is not elementwise")
            refs = []
            for v in node.inputs:
                if v not in index:
                    raise ValueError(f"Composite.from_graph: {v.describe()} is not an input")
                refs.append(index[v])
            arg_dtypes, out_dtype = node.op.compute_dtypes(node)
            so = node.op.scalar_op
            if isinstance(so, Composite):
                _inline(so, refs, len(inputs), nodes)
            else:
                nodes.append((so, tuple(refs), tuple(arg_dtypes), out_dtype))
            index[node.outputs[0]] = len(inputs) + len(nodes) - 1
        if index.get(output, -1) < len(inputs):
            raise ValueError("Composite.from_graph: the output must be computed by a node")
        return cls([v.type.dtype for v in inputs], nodes)

    # -- the ScalarOp contract ----------------------------------------------------

    def signature(self, inputs):
        from .type import TensorConstant

        if len(inputs) != self.nin:
            raise TypeError(f"{self.name} takes {self.nin} inputs, got {len(inputs)}")
        for k, (x, dt) in enumerate(zip(inputs, self.in_dtypes)):
            weak = isinstance(x, TensorConstant) and x.weak
            if x.type.dtype != dt and not weak:
                raise TypeError(f"{self.name}: input {k} must be {dt}, got {x.type}")
        return list(self.in_dtypes), self.out_dtype

    def impl(self, *args):
        vals = list(args)
        for op, refs, dts, out in self.nodes:
            res = op.impl(*[np.asarray(vals[r], dtype=dt) for r, dt in zip(refs, dts)])
            vals.append(np.asarray(res, dtype=out))
        return vals[-1]

    def numba_expr(self, args, dtypes, out_dtype, ndims):
        """One nested expression (a value used twice is computed twice; kernels use
        `numba_statements` instead, which names every inner value once)."""
        exprs, nds = list(args), list(ndims)
        for op, refs, dts, out in self.nodes:
            nd = [nds[r] for r in refs]
            ins = [self._convert(exprs[r], r, dt, nds[r], dtypes) for r, dt in zip(refs, dts)]
            e = op.numba_expr(ins, list(dts), out, nd)
            exprs.append(exact_scalar(e, out) if not any(nd) else e)
            nds.append(max(nd, default=0))
        return exprs[-1]

    def numba_statements(self, args, dtypes, prefix="t"):
        """Scalar form with locals: (lines ``name = expr``, expression of the output).

        `args` are names of scalar inputs holding values of `dtypes`.
        """
        names, lines = list(args), []
        for k, (op, refs, dts, out) in enumerate(self.nodes):
            ins = [self._convert(names[r], r, dt, 0, dtypes) for r, dt in zip(refs, dts)]
            e = exact_scalar(op.numba_expr(ins, list(dts), out, [0] * len(ins)), out)
            if k == len(self.nodes) - 1:
                return lines, e
            names.append(f"{prefix}{k}")
            lines.append(f"{prefix}{k} = {e}")

    def _convert(self, expr, ref, dtype, ndim, dtypes):
        have = dtypes[ref] if ref < len(self.in_dtypes) else self._dtype(ref)
        return expr if have == dtype else numba_cast(expr, dtype, ndim, src=have)

    def partials(self, inputs, output):
        """Reverse accumulation over the inner graph, rebuilt as Elemwise tensors."""
        vals = _rebuild(self, inputs, output)
        n = len(inputs)
        adjoint = {len(vals) - 1: 1}
        for i in reversed(range(len(self.nodes))):
            a = adjoint.get(n + i)
            if a is None:
                continue
            op, refs, _, _ = self.nodes[i]
            for r, p in zip(refs, op.partials([vals[r] for r in refs], vals[n + i])):
                if p is not None:
                    adjoint[r] = _plus(adjoint.get(r), _times(a, p))
        return [adjoint.get(k) for k in range(n)]


def _inline(comp, refs, n_outer, nodes):
    """Append `comp`'s nodes to `nodes`, its input k read from outer value ``refs[k]``."""
    base = n_outer + len(nodes)
    n = len(comp.in_dtypes)
    for op, args, dts, out in comp.nodes:
        nodes.append((op, tuple(refs[a] if a < n else base + a - n for a in args), dts, out))


def exact_scalar(expr, dtype):
    """Numba source of scalar `expr` converted to exactly `dtype`."""
    # numba widens scalar arithmetic (int8 + int8 is int64 there); NumPy does not.
    return expr if dtype == "bool" else f"np.{dtype}({expr})"


def _rebuild(comp, inputs, output):
    from .basic import cast
    from .elemwise import Elemwise

    vals = list(inputs)
    for op, refs, _, out in comp.nodes[:-1]:
        v = Elemwise(op)(*[vals[r] for r in refs])
        vals.append(v if v.type.dtype == out else cast(v, out))
    vals.append(output)
    return vals


def _times(a, b):
    if isinstance(a, (int, float)) and a == 1:
        return b
    if isinstance(b, (int, float)) and b == 1:
        return a
    if any(isinstance(x, (int, float)) and x == 0 for x in (a, b)):
        return 0
    return a * b


def _plus(a, b):
    if a is None or (isinstance(a, (int, float)) and a == 0):
        return b
    if isinstance(b, (int, float)) and b == 0:
        return a
    return a + b
