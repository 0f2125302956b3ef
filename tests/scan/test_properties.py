"""Hypothesis: random scan configurations against the NumPy reference loop.

A configuration fixes the graph structure (sequence taps, output kinds and
taps, until, go_backwards, how n_steps is given); the values, run-time
lengths and n_steps vary inside each example, so one compiled function
serves several checks. Every row is a vector of run-time length m.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.scan import Scan, ScanInfo

from .reference import TooShort, mit_mot_reference, scan_reference

TAPS_SEQ = st.lists(st.integers(-2, 1), min_size=1, max_size=2, unique=True)
TAPS_OUT = st.lists(st.integers(-3, -1), min_size=1, max_size=2, unique=True)


@st.composite
def configs(draw):
    seq_taps = draw(st.lists(TAPS_SEQ, min_size=0, max_size=2))
    outs = draw(st.lists(st.one_of(st.just(()), TAPS_OUT.map(tuple)), min_size=1, max_size=3))
    n_kind = draw(st.sampled_from(["none", "symbolic", 0, 2, -3]) if seq_taps else
                  st.sampled_from(["symbolic", 0, 2, -3]))
    return dict(seq_taps=[tuple(t) for t in seq_taps], outs=outs, n_kind=n_kind,
                until=draw(st.booleans()), go_backwards=draw(st.booleans()))


def _make_step(cfg, lib):
    n_out = len(cfg["outs"])

    def step(*args):
        w = args[-1]
        total = w * 0.5
        for i, a in enumerate(args[:-1]):
            total = total + a * (0.3 + 0.1 * i)
        outs = [lib.tanh(total + j) for j in range(n_out)]
        if not cfg["until"]:
            return outs
        stop = outs[0].sum() > 0.5
        return (outs, bptt.until(stop)) if lib is T else (outs, stop)

    return step


def _build(cfg):
    seqs = [T.dmatrix(f"s{i}") for i in range(len(cfg["seq_taps"]))]
    inits = [None if not taps else (T.dvector(f"x{j}") if taps == (-1,) else T.dmatrix(f"x{j}"))
             for j, taps in enumerate(cfg["outs"])]
    w, n = T.dvector("w"), T.lscalar("n")
    outputs_info = [None if i is None else dict(initial=i, taps=list(t))
                    for i, t in zip(inits, cfg["outs"])]
    n_steps = {"none": None, "symbolic": n}.get(cfg["n_kind"], cfg["n_kind"])
    outs, _ = bptt.scan(_make_step(cfg, T), sequences=[dict(input=s, taps=list(t)) for s, t in
                                                       zip(seqs, cfg["seq_taps"])],
                        outputs_info=outputs_info, non_sequences=w, n_steps=n_steps,
                        go_backwards=cfg["go_backwards"], return_list=True)
    ins = seqs + [i for i in inits if i is not None] + [w, n]
    return ins, outs


@settings(max_examples=12)   # each example compiles a new loop structure
@given(cfg=configs(), data=st.data())
def test_random_configurations_match_reference(mode, cfg, data):
    ins, outs = _build(cfg)
    f = bptt.function(ins, outs, mode=mode, on_unused_input="ignore")
    for _ in range(3):
        m = data.draw(st.integers(1, 3))
        rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
        seq_vals = [rng.normal(size=(data.draw(st.integers(0, 7)), m)) for _ in cfg["seq_taps"]]
        inits = [None if not t else (rng.normal(size=m) if t == (-1,) else
                                     rng.normal(size=(-min(t), m))) for t in cfg["outs"]]
        w = rng.normal(size=m)
        n = data.draw(st.integers(-6, 6)) if cfg["n_kind"] == "symbolic" else 0
        n_ref = {"none": None, "symbolic": n}.get(cfg["n_kind"], cfg["n_kind"])
        args = seq_vals + [i for i in inits if i is not None] + [w, np.int64(n)]
        try:
            want = scan_reference(_make_step(cfg, np), list(zip(seq_vals, cfg["seq_taps"])),
                                  list(zip(inits, cfg["outs"])), [w], n_steps=n_ref,
                                  go_backwards=cfg["go_backwards"], until=cfg["until"],
                                  nit_row_shapes=[(m,)] * len(cfg["outs"]))
        except TooShort:
            with pytest.raises(ValueError, match="rows"):
                f(*args)
            continue
        got = f(*args)
        assert len(got) == len(want)
        for g, r in zip(got, want):
            assert g.shape == r.shape and g.dtype == np.float64
            np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12)


@settings(max_examples=8)
@given(in_taps=st.lists(st.integers(-2, 2), min_size=1, max_size=3, unique=True),
       out_taps=st.lists(st.integers(-2, 2), min_size=1, max_size=2, unique=True),
       data=st.data())
def test_mit_mot_buffers_match_reference(mode, in_taps, out_taps, data):
    ins = [T.dvector() for _ in in_taps]
    scale = T.dscalar("scale")
    total = ins[0]
    for v in ins[1:]:
        total = total + v
    outs = [T.tanh(total * scale + k) for k in out_taps]
    info = ScanInfo(0, (tuple(in_taps),), (tuple(out_taps),), (), 0, 0, 0, 1)
    op = Scan(ins + [scale], outs, info)
    buf, n = T.dmatrix("buf"), T.lscalar("n")
    f = bptt.function([n, buf, scale], op(n, buf, scale), mode=mode)
    extent = max(in_taps + out_taps) - min(in_taps + out_taps)
    for _ in range(2):
        steps = data.draw(st.integers(0, 4))
        rows = steps + extent + data.draw(st.integers(0, 2))
        bv = np.random.default_rng(steps + rows).normal(size=(rows, 2))
        sv = data.draw(st.floats(-2, 2))

        def step(*rows_in):
            return [np.tanh(sum(rows_in) * sv + k) for k in out_taps]

        np.testing.assert_allclose(f(steps, bv, sv),
                                   mit_mot_reference(bv, in_taps, out_taps, step, steps))
