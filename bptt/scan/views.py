"""Simpler signatures for common loops: `map`, `reduce`, `foldl`, `foldr`.

Each is one call of `scan`; see its docstring for the arguments.
"""
from __future__ import annotations

from .basic import scan


def map(fn, sequences, non_sequences=None, truncate_gradient=-1, go_backwards=False,  # noqa: A001
        mode=None, name=None):
    """Apply `fn` to every row of `sequences` (like Python's ``map``).

    Returns ``(outputs, updates)`` like `scan`: one output row per step.
    """
    return scan(fn, sequences=sequences, outputs_info=None, non_sequences=non_sequences,
                truncate_gradient=truncate_gradient, go_backwards=go_backwards, mode=mode,
                name=name)


def reduce(fn, sequences, outputs_info, non_sequences=None, go_backwards=False, mode=None,  # noqa: A001
           name=None):
    """Fold `fn` over `sequences` starting from `outputs_info`; return only the final values.

    ``fn(row..., accumulator..., non_sequences...)`` returns the new
    accumulators. Returns ``(final values, updates)``.
    """
    outs, updates = scan(fn, sequences=sequences, outputs_info=outputs_info,
                         non_sequences=non_sequences, go_backwards=go_backwards, mode=mode,
                         name=name, return_list=True)
    last = [o[-1] for o in outs]
    return (last[0] if len(last) == 1 else last), updates


def foldl(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None):
    """`reduce` from the first row to the last (Haskell's ``foldl``)."""
    return reduce(fn, sequences, outputs_info, non_sequences, go_backwards=False, mode=mode,
                  name=name)


def foldr(fn, sequences, outputs_info, non_sequences=None, mode=None, name=None):
    """`reduce` from the last row to the first (Haskell's ``foldr``)."""
    return reduce(fn, sequences, outputs_info, non_sequences, go_backwards=True, mode=mode,
                  name=name)
