"""Random streams: distributions, seeding, default updates, and both modes agreeing."""
import copy
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.tensor.random import NormalRV, RandomVariable

N = 4000
_results = {}


def _all_draws(seed, mode):
    """One draw of every kind from `RandomStreams(seed)`, as {name: value} (cached)."""
    if (seed, mode) in _results:
        return _results[seed, mode]
    srng = bptt.RandomStreams(seed)
    m, p = T.dmatrix("m"), T.dvector("p")
    outs = {
        "uniform": srng.uniform(size=(N,), low=-1.0, high=3.0),
        "uniform32": srng.uniform(size=m.shape, dtype="float32"),
        "normal": srng.normal(size=(N,), avg=2.0, std=0.5),
        "normal_avg": srng.normal(size=m.shape, avg=p, std=0.1),
        "binomial": srng.binomial(size=(N,), n=5, p=0.3),
        "binomial_p": srng.binomial(p=p),
        "integers": srng.integers(size=(N,), low=-2, high=3),
        "random_integers": srng.random_integers(size=(N,), low=1, high=6),
        "choice": srng.choice(size=(N,), a=np.array([10.0, 20.0, 30.0]), p=[0.2, 0.3, 0.5]),
        "choice_int": srng.choice(size=(2, 3), a=4),
        "choice_noreplace": srng.choice(size=(5,), a=5, replace=False),
        "permutation": srng.permutation(size=(3,), n=6),
        "scalar": srng.normal(),
    }
    f = bptt.function([m, p], list(outs.values()), mode=mode)
    values = f(np.zeros((50, 40)), np.linspace(0.01, 0.99, 40))
    _results[seed, mode] = dict(zip(outs, values))
    return _results[seed, mode]


def _moments(x, mean, var, tol=4.0):
    """Sample mean and variance within `tol` standard errors of the expected values."""
    x = np.asarray(x, dtype="float64").ravel()
    assert abs(x.mean() - mean) <= tol * np.sqrt(var / x.size), (x.mean(), mean)
    assert abs(x.var() - var) <= tol * var * np.sqrt(2.0 / x.size) + 0.01 * var, (x.var(), var)


def test_uniform_and_normal(mode):
    d = _all_draws(20, mode)
    u = d["uniform"]
    assert u.shape == (N,) and u.dtype == np.float64
    assert u.min() >= -1.0 and u.max() < 3.0
    _moments(u, 1.0, 16.0 / 12)
    assert d["uniform32"].shape == (50, 40) and d["uniform32"].dtype == np.float32
    _moments(d["uniform32"], 0.5, 1.0 / 12)
    _moments(d["normal"], 2.0, 0.25)
    assert d["normal"].dtype == np.float64
    na = d["normal_avg"]
    assert na.shape == (50, 40)
    np.testing.assert_allclose(na.mean(axis=0), np.linspace(0.01, 0.99, 40), atol=0.06)
    assert d["scalar"].shape == () and d["scalar"].dtype == np.float64


def test_binomial(mode):
    d = _all_draws(20, mode)
    b = d["binomial"]
    assert b.dtype == np.int64 and b.shape == (N,)
    assert set(np.unique(b)) <= set(range(6))
    _moments(b, 5 * 0.3, 5 * 0.3 * 0.7)
    bp = d["binomial_p"]
    assert bp.shape == (40,) and set(np.unique(bp)) <= {0, 1}
    assert bp[:5].sum() <= 2 and bp[-5:].sum() >= 3  # p from 0.01 to 0.99


def test_integers_choice_and_permutation(mode):
    d = _all_draws(20, mode)
    i = d["integers"]
    assert i.dtype == np.int64 and set(np.unique(i)) == {-2, -1, 0, 1, 2}
    _moments(i, 0.0, 2.0)
    assert set(np.unique(d["random_integers"])) == {1, 2, 3, 4, 5, 6}
    c = d["choice"]
    assert c.dtype == np.float64 and set(np.unique(c)) == {10.0, 20.0, 30.0}
    np.testing.assert_allclose([(c == v).mean() for v in (10, 20, 30)], [0.2, 0.3, 0.5],
                               atol=0.03)
    ci = d["choice_int"]
    assert ci.shape == (2, 3) and ci.dtype == np.int64 and ci.min() >= 0 and ci.max() < 4
    np.testing.assert_array_equal(np.sort(d["choice_noreplace"]), np.arange(5))
    perm = d["permutation"]
    assert perm.shape == (3, 6)
    np.testing.assert_array_equal(np.sort(perm, axis=1), np.tile(np.arange(6), (3, 1)))
    assert len({tuple(row) for row in perm}) == 3


