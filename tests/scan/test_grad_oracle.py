"""Property test: the gradient of random scans against the same computation unrolled.

Hypothesis draws a scan configuration (sequence taps past and future, outputs
of every kind with their taps, several outputs, n_steps from the sequences or
given, negative, symbolic, 0 to 8 steps, go_backwards, truncate_gradient,
until, row sizes, which outputs the cost uses and how: all rows, the last row,
a slice, not at all). The same computation is built twice: once with
`bptt.scan`, once unrolled into an ordinary graph by `tests/scan/unrolled.py`
(truncation and until by construction). Values and gradients of every input
must agree; where the unrolled gradient is exactly zero (rows never read,
rows outside the truncation window), the scan gradient must be exactly zero
too. Untruncated draws are also checked by `verify_grad` (finite
differences). The second-order test compares Hessian-vector products.

Compile budget. Each distinct graph structure costs one numba compilation
(seconds), and the values, row sizes and step counts never change the
structure (inputs have unknown static shapes, n_steps is symbolic or fixed by
the configuration). In PY mode hypothesis draws configurations freely; in
NUMBA mode it draws them from the small fixed pools below, so at most
len(pool) structures are compiled, while every example still draws new
values, lengths and step counts. The unrolled reference is evaluated in PY
mode: it is the oracle, and its structure changes with the number of steps
executed, the direction and the row size only.

Both graphs are compiled once per structure (`scan_function` per configuration,
`reference_function` per configuration, steps executed, direction and row
size) and called on each example's values: once a structure is compiled, an
example of it costs one call of each.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.tensor as T

from .unrolled import unroll

COEF = (0.31, -0.42, 0.27, 0.18, -0.23, 0.36, -0.15, 0.22)


@dataclass(frozen=True)
class Config:
    seq_taps: tuple       # one tuple of taps per sequence
    outs: tuple           # per output: () nit_sot, (-1,) sit_sot, else mit_sot taps
    uses: tuple           # per output: "all", "last", "slice" or "none"
    n_kind: object        # "none" (from the sequences), "symbolic", or a static int
    go_backwards: bool
    truncate: int
    until: bool
    ignores: tuple = ()   # (output j, argument i): output j does not read argument i (-1: w)


@st.composite
def configs(draw):
    seq_taps = draw(st.lists(st.lists(st.integers(-2, 2), min_size=1, max_size=2, unique=True)
                             .map(tuple), min_size=0, max_size=2))
    out_kind = st.one_of(st.just(()), st.just((-1,)),
                         st.lists(st.integers(-3, -1), min_size=1, max_size=2, unique=True)
                         .map(tuple))
    outs = draw(st.lists(out_kind, min_size=1, max_size=3))
    uses = draw(st.lists(st.sampled_from(["all", "last", "slice", "none"]),
                         min_size=len(outs), max_size=len(outs)))
    if all(u == "none" for u in uses):
        uses[0] = "all"
    kinds = ["symbolic", 2, 3, -3, 1] + ([] if "last" in uses else [0])
    kinds += ["none", "none"] if seq_taps else []
    n_args = sum(len(t) for t in seq_taps) + sum(len(t) for t in outs)
    pairs = [(j, i) for j in range(len(outs)) for i in range(-1, n_args)]   # -1: w
    ignores = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=2))
    states = [j for j, t in enumerate(outs) if t] or list(range(len(outs)))
    for j in draw(st.lists(st.sampled_from(states), max_size=1)):   # a constant output
        ignores += [(j, i) for i in range(-1, n_args) if (j, i) not in ignores]
    return Config(tuple(seq_taps), tuple(outs), tuple(uses), draw(st.sampled_from(kinds)),
                  draw(st.booleans()), draw(st.sampled_from([-1, -1, 1, 2, 4])),
                  draw(st.booleans()), tuple(sorted(ignores)))


#: NUMBA draws from this pool (see the module docstring): one structure with every
#: category (a (-3, -1) mit_sot, a nit_sot, a sit_sot), sequence taps past and future,
#: a negative or positive symbolic n_steps, go_backwards, until and truncate_gradient.
NUMBA_POOL = (
    Config(((-1, 1),), ((-3, -1), (), (-1,)), ("all", "slice", "last"), "symbolic", True, 2,
           True),
)


def config_strategy(mode, pool=NUMBA_POOL):
    return st.sampled_from(pool) if mode == "NUMBA" else configs()


# -- the step function ---------------------------------------------------------------------
def make_step(cfg):
    """A step mixing its inputs nonlinearly; each output its own combination.

    Even outputs are a tanh, whose derivative reads its result: the backward step
    must read it from the stored rows. Odd ones multiply in a product term.
    Output j leaves out argument i for each (j, i) in ``cfg.ignores``, -1 being
    the non-sequence (a state that ignores its own taps, an output constant in
    every differentiable input, an unused sequence tap...).
    """
    n_seq_args = sum(len(t) for t in cfg.seq_taps)
    n_out = len(cfg.outs)

    def step(*args):
        args = list(args)
        w = args.pop()
        flag = args.pop(n_seq_args) if cfg.until else None
        acc = [T.zeros_like(w) + 0.1 * j if (j, -1) in cfg.ignores else w * (0.4 + 0.1 * j)
               for j in range(n_out)]
        for i, a in enumerate(args):
            for j in range(n_out):
                if (j, i) not in cfg.ignores:
                    acc[j] = acc[j] + a * COEF[(3 * i + 5 * j) % len(COEF)]
        outs = []
        for j in range(n_out):
            o = T.tanh(acc[j])      # even outputs: tanh's derivative reads the stored output
            if args and j % 2 and (j, j % len(args)) not in cfg.ignores:
                o = o * (1.0 + 0.3 * T.sin(args[j % len(args)]))
            outs.append(o)
        if cfg.until:
            outs.append(bptt.until(T.gt(flag, 0)))
        return outs

    return step


# -- both graphs -------------------------------------------------------------------------------
@dataclass
class Problem:
    """Numeric values for one example, and what the scan should do with them."""

    seqs: list
    flags: np.ndarray | None
    inits: list
    w: np.ndarray
    n: int              # the n_steps argument (for "symbolic" and static kinds)
    steps: int          # steps scan runs (before until)
    backwards: bool
    executed: int


def draw_problem(draw, cfg):
    m = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    low = 1 if "last" in cfg.uses else 0
    if cfg.n_kind == "none":
        steps, n = draw(st.integers(low, 8)), None
    elif cfg.n_kind == "symbolic":
        steps = draw(st.integers(low, 8))
        n = steps * draw(st.sampled_from([1, -1]))
    else:
        n = cfg.n_kind
        steps = abs(n)
    # Theano's rule: tap 0 counts as present
    spans = [max(max(t), 0) - min(min(t), 0) for t in cfg.seq_taps] + ([0] if cfg.until else [])
    extras = [draw(st.integers(0, 2)) for _ in spans]
    if cfg.n_kind == "none" and extras:
        extras[draw(st.integers(0, len(extras) - 1))] = 0
    lengths = [steps + s + e for s, e in zip(spans, extras)]
    seqs = [rng.normal(size=(ln, m)) for ln in lengths[:len(cfg.seq_taps)]]
    flags = None
    if cfg.until:   # stop after processing step `stop` (never, when stop == steps)
        stop = draw(st.integers(0, steps))
        order = (rng.random(lengths[-1]) < 0.3).astype("int64")
        order[:stop] = 0
        order[stop:stop + 1] = 1 if stop < steps else order[stop:stop + 1]
        backwards = cfg.go_backwards != (n is not None and n < 0)
        flags = order[::-1].copy() if backwards else order
    inits = [None if not t else rng.normal(size=m) if t == (-1,) else
             rng.normal(size=(-min(t) + draw(st.integers(0, 1)), m)) for t in cfg.outs]
    backwards = cfg.go_backwards != (n is not None and n < 0)
    executed = steps
    if cfg.until:
        order = flags[::-1] if backwards else flags
        hits = [t for t in range(steps) if order[t] > 0]
        executed = hits[0] + 1 if hits else steps
    return Problem(seqs, flags, inits, rng.normal(size=m) * 0.8, n if n is not None else 0,
                   steps, backwards, executed)


def symbolic_inputs(cfg):
    seqs = [T.dmatrix(f"x{i}") for i in range(len(cfg.seq_taps))]
    flags = T.lvector("flags") if cfg.until else None
    inits = [None if not t else T.dvector(f"h{j}") if t == (-1,) else T.dmatrix(f"h{j}")
             for j, t in enumerate(cfg.outs)]
    return seqs, flags, inits, T.dvector("w"), T.lscalar("n")


def build_scan(cfg, seqs, flags, inits, w, n):
    sequences = [dict(input=s, taps=list(t)) for s, t in zip(seqs, cfg.seq_taps)]
    if cfg.until:
        sequences.append(flags)
    outputs_info = [None if i is None else dict(initial=i, taps=list(t))
                    for i, t in zip(inits, cfg.outs)]
    n_steps = {"none": None, "symbolic": n}.get(cfg.n_kind, cfg.n_kind)
    outs, _ = bptt.scan(make_step(cfg), sequences=sequences, outputs_info=outputs_info,
                        non_sequences=w, n_steps=n_steps, go_backwards=cfg.go_backwards,
                        truncate_gradient=cfg.truncate, return_list=True)
    return outs


def build_unrolled(cfg, executed, backwards, m, seqs, flags, inits, w):
    sequences = list(zip(seqs, cfg.seq_taps)) + ([(flags, (0,))] if cfg.until else [])
    return unroll(make_step(cfg), sequences, list(zip(inits, cfg.outs)), [w],
                  n_steps=executed, backwards=backwards,
                  truncate_gradient=cfg.truncate, row_shapes=[(m,)] * len(cfg.outs))


def used_part(out, use):
    if use == "none":
        return None
    return {"all": lambda: out, "last": lambda: out[-1], "slice": lambda: out[1:3]}[use]()


def cost_of(cfg, outs):
    """sum_j <used part of out_j, R_j> + 0.25 |used part|^2, with R_j weight inputs."""
    weights, cost = [], 0.0
    for j, (out, use) in enumerate(zip(outs, cfg.uses)):
        part = used_part(out, use)
        if part is None:
            continue
        r = T.tensor("float64", (None,) * part.ndim, name=f"r{j}")
        weights.append(r)
        cost = cost + (part * r).sum() + 0.25 * (part * part).sum()
    return cost, weights


def numeric_inputs(cfg, prob):
    vals = list(prob.seqs) + ([prob.flags] if cfg.until else [])
    vals += [i for i in prob.inits if i is not None] + [prob.w]
    return vals


def symbolic_list(cfg, seqs, flags, inits, w):
    return list(seqs) + ([flags] if cfg.until else []) + [i for i in inits if i is not None] + [w]


def float_inputs(cfg, seqs, inits, w):
    return list(seqs) + [i for i in inits if i is not None] + [w]


def weight_values(cfg, prob, rng):
    """Random weights shaped like the used part of each output (every output has E rows)."""
    rows = np.zeros((prob.executed, prob.w.shape[0]))
    return [rng.normal(size=np.shape(used_part(rows, u))) for u in cfg.uses if u != "none"]


# -- comparisons -------------------------------------------------------------------------------
def assert_gradients_match(got, want, what):
    for k, (g, r) in enumerate(zip(got, want)):
        g, r = np.asarray(g), np.asarray(r)
        assert g.shape == r.shape, f"{what} {k}: shape {g.shape}, reference {r.shape}"
        zero = r == 0
        assert np.all(g[zero] == 0), (
            f"{what} {k}: nonzero where the reference is exactly zero:\n{g}\nreference\n{r}")
        np.testing.assert_allclose(g, r, rtol=1e-8, atol=1e-10, err_msg=f"{what} {k}")


@functools.lru_cache(maxsize=None)
def scan_function(cfg, mode, order=1):
    """Compiled (values, cost, gradients[, Hessian-vector products]) of the scan graph."""
    seqs, flags, inits, w, n = symbolic_inputs(cfg)
    outs = build_scan(cfg, seqs, flags, inits, w, n)
    cost, weights = cost_of(cfg, outs)
    params = float_inputs(cfg, seqs, inits, w)
    grads = bptt.grad(cost, params, disconnected_inputs="ignore")
    extra, results = [], list(outs) + [cost] + grads
    if order == 2:
        extra = [p.type() for p in params]
        dot = sum(((g * v).sum() for g, v in zip(grads, extra)), start=0.0)
        results = bptt.grad(dot, params, disconnected_inputs="ignore")
    ins = symbolic_list(cfg, seqs, flags, inits, w) + [n] + weights + extra
    return bptt.function(ins, results, mode=mode, on_unused_input="ignore")


def reference_values(cfg, prob, weights_v, order=1, directions=None):
    f = reference_function(cfg, prob.executed, prob.backwards, prob.w.shape[0], order)
    return f(*numeric_inputs(cfg, prob), *weights_v, *(directions or []))


@functools.lru_cache(maxsize=None)
def reference_function(cfg, executed, backwards, m, order):
    """The unrolled graph's (values, cost, gradients[, Hessian-vector products]), PY mode."""
    seqs, flags, inits, w, _ = symbolic_inputs(cfg)
    outs, frozen = build_unrolled(cfg, executed, backwards, m, seqs, flags, inits, w)
    cost, weights = cost_of(cfg, outs)
    params = float_inputs(cfg, seqs, inits, w)
    grads = bptt.grad(cost, params, consider_constant=frozen, disconnected_inputs="ignore")
    extra, results = [], list(outs) + [cost] + grads
    if order == 2:
        extra = [p.type() for p in params]
        dot = sum(((g * v).sum() for g, v in zip(grads, extra)), start=0.0)
        results = bptt.grad(dot, params, consider_constant=frozen, disconnected_inputs="ignore")
    ins = symbolic_list(cfg, seqs, flags, inits, w) + weights + extra
    return bptt.function(ins, results, mode="PY", on_unused_input="ignore")


