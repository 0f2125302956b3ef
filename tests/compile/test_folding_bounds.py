"""Nothing runs unbounded at compile time: constant folding evaluates a loop only
when its work is bounded by a small constant, and no build allocates a huge array."""
import time


import bptt
import bptt.tensor as T
from bptt.graph.fg import FunctionGraph
from bptt.graph.rewriting import InToOut
from bptt.tensor.rewriting import constant_folding
from bptt.tensor.rewriting.constant_folding import MAX_WORK, work_bound


def _halving(n_steps):
    out, _ = bptt.scan(lambda h: h * 0.5 + 1.0, outputs_info=[T.constant(0.0)],
                       n_steps=n_steps, name="halving")
    return out[-1]


def _scans(f):
    return [n for n in f.fgraph.apply_nodes if type(n.op).__name__ == "Scan"]


def test_a_short_constant_loop_is_folded():
    f = bptt.function([], _halving(4), mode="PY")
    assert not _scans(f) and f() == 1.875


def test_a_long_constant_loop_is_left_for_run_time():
    # 20,000 steps were evaluated inside bptt.function (3-4 s; 10**6 steps, 45 s)
    t0 = time.perf_counter()
    f = bptt.function([], _halving(20_000), mode="PY")
    assert time.perf_counter() - t0 < 3.0
    scan, = _scans(f)
    assert work_bound(scan) > MAX_WORK


def test_a_loop_of_2_to_the_40_steps_builds():
    # never returned: the folding ran the loop
    for mode in ("PY", "NUMBA"):
        f = bptt.function([], _halving(2 ** 40), mode=mode)
        assert len(_scans(f)) == 1


def test_a_huge_static_size_neither_wraps_nor_allocates():
    t0 = time.perf_counter()
    assert T.arange(10 ** 10).type.shape == (10 ** 10,)           # built a 75 GiB array
    assert T.arange(0.0, 1.0, 0.1).type.shape == (10,)
    assert T.arange(5, 0, 2).type.shape == (0,)
    big = T.zeros((2 ** 32, 2 ** 32))                              # 2**64 wrapped to 0
    fg = FunctionGraph([], [big])
    InToOut([constant_folding]).apply(fg)
    assert fg.outputs[0].owner is not None
    assert time.perf_counter() - t0 < 2.0
