"""`Patches` and `PatchesAdjoint`: one call each to the loops of patches_runtime.py.

The geometry goes as a tuple of int64 constants, so one compiled loop per
dtype serves every window shape (see patches_runtime.py).
"""
from ....tensor.patches import Patches, PatchesAdjoint, fill_value
from ..registry import np_dtype, numba_funcify


def _geometry(op):
    values = op.window + op.stride + op.dilation + op.pad + (int(op.partial),)
    return "(" + ", ".join(f"np.int64({v})" for v in values) + ")"


@numba_funcify.register(Patches)
def _patches(op, node, ctx):
    dtype = node.outputs[0].dtype
    fill = fill_value(op.fill, dtype)
    fill = "-np.inf" if fill == float("-inf") else repr(fill)
    return f"patches_call({{0}}, {_geometry(op)}, {np_dtype(dtype)}({fill}))"


@numba_funcify.register(PatchesAdjoint)
def _patches_adjoint(op, node, ctx):
    return f"patches_adjoint_call({{0}}, {{1}}, {{2}}, {_geometry(op)})"
