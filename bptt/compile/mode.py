"""Compilation modes and the rewrite pipeline applied before linking."""
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


def optimize(fgraph, mode):
    """Run the registered rewrite passes on `fgraph` in place."""
    try:
        from .passes import run_passes
    except ImportError:
        return fgraph
    run_passes(fgraph, exclude=config.exclude_rewrites)
    return fgraph


def linker_for(mode):
    if mode == "PY":
        from ..link.python import make_python_callable

        return make_python_callable
    from ..link.numba.linker import make_numba_callable

    return make_numba_callable