def test_modes_draw_the_same_numbers():
    py, nb = _all_draws(21, "PY"), _all_draws(21, "NUMBA")
    for name in py:
        assert py[name].dtype == nb[name].dtype, name
        np.testing.assert_array_equal(py[name], nb[name], err_msg=name)
    other = _all_draws(22, "PY")
    assert not np.array_equal(py["normal"], other["normal"])


SCRIPT = """
import json, numpy as np, bptt
srng = bptt.RandomStreams(42)
f = bptt.function([], [srng.normal((4,)), srng.binomial((3,), n=3, p=0.4)], mode="PY")
print(json.dumps([v.tolist() for v in f() + f()]))
"""


def test_same_seed_same_numbers_in_another_process(mode):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root)
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                         text=True, check=True).stdout
    srng = bptt.RandomStreams(42)
    f = bptt.function([], [srng.normal((4,)), srng.binomial((3,), n=3, p=0.4)], mode=mode)
    here = [v.tolist() for v in f() + f()]
    assert json.loads(out) == here


def test_function_without_updates_advances_the_stream(mode):
    srng = bptt.RandomStreams(3)
    f = bptt.function([], srng.uniform((4,)), mode=mode)
    a, b = f(), f()
    assert not np.array_equal(a, b)
    again = bptt.RandomStreams(3)
    g = bptt.function([], again.uniform((4,)), mode=mode)
    np.testing.assert_array_equal(g(), a)
    np.testing.assert_array_equal(g(), b)


def test_eval_advances_the_stream_as_a_function_does():
    # Theano's eval compiles a function, which applies default updates: draws differ
    srng = bptt.RandomStreams(3)
    u = srng.uniform((4,))
    a, b = u.eval(), (u * 1.0).eval()
    assert not np.array_equal(a, b)
    g = bptt.function([], bptt.RandomStreams(3).uniform((4,)))
    np.testing.assert_array_equal(g(), a)
    np.testing.assert_array_equal(g(), b)
    (rng, _), = srng.updates()
    before = rng.get_value(borrow=True)
    x = T.dvector("x")
    with pytest.raises(ValueError):
        (u + x).eval({x: np.ones(3)})          # fails to broadcast: no state changes
    assert rng.get_value(borrow=True) is before
    frozen = before.bit_generator.state
    np.testing.assert_array_equal(u.eval({rng: before}), u.eval({rng: before}))
    assert rng.get_value(borrow=True).bit_generator.state == frozen   # a given value: no update


def test_explicit_updates_override_the_default(mode):
    srng = bptt.RandomStreams(4)
    u = srng.normal((3,))
    (rng, advanced), = srng.updates()
    assert rng.default_update is advanced
    frozen = bptt.function([], u, updates=[(rng, rng)], mode=mode)
    np.testing.assert_array_equal(frozen(), frozen())


def test_draws_never_change_the_input_generator(mode):
    srng = bptt.RandomStreams(9)
    u = srng.normal((3,))
    (rng, _), = srng.updates()
    before = rng.get_value(borrow=True)
    state = copy.deepcopy(before.bit_generator.state)
    first = bptt.function([], u, mode=mode)()
    assert before.bit_generator.state == state
    assert rng.get_value(borrow=True) is not before
    assert rng.get_value(borrow=True).bit_generator.state != state
    rng.set_value(before)
    np.testing.assert_array_equal(bptt.function([], u, mode=mode)(), first)


def test_seed_reseeds_every_generator(mode):
    srng = bptt.RandomStreams(1)
    outs = [srng.uniform((3,)), srng.normal((2,))]
    f = bptt.function([], outs, mode=mode)
    f()
    srng.seed(5)
    fresh = bptt.RandomStreams(5)
    g = bptt.function([], [fresh.uniform((3,)), fresh.normal((2,))], mode=mode)
    for a, b in zip(f(), g()):
        np.testing.assert_array_equal(a, b)


