"""bptt: ``bptt.scan`` + ``bptt.grad`` compiled in NUMBA mode (``benchmarks/bptt_rnn.py``)."""
from __future__ import annotations

from .cases import Built, as_numpy_list, identity_prepare

KINDS = ("rnn", "lstm")


def build(kind, dtype):
    import bptt
    from bptt_rnn import bptt_function  # benchmarks/ is on sys.path

    bptt.config.mode = "NUMBA"
    return Built(identity_prepare, bptt_function(kind, dtype), as_numpy_list)
