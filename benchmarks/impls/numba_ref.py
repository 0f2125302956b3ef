"""Hand-written BPTT in numba (``benchmarks/bptt_rnn.py``), cached on disk like bptt."""
from __future__ import annotations

from .cases import Built, as_numpy_list, identity_prepare

KINDS = ("rnn", "lstm")


def build(kind, dtype):
    from bptt_rnn import numba_references  # benchmarks/ is on sys.path

    return Built(identity_prepare, numba_references(cache=True)[kind], as_numpy_list)
