"""Compilation modes, the rewrite pipeline applied before linking, and the graph memo.

The graph memo (NUMBA mode, see docs/warm-start.md): a graph compiled once is
found again by a key of the un-rewritten graph (`graph_key`), and its
generated modules are loaded without rewriting or generating code. It is off
while ``config.check_ir`` (the test suite verifies the IR after every
rewrite, so rewrites must run) or ``config.dump_source`` is on.
"""
from __future__ import annotations

from ..config import config

MODES = ("NUMBA", "PY")


def resolve_mode(mode):
    """The mode name for `mode` (None: the configured default)."""
    if mode is None:
        return config.mode
    if isinstance(mode, str) and mode.upper() in MODES:
        return mode.upper()
    if isinstance(mode, str) and mode.upper() in ("FAST_RUN", "FAST_COMPILE", "DEBUG_MODE"):
        return config.mode  # Theano names are accepted; both map to the default.
    raise ValueError(f"unknown mode {mode!r}; use 'NUMBA' or 'PY'")


def excluded_rewrites():
    """The names of the passes the configuration skips: ``config.exclude_rewrites``, or
    every pass when ``config.rewrites`` is off."""
    if config.rewrites:
        return config.exclude_rewrites
    from .passes import pm

    return tuple(pm.names())


def optimize(fgraph, mode, exclude=None):
    """Run the registered rewrite passes (but `exclude`, default the configured) on `fgraph`."""
    try:
        from .passes import run_passes
    except ImportError:
        return fgraph
    run_passes(fgraph, exclude=excluded_rewrites() if exclude is None else exclude)
    return fgraph


def linker_for(mode):
    if mode == "PY":
        from ..link.python import make_python_callable

        return make_python_callable
    from ..link.numba.linker import make_numba_callable

    return make_numba_callable


def memo_key(fgraph, mode):
    """The graph-memo key of the un-rewritten `fgraph`, or None: compile without the memo."""
    if mode != "NUMBA" or config.check_ir or config.dump_source:
        return None
    from .graph_key import graph_key

    return graph_key(fgraph, mode)


def recall(fgraph, key):
    """The linked callable recorded for `key` (built on `fgraph`'s types), or None."""
    if key is None:
        return None
    from ..link.numba import cache

    compiled = cache.recall(key)
    if compiled is None:
        return None
    from ..link.numba.linker import make_numba_callable

    return make_numba_callable(fgraph, compiled)


def link(fgraph, mode, key=None):
    """Link the rewritten `fgraph`; with a memo `key`, record the modules it loaded."""
    if key is None:
        return linker_for(mode)(fgraph)
    from ..link.numba import cache

    with cache.recording() as modules:
        fn = linker_for(mode)(fgraph)
    cache.remember(key, modules, fn.module.__name__, fn.numba_function.py_func.__name__)
    return fn
