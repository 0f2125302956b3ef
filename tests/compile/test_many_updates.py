"""A function may update more shared variables than Python nests blocks (20)."""
from __future__ import annotations

import numpy as np

import bptt


def test_a_function_updates_thirty_shared_variables():
    shared = [bptt.shared(np.asarray(float(k)), name=f"s{k}") for k in range(30)]
    x = bptt.tensor.dscalar("x")
    f = bptt.function([x], x, updates={s: s + x for s in shared}, mode="PY")
    assert f(1.0) == 1.0
    assert [float(s.get_value()) for s in shared] == [k + 1.0 for k in range(30)]
