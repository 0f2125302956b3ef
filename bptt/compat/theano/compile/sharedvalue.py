"""``theano.compile.sharedvalue``: `shared` with Theano's signature."""
from __future__ import annotations

from bptt.tensor.sharedvar import SharedVariable as SharedVariable
from bptt.tensor.sharedvar import shared as _shared


def shared(value, name=None, strict=False, allow_downcast=None, borrow=False,
           broadcastable=None, shape=None):
    """A shared variable holding `value` (bptt's `shared` under Theano's signature).

    `broadcastable` is Theano's pattern: a dimension marked True has static
    length 1, one marked False any length. `strict` and `allow_downcast` are
    accepted for compatibility: the value keeps its dtype, as in Theano.
    """
    if broadcastable is not None:
        if shape is not None:
            raise TypeError("shared: give broadcastable (Theano's pattern) or shape, not both")
        shape = _broadcastable_shape(broadcastable, value, name)
    return _shared(value, name=name, borrow=borrow, shape=shape)


def _broadcastable_shape(broadcastable, value, name):
    import numpy as np

    pattern = tuple(bool(b) for b in broadcastable)
    sizes = np.shape(value)
    what = f"shared variable {name!r}" if name else "shared variable"
    if len(pattern) != len(sizes):
        raise ValueError(f"{what}: broadcastable={pattern} has {len(pattern)} entries but the "
                         f"value has shape {sizes}; give one flag per dimension")
    wrong = [i for i, (b, s) in enumerate(zip(pattern, sizes)) if b and s != 1]
    if wrong:
        raise ValueError(f"{what}: dimension {wrong[0]} is marked broadcastable but the value "
                         f"has shape {sizes}; a broadcastable dimension has length 1")
    return tuple(1 if b else None for b in pattern)