def run_scan(f, cfg, prob, weights_v, directions=None):
    return f(*numeric_inputs(cfg, prob), np.int64(prob.n), *weights_v, *(directions or []))


# -- the tests -----------------------------------------------------------------------------------
@settings(max_examples=20)
@given(data=st.data())
def test_gradient_matches_unrolled(mode, data):
    cfg = data.draw(config_strategy(mode), label="config")
    prob = draw_problem(data.draw, cfg)
    weights_v = weight_values(cfg, prob, np.random.default_rng(prob.steps + 7))
    got = run_scan(scan_function(cfg, mode), cfg, prob, weights_v)
    want = reference_values(cfg, prob, weights_v)
    n_out = len(cfg.outs)
    for k in range(n_out):
        np.testing.assert_allclose(got[k], want[k], rtol=1e-10, atol=1e-12,
                                   err_msg=f"output {k}")
    np.testing.assert_allclose(got[n_out], want[n_out], rtol=1e-10, err_msg="cost")
    assert_gradients_match(got[n_out + 1:], want[n_out + 1:], "gradient of input")
    if cfg.truncate == -1 and mode == "PY":
        check_finite_differences(cfg, prob)


def check_finite_differences(cfg, prob):
    """verify_grad of the scan's used outputs with respect to its float inputs.

    Run for the PY draws only: finite differences check the gradient graph,
    which does not depend on the mode, and n_steps and the until flags are
    constants here (verify_grad varies float inputs only), so in NUMBA every
    example would be a new compilation. NUMBA gradients are checked against
    the unrolled reference above.
    """
    n_seq = len(cfg.seq_taps)
    n_init = sum(1 for t in cfg.outs if t)

    def fun(*params):
        seqs, inits_in, w = params[:n_seq], list(params[n_seq:n_seq + n_init]), params[-1]
        inits = [None if not t else inits_in.pop(0) for t in cfg.outs]
        flags = T.constant(prob.flags) if cfg.until else None
        outs = build_scan(cfg, seqs, flags, inits, w, T.constant(np.int64(prob.n)))
        return [used_part(o, u) for o, u in zip(outs, cfg.uses) if u != "none"]

    pt = list(prob.seqs) + [i for i in prob.inits if i is not None] + [prob.w]
    bptt.verify_grad(fun, pt, n_tests=1, rng=np.random.default_rng(0), mode="PY")


#: Second order compiles a backward scan of a backward scan (and a second backward scan of
#: the forward one): one small structure in NUMBA, where a sit_sot's mit_mot (0, 1) / (1,)
#: turns into the mit_mot (-1, 0) / (0, -1). PY draws mit_sots and the rest freely.
NUMBA_POOL_2 = (
    Config(((-1, 0),), ((-1,), ()), ("all", "last"), "symbolic", True, -1, True),
)


@settings(max_examples=10)
@given(data=st.data())
def test_hessian_vector_products_match_unrolled(mode, data):
    cfg = data.draw(config_strategy(mode, NUMBA_POOL_2), label="config")
    f = scan_function(cfg, mode, order=2)
    prob = draw_problem(data.draw, cfg)
    rng = np.random.default_rng(prob.steps + 11)
    weights_v = weight_values(cfg, prob, rng)
    directions = [rng.normal(size=np.shape(v))
                  for v in list(prob.seqs) + [i for i in prob.inits if i is not None] + [prob.w]]
    got = run_scan(f, cfg, prob, weights_v, directions)
    want = reference_values(cfg, prob, weights_v, order=2, directions=directions)
    assert_gradients_match(got, want, "Hessian-vector product for input")
