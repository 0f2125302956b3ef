"""``theano.function``: Theano's argument order, mode objects, and ``f.maker``."""
from __future__ import annotations

from bptt.compile.function import Function, _unpickle_function, function as _bptt_function
from bptt.graph.replace import clone_replace
from bptt.config import config as _bptt_config

from .mode import bptt_mode, excluded_passes


class FunctionGraphView:
    """A read-only view of a compiled function's rewritten graph (``f.maker.fgraph``).

    Theano tests and tools read the graph a function runs to count its
    ``Scan`` nodes or look at what the rewrites made; this gives them
    `toposort`, `apply_nodes`, `inputs`, `outputs` and `variables`, as
    copies: changing them changes nothing in the function. The graph is
    bptt's (its ops are bptt's ops), not Theano's.
    """

    def __init__(self, fgraph):
        self._fgraph = fgraph

    def toposort(self):
        return list(self._fgraph.toposort())

    @property
    def apply_nodes(self):
        return frozenset(self._fgraph.apply_nodes)

    @property
    def variables(self):
        return frozenset(self._fgraph.variables)

    @property
    def inputs(self):
        return list(self._fgraph.inputs)

    @property
    def outputs(self):
        return list(self._fgraph.outputs)

    def __repr__(self):
        return f"FunctionGraphView({self._fgraph!r})"


class FunctionMaker:
    """``f.maker``: what Theano code reads of how a function was made."""

    def __init__(self, function):
        self._function = function

    @property
    def fgraph(self):
        return FunctionGraphView(self._function.fgraph)

    @property
    def inputs(self):
        return list(self._function.inputs)

    @property
    def mode(self):
        return self._function.mode


class TheanoFunction(Function):
    """A `bptt.compile.Function` with Theano's ``maker`` attribute and ``copy``."""

    @property
    def maker(self):
        return FunctionMaker(self)

    def copy(self, share_memory=False, swap=None, delete_updates=False, name=None,
             profile=None):
        """A new function computing the same graph (Theano's ``Function.copy``).

        `swap` maps shared variables of the graph to others of the same type,
        which the copy reads and updates instead; `delete_updates` gives a copy
        that updates nothing. `share_memory` is accepted: the two functions
        share no intermediate storage in bptt either way.
        """
        state = self._pickle_state()
        swap = dict(swap or {})
        for old, new in swap.items():
            if getattr(old, "container", None) is None or getattr(new, "container", None) is None:
                raise TypeError(f"copy: swap maps shared variables to shared variables, got "
                                f"{old!r} -> {new!r}")
            if old.type != new.type:
                raise TypeError(f"copy: swap {old.describe()} for a variable of another type, "
                                f"{new.type}")
        outputs, updates = state["outputs"], [] if delete_updates else state["updates"]
        if swap:
            outs = [] if outputs is None else (
                [outputs] if not isinstance(outputs, list) else outputs)
            new = clone_replace(outs + [v for _, v in updates], swap)
            updates = [(swap.get(k, k), v) for (k, _), v in zip(updates, new[len(outs):])]
            outs = new[:len(outs)]
            outputs = None if outputs is None else (outs if isinstance(outputs, list)
                                                     else outs[0])
        state.update(outputs=outputs, updates=updates, name=name or self.name)
        if profile is not None:
            state["profile"] = bool(profile)
        return _unpickle_function(type(self), state)


def function(inputs, outputs=None, mode=None, updates=None, givens=None,
             no_default_updates=False, accept_inplace=False, name=None, rebuild_strict=True,
             allow_input_downcast=None, profile=None, on_unused_input=None):
    """Compile a graph: `bptt.function` with Theano's argument order and modes.

    `mode` is a Theano mode object or name (``'FAST_RUN'``: bptt's default
    mode, ``'FAST_COMPILE'`` and DebugMode: PY), or ``'NUMBA'``/``'PY'``.
    `accept_inplace` and `rebuild_strict` are accepted and change nothing.
    The result also has Theano's ``f.maker.fgraph`` (a read-only view).
    """
    saved = _bptt_config.exclude_rewrites
    _bptt_config.exclude_rewrites = tuple(saved) + excluded_passes(mode)
    try:
        f = _bptt_function(list(inputs), outputs, updates=updates, givens=givens,
                           mode=bptt_mode(mode), allow_input_downcast=allow_input_downcast,
                           on_unused_input=on_unused_input or "raise", name=name,
                           profile=bool(profile), no_default_updates=no_default_updates)
    finally:
        _bptt_config.exclude_rewrites = saved
    f.__class__ = TheanoFunction   # same object, with ``maker`` (a subclass adds no state)
    return f
