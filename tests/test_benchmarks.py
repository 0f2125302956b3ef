"""benchmarks/peers.py and cache_speed.py: the NumPy reference BPTT, the output check, the report.

The reference is checked against bptt's gradient (PY mode: no compilation) on
tiny cases; the driver's parsing, summary and table are checked on a fake
result. Nothing here measures speed.
"""
import json
import mmap
import os
import sys
from unittest import mock

import numpy as np
import pytest

import bptt

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
sys.path.insert(0, BENCH)
with mock.patch.dict(os.environ):  # peers sets thread variables for its children
    import peers
from bptt_rnn import bptt_function  # noqa: E402
from impls import numpy_ref  # noqa: E402
from impls.cases import data, matmul_flops, output_names  # noqa: E402
from impls.torch_nn_impl import _gate_order  # noqa: E402


@pytest.mark.parametrize("kind", ["rnn", "lstm"])
def test_numpy_reference_matches_bptt_gradient(kind, monkeypatch):
    monkeypatch.setattr(bptt.config, "mode", "PY")
    args = data(kind, 5, 3, 4, 6, "float64", seed=1)
    ours = bptt_function(kind, "float64")(*args)
    ref = (numpy_ref.rnn if kind == "rnn" else numpy_ref.lstm)(*args)
    assert len(ours) == len(ref) == len(output_names(kind))
    for name, a, e in zip(output_names(kind), ours, ref):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12, err_msg=name)


def test_check_flags_a_wrong_gradient(tmp_path):
    case, dtype = "rnn-small", "float64"
    ref = peers.reference(case, dtype)
    np.savez(tmp_path / f"good.{case}.{dtype}.cold.npz", *ref)
    bad = [r.copy() for r in ref]
    bad[2][0, 0] += 1e-3 * np.abs(bad[2]).max()  # g_Wh off by 1e-3 relative
    np.savez(tmp_path / f"bad.{case}.{dtype}.warm.npz", *bad)
    err, problem = peers.check(str(tmp_path), "good", case, dtype)
    assert problem is None and err == 0.0
    err, problem = peers.check(str(tmp_path), "bad", case, dtype)
    assert problem.startswith("mismatch (warm): Wh") and err == pytest.approx(1e-3)
    # float32 tolerance accepts the same error
    assert peers.relative_errors(bad, ref)[2] <= peers.TOL["float32"]


def test_parse_args():
    a = peers.parse_args(["--quick"])
    assert (a.cases, a.dtypes, a.rounds, a.seconds) == (["rnn-small"], ["float64"], 1, 0.2)
    a = peers.parse_args(["--cases", "lstm,rnn-large", "--impls", "bptt,jax", "--rounds", "5"])
    assert a.cases == ["lstm", "rnn-large"] and a.impls == ["bptt", "jax"]
    assert a.dtypes == ["float64", "float32"] and a.rounds == 5
    with pytest.raises(SystemExit):
        peers.parse_args(["--cases", "gru"])


def fake_results():
    rows = {("rnn-large", "float64", "bptt"): {"status": "ok", "times": [0.3, 0.1, 0.2],
                                               "mem": [2 ** 20], "err": 1e-15},
            ("rnn-large", "float64", "jax"): {"status": "ok", "times": [0.4], "mem": [None],
                                              "err": 2e-15},
            ("rnn-large", "float64", "torch"): {"status": "skipped: torch is not installed",
                                                "times": [], "mem": [], "err": None}}
    peers.summarize(rows)
    meta = {"commit": "abc1234", "subject": "s", "bptt_src": "HEAD", "date": "d",
            "python": "3.11", "cpus": 2, "command": "python benchmarks/peers.py",
            "rounds": 3, "seconds": 0.5, "load_start": (3.0, 2.0, 1.0), "load_end": (1, 1, 1),
            "shared": True, "versions": {"numpy": np.__version__}, "dtypes": ["float64"]}
    return {"meta": meta, "gemm": {"float64": 20.0},
            "gemm_fraction": peers.gemm_fraction(rows, {"float64": 20.0}),
            "compile": [{"impl": "bptt", "kind": "rnn", "dtype": "float64",
                         "cold": {"wall": 5.0, "cpu": 4.0}, "warm": {"wall": 0.5, "cpu": 0.4},
                         "fresh_call": 0.002, "cached_call": 0.0025},
                        {"impl": "jax", "kind": "rnn", "dtype": "float64", "error": "boom"}],
            "rows": [{"case": c, "dtype": d, "impl": i, **r} for (c, d, i), r in rows.items()]}


