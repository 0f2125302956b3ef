"""``theano.compile.debugmode``: `DebugMode` runs the graph in bptt's PY mode."""
from .mode import Mode


class DebugMode(Mode):
    """Theano's self-checking mode; here the reference interpreter (PY mode)."""

    def __init__(self, optimizer="fast_run", **kwargs):
        super().__init__("py", optimizer, bptt_mode="PY")