def test_symbolic_size_inside_expressions(mode):
    """One Gibbs step: the draw's size and p come from the graph; NumPy replays it."""
    srng = bptt.RandomStreams(11)
    v, W = T.dvector("v"), T.dmatrix("W")
    hmean = T.nnet.sigmoid(T.dot(v, W))
    h = srng.binomial(size=hmean.shape, n=1, p=hmean, dtype="float64")
    vmean = T.nnet.sigmoid(T.dot(h, W.T))
    noisy = srng.normal(size=vmean.shape, avg=vmean, std=0.01)
    f = bptt.function([v, W], [h, noisy], mode=mode)
    seeds = np.random.SeedSequence(11).spawn(2)
    g_h, g_n = np.random.default_rng(seeds[0]), np.random.default_rng(seeds[1])
    rng = np.random.default_rng(0)
    for n_vis, n_hid in [(3, 4), (5, 2)]:
        vv, Wv = rng.random(n_vis), rng.standard_normal((n_vis, n_hid))
        hs, out = f(vv, Wv)
        h_ref = g_h.binomial(1, 1 / (1 + np.exp(-(vv @ Wv)))).astype("float64")
        np.testing.assert_array_equal(hs, h_ref)
        vm = 1 / (1 + np.exp(-(h_ref @ Wv.T)))
        np.testing.assert_allclose(out, vm + 0.01 * g_n.standard_normal(n_vis), rtol=1e-12)


def test_gibbs_chain_in_scan(mode):
    """Seed 000's example: with scan's updates the chain advances, without them it repeats."""
    rng = np.random.default_rng(1)
    W = bptt.shared(rng.standard_normal((4, 3)), name="W")
    trng = T.shared_randomstreams.RandomStreams(1234)

    def one_step(vsample, W):
        hmean = T.nnet.sigmoid(bptt.dot(vsample, W))
        hsample = trng.binomial(size=hmean.shape, n=1, p=hmean)
        vmean = T.nnet.sigmoid(bptt.dot(hsample, W.T))
        return trng.binomial(size=vsample.shape, n=1, p=vmean, dtype="float64")

    sample = T.dvector("sample")
    values, updates = bptt.scan(one_step, outputs_info=sample, non_sequences=[W], n_steps=6)
    assert len(updates) == 2
    chain = bptt.function([sample], values, updates=updates, mode=mode)
    stuck = bptt.function([sample], values, mode=mode)
    v0 = np.ones(4)
    a, b = chain(v0), chain(v0)
    assert a.shape == (6, 4) and set(np.unique(a)) <= {0.0, 1.0}
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(stuck(v0), stuck(v0))
    _results.setdefault(("gibbs", mode), (a, b))
    if ("gibbs", "PY") in _results and ("gibbs", "NUMBA") in _results:
        for x, y in zip(_results["gibbs", "PY"], _results["gibbs", "NUMBA"]):
            np.testing.assert_array_equal(x, y)


# -- errors and gradients ------------------------------------------------------------

def test_binomial_p_outside_unit_interval(mode):
    srng = bptt.RandomStreams(0)
    p = T.dvector("p")
    f = bptt.function([p], srng.binomial(size=p.shape, p=p), mode=mode)
    assert f(np.array([0.0, 1.0])).tolist() == [0, 1]
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\]"):
        f(np.array([0.5, 1.5]))


def test_parameters_must_broadcast_to_size(mode):
    srng = bptt.RandomStreams(0)
    avg = T.dvector("avg")
    f = bptt.function([avg], srng.normal(size=(3,), avg=avg), mode=mode)
    assert f(np.zeros(1)).shape == (3,)
    with pytest.raises(ValueError, match="broadcast"):
        f(np.zeros(4))


def test_build_time_errors():
    srng = bptt.RandomStreams(0)
    with pytest.raises(TypeError, match="random generator"):
        NormalRV("float64")(T.dvector(), (2,), 0.0, 1.0)
    with pytest.raises(TypeError, match="integer"):
        srng.binomial((2,), n=1.5, p=0.5)
    with pytest.raises(ValueError, match="ndim=2"):
        srng.uniform((3,), ndim=2)


def test_sampling_has_no_gradient():
    srng = bptt.RandomStreams(0)
    mu, x, v = T.dvector("mu"), T.dvector("x"), T.dvector("v")
    s = srng.normal(size=mu.shape, avg=mu)
    assert s.owner.op.no_gradient and "not differentiable" in s.owner.op.no_gradient
    with pytest.raises(bptt.NullTypeGradError, match="not differentiable"):
        bptt.grad(s.sum(), mu)
    with pytest.raises(bptt.NullTypeGradError, match="no derivative"):
        bptt.Rop(s, mu, v)
    g = bptt.grad((s * x).sum(), x)  # the sample is a value like any other for x
    assert g.dtype == "float64"


def test_draw_ops_are_marked_stateful_for_rewrites():
    srng = bptt.RandomStreams(0)
    assert RandomVariable.stateful is True
    assert srng.uniform().owner.op.stateful


def test_theano_spelling():
    assert T.shared_randomstreams.RandomStreams is bptt.RandomStreams is T.RandomStreams
