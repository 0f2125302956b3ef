"""``theano.compile.mode``: Theano's mode objects, each standing for a bptt mode.

A `Mode` carries the bptt mode it runs in (``'NUMBA'``, ``'PY'``, or None for
`bptt.config.mode`). Theano's linker and optimizer choices have no bptt
counterpart beyond that: ``linker='py'`` is PY. ``excluding`` a Theano scan
optimization that has a bptt pass doing the same (`THEANO_PASSES`) compiles
without that pass (``bptt.config.exclude_rewrites``); other tags, and
``including``, change nothing (bptt's rewrite pipeline is fixed).
"""
from __future__ import annotations

from bptt.config import config as _bptt_config

from ..configparser import MODE_NAMES, config


#: Theano optimization tag -> the bptt passes that make the same rewrites (Theano's
#: PushOutSeqScan also replaces a loop it empties: bptt's scan_pushout_rows).
THEANO_PASSES = {
    "scanOp_pushout_seqs_ops": ("scan_pushout_rows", "scan_state_rows", "scan_pushout_seqs"),
    "scanOp_pushout_nonseqs_ops": ("scan_pushout_non_seqs",),
    "scanOp_merge": ("scan_merge",),
    "scanOp_save_mem": ("scan_save_mem",),
}


class Mode:
    """A compilation mode with Theano's interface (``theano.Mode(linker, optimizer)``)."""

    def __init__(self, linker=None, optimizer="default", bptt_mode=None):
        self.linker = linker
        self.optimizer = optimizer
        if bptt_mode is None and isinstance(linker, str) and linker.startswith("py"):
            bptt_mode = "PY"
        self.bptt_mode = bptt_mode
        self.excluded_passes = ()

    def including(self, *tags):
        return self

    def excluding(self, *tags):
        passes = tuple(p for t in tags for p in THEANO_PASSES.get(t, ()))
        if not passes:
            return self
        mode = self.clone()
        mode.excluded_passes = self.excluded_passes + passes
        return mode

    def requiring(self, *tags):
        return self

    def clone(self, **kwargs):
        mode = Mode(kwargs.get("linker", self.linker), kwargs.get("optimizer", self.optimizer),
                    self.bptt_mode)
        mode.excluded_passes = self.excluded_passes
        return mode

    def __repr__(self):
        return f"Mode(bptt mode {self.bptt_mode or _bptt_config.mode})"


class MonitorMode(Mode):
    """Theano's MonitorMode (pre- and post-function hooks are not called)."""

    def __init__(self, pre_func=None, post_func=None, optimizer="default", linker=None):
        super().__init__(linker, optimizer)
        self.pre_func, self.post_func = pre_func, post_func


FAST_RUN = Mode("cvm", "fast_run")
FAST_COMPILE = Mode("py", "fast_compile", bptt_mode="PY")


def get_mode(name):
    """The mode object for a Theano or bptt mode name (None: ``config.mode``)."""
    if isinstance(name, Mode):
        return name
    if name is None:
        name = config.mode
    if name not in MODE_NAMES:
        raise ValueError(f"unknown mode {name!r}: use one of {sorted(MODE_NAMES)}")
    if name in ("DebugMode", "DEBUG_MODE"):
        from .debugmode import DebugMode

        return DebugMode()
    return Mode(optimizer=name, bptt_mode=MODE_NAMES[name])


def get_default_mode():
    return get_mode(None)


def excluded_passes(mode):
    """The bptt passes a Theano mode object or name excludes."""
    if mode is None or isinstance(mode, str):
        mode = get_mode(mode)
    return mode.excluded_passes


def bptt_mode(mode):
    """The `bptt.function` mode for a Theano mode object or name."""
    if mode is None or isinstance(mode, str):
        mode = get_mode(mode)
    return mode.bptt_mode
