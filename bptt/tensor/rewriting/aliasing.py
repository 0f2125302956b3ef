"""Which values own their memory: the facts the in-place rewrites rest on.

`fresh` says whether both modes compute a value into memory no other
variable views (the reference `perform` of some ops returns an input itself);
`may_alias` whether a value may share memory with a given variable, walking
back through every op that does not always allocate. The in-place rewrites
of elementwise loops, of writes into regions and of scan rows all ask these.
"""
from __future__ import annotations


def fresh(var):
    """Whether both modes compute `var` into memory no other variable views."""
    from ..basic import Alloc, Join
    from ..composite import Composite
    from ..elemwise import Elemwise
    from ..scalar_ops import _Variadic
    from ..subtensor import IncSubtensor

    node = var.owner
    if node is None or getattr(var.type, "ndim", 0) == 0:
        return False
    op = node.op
    if isinstance(op, (Join, Alloc, IncSubtensor)):   # IncSubtensor writes into a copy of x
        return True
    if not isinstance(op, Elemwise) or getattr(op, "inplace", False) or len(node.outputs) != 1:
        return False
    # The reference `perform` returns an input itself for a one-input add/mul, an integer
    # floor/round and an empty Composite; float ufunc results are always new arrays.
    scalar, n_args = op.scalar_op, len(node.inputs)
    if isinstance(scalar, Composite):
        if not scalar.nodes:
            return False
        scalar, n_args = scalar.nodes[-1][0], len(scalar.nodes[-1][1])   # its result
    if isinstance(scalar, _Variadic) and n_args == 1:
        return False
    return var.dtype.startswith(("float", "complex"))


def _inner_fresh(var):
    from ..math import Dot

    return fresh(var) or (var.owner is not None and isinstance(var.owner.op, Dot))


def may_alias(out, inner_input):
    """Whether `out` may share memory with `inner_input`.

    Conservative: a value computed by an op that does not always allocate
    (`fresh`, or a Dot) may be a view of any of its inputs.
    """
    stack, seen = [out], set()
    while stack:
        var = stack.pop()
        if var is inner_input:
            return True
        if var in seen or var.owner is None or _inner_fresh(var):
            continue
        seen.add(var)
        stack.extend(var.owner.inputs)
    return False