def test_summary_and_table():
    results = fake_results()
    rows = {r["impl"]: r for r in results["rows"]}
    assert rows["bptt"]["median"] == 0.2 and rows["bptt"]["ratio"] == pytest.approx(0.5)
    assert rows["jax"]["ratio"] == pytest.approx(2.0) and rows["jax"]["peak_mem"] is None
    assert rows["torch"]["median"] is None and rows["torch"]["ratio"] is None
    frac = results["gemm_fraction"]["float64"]
    assert frac["gflops"] == pytest.approx(matmul_flops("rnn", 100, 64, 256, 512) / 0.2 / 1e9)
    text = peers.markdown(results)
    assert "commit abc1234" in text and "shared load" in text
    assert "| rnn-large | bptt | 200.00 | 0.50 | 1.0 | 25.0 | 1.0e-15 |  |" in text
    assert "| rnn-large | torch | - | - | - | 25.0 | - | skipped: torch is not installed |" in text
    assert "| bptt | rnn | float64 | 5.00 | 4.00 | 0.50 | 0.40 | 2.00 | 2.50 | 1.25 |" in text
    assert "| jax | rnn | float64 | failed: boom" in text


def test_outputs_are_named_by_date_and_commit(tmp_path):
    results = fake_results()
    results["meta"]["date"] = "2026-11-20 21:31"
    base = peers.write_outputs(results, str(tmp_path))
    assert os.path.basename(base) == "peers-2026-11-20-abc1234"
    assert (tmp_path / "peers-2026-11-20-abc1234.md").read_text() == peers.markdown(results)
    json.loads((tmp_path / "peers-2026-11-20-abc1234.json").read_text())
    results["meta"]["bptt_src"] = "the working tree, /src"
    assert peers.result_stem(results) == "peers-2026-11-20-abc1234-worktree"


def test_nn_lstm_gate_order():
    ours = np.repeat(np.array(list("ifog")), 2)
    assert "".join(ours[_gate_order(2)]) == "iiffggoo"


def _touch_new_pages(nbytes):
    # An anonymous mapping is always new memory. np.ones would not be here: in a test
    # process where bptt tuned malloc (trim threshold 256 MiB), a 64 MiB request can be
    # served from heap that earlier tests freed and that is still resident.
    with mmap.mmap(-1, nbytes) as m:
        for offset in range(0, nbytes, mmap.PAGESIZE):
            m[offset] = 1


def test_peak_memory_sees_an_allocation():
    mem = peers.peak_memory(_touch_new_pages, [64 * 2 ** 20])
    assert mem is None or mem >= 60 * 2 ** 20


# -- benchmarks/cache_speed.py: cached against fresh code -------------------------------
with mock.patch.dict(os.environ):
    import cache_speed  # noqa: E402


def test_cache_speed_parse_args():
    a = cache_speed.parse_args([])
    assert (a.cases, a.dtypes, a.pairs, a.seconds) == (
        ["rnn-small", "rnn-medium", "lstm"], ["float64"], 5, 1.0)
    a = cache_speed.parse_args(["--cases", "lstm", "--dtypes", "float64,float32",
                                "--pairs", "3", "--seconds", "0.5", "--json", "x.json"])
    assert (a.cases, a.dtypes, a.pairs, a.seconds, a.json) == (
        ["lstm"], ["float64", "float32"], 3, 0.5, "x.json")
    for bad in (["--cases", "gru"], ["--dtypes", "float16"], ["--pairs", "0"]):
        with pytest.raises(SystemExit):
            cache_speed.parse_args(bad)


def _process(pair, small, medium, compiles=0, build=0.3, load=1.0):
    return {"pair": pair, "build": {"wall": build, "cpu": build}, "compiles": compiles,
            "cache_misses": 0, "new_cache_files": 0, "load": load,
            "loss": {"rnn-small": 1.5, "rnn-medium": 2.5},
            "per_call": {"rnn-small": {"median": small, "cpu": small / 2, "calls": 100},
                         "rnn-medium": {"median": medium, "cpu": medium / 2, "calls": 50}}}


def fake_cell():
    fresh = [_process(i, s, m, compiles=20, build=8.0)
             for i, (s, m) in enumerate([(1e-3, 4e-3), (1.2e-3, 4e-3), (1.1e-3, 4e-3)])]
    cached = [_process(i, s, m) for i, (s, m) in
              enumerate([(1.1e-3, 4.4e-3), (1.2e-3, 4.4e-3), (1.65e-3, 4.4e-3)])]
    cached[2]["compiles"] = 3  # this one did not load cleanly
    return {"kind": "rnn", "dtype": "float64", "cases": ["rnn-small", "rnn-medium"],
            "fresh": fresh, "cached": cached}


def test_cache_speed_summary():
    rows = cache_speed.summarize([fake_cell()])
    small, medium = (r["median"] for r in rows)
    assert small["fresh_median"] == pytest.approx(1.1e-3)
    assert small["cached_median"] == pytest.approx(1.2e-3)
    assert small["ratio"] == pytest.approx(1.2 / 1.1)
    assert small["pair_ratios"] == pytest.approx([1.1, 1.0, 1.5])
    assert small["cached_slower"] == 2  # 1.0 is not slower
    lo, hi = small["ci"]
    assert 1.1 / 1.2 <= lo <= small["ratio"] <= hi <= 1.65 / 1.0
    assert rows[0]["unclean"] == 1 and rows[0]["same_loss"]
    assert rows[0]["cpu"]["ratio"] == pytest.approx(small["ratio"])  # cpu: wall / 2 here
    assert rows[0]["cpu"]["fresh_median"] == pytest.approx(0.55e-3)
    assert medium["ratio"] == pytest.approx(1.1) and medium["ci"] == pytest.approx((1.1, 1.1))
    assert medium["cached_slower"] == 3
    assert cache_speed.bootstrap_ratio([1.0, 2.0], [1.0, 2.0]) == cache_speed.bootstrap_ratio(
        [1.0, 2.0], [1.0, 2.0])  # seeded


