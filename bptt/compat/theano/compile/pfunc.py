"""``theano.compile.pfunc``: Theano's graph-rebuilding helper."""
from __future__ import annotations

from bptt.graph.replace import clone_replace


def rebuild_collect_shared(outputs, inputs=None, replace=None, updates=None, rebuild_strict=True,
                           copy_inputs_over=True, no_default_updates=False):
    """Copies of `outputs` with `replace` applied: ``(inputs, outputs, other)``.

    Theano's helper returned ``(input_variables, cloned_outputs, [clone_d,
    update_d, update_expr, shared_inputs])``; here the inputs are returned as
    given, the outputs copied with the replacements, and the third entry is
    ``[replace, {}, [], []]``.
    """
    replace = dict(replace.items() if isinstance(replace, dict) else (replace or ()))
    single = not isinstance(outputs, (list, tuple))
    outs = clone_replace([outputs] if single else list(outputs), replace)
    return list(inputs or ()), outs[0] if single else outs, [replace, {}, [], []]