def test_cache_speed_table():
    rows = cache_speed.summarize([fake_cell()])
    results = {"meta": {"commit": "abc1234", "command": "python benchmarks/cache_speed.py",
                        "pairs": 3, "seconds": 1.0, "elapsed": 90.0, "bptt_src": "HEAD",
                        "python": "3.11", "numba": "0.68", "cpus": 2,
                        "load_start": [1.0, 1.0, 1.0], "load_end": [1.2, 1.0, 1.0]},
               "rows": rows}
    text = cache_speed.markdown(results)
    assert "commit abc1234" in text and "at start (1.0, 1.0, 1.0)" in text
    lo, hi = rows[1]["median"]["ci"]
    assert ("| rnn-medium | float64 | 3 | 4.000 | 4.000-4.000 | 4.400 | 4.400-4.400 | 1.100 | "
            f"{lo:.3f}-{hi:.3f} | 1.100-1.100 | 3/3 |") in text
    assert "| rnn-medium | float64 | 3 | 2.000 | 2.000-2.000 | 2.200 | 2.200-2.200 | 1.100 |" in text
    assert text.index("## Per call, wall-clock") < text.index("## Per call, CPU time")
    assert "| rnn-small | float64 | 8.00 (8.00-8.00) | 0.30 (0.30-0.30) | 1/3 | yes | 1.0-1.0 |" in text
    empty = cache_speed.summarize([dict(fake_cell(), fresh=[], cached=[])])
    assert "| rnn-small | float64 | 0 | - |" in "\n".join(cache_speed.table(empty))


def test_cache_speed_child_helpers():
    calls = []
    timed = cache_speed.time_calls(lambda x: calls.append(x), [1], 0.0)
    assert timed["calls"] == 3 and len(calls) == 4  # one warm-up call, at least 3 timed
    assert timed["median"] >= 0 and timed["cpu"] >= 0
    import numba

    counter = cache_speed.CompileCounter()
    try:
        f = numba.njit(lambda x: x + 1)
        f(1)
        f(2)
        assert counter.count == 1
    finally:
        counter.close()
    hits, misses = cache_speed.cache_stats()
    assert hits >= 0 and misses >= 1  # f has no disk cache: its compile is a miss


def test_user_graphs_build_and_run_in_py_mode(monkeypatch):
    """Every graph of compile_user_graphs.py builds and runs (tiny sizes, no compilation)."""
    import compile_user_graphs  # noqa: F401  (the driver imports)
    from user_graphs import GRAPHS

    monkeypatch.setattr(bptt.config, "mode", "PY")
    for name, build in GRAPHS.items():
        f, args = build(tiny=True)
        results = f(*args)
        values = results if isinstance(results, list) else [results]
        assert values and all(np.all(np.isfinite(v)) for v in values), name


def test_compile_user_graphs_table_marks_missed_targets():
    import compile_user_graphs

    rows = {"a": {"cold": (4.0, 9), "new graph": (1.0, 3), "cache": (0.4, 1), "PY": (1.1, 2)},
            "b": {"cold": (30.0, 60), "new graph": (2.5, 5), "cache": (0.3, 1)}}
    lines = compile_user_graphs.table(rows)
    assert lines[2] == "| a | 4.00 | 1.00 | 0.40 | 1.10 | yes |"
    assert lines[3] == "| b | 30.00 | 2.50 | 0.30 | - | no: cold, new graph |"


def test_background_compile_table_gives_medians_ranges_and_the_ratio_to_py():
    import background_compile

    run = lambda first, last, switched=None: {"first": first, "last": last,   # noqa: E731
                                              "switched": switched}
    rows = {"g": {"numba": [run(20.0, 30.0, 0)] * 2,
                  "background": [run(1.0, 25.0, 140), run(0.6, 27.0)],
                  "py": [run(0.5, 0.6), run(0.6, 0.8)]}}
    lines = background_compile.table(rows, ["numba", "background", "py"])
    assert lines[2] == "| g | numba | 20.00 (20.00-20.00) | - | 30.0 (30.0-30.0) | 0 |"
    assert lines[3] == ("| g | background | 0.80 (0.60-1.00) | 1.50 (1.00-2.00) | "
                        "26.0 (25.0-27.0) | 140, never |")
    assert lines[4] == "| g | py | 0.55 (0.50-0.60) | - | 0.7 (0.6-0.8) | - |"
