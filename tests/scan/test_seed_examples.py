"""Every example of the scan user guide (seed 000), run in both modes, checked with NumPy.

Written against `bptt.compat.theano` so each example reads as in the guide.
"""
import numpy as np
import pytest

import bptt.compat.theano as theano
from bptt.graph.traversal import toposort
from bptt.scan import Scan

from ..helpers import excluding
from .reference import scan_reference

T = theano.tensor


def test_power_of_a_vector(mode):
    k = T.iscalar("k")
    A = T.vector("A")
    result, updates = theano.scan(fn=lambda prior_result, A: prior_result * A,
                                  outputs_info=T.ones_like(A), non_sequences=A, n_steps=k)
    power = theano.function(inputs=[A, k], outputs=result[-1], updates=updates, mode=mode)
    np.testing.assert_allclose(power(range(10), 2), np.arange(10.0) ** 2)
    np.testing.assert_allclose(power(range(10), 4), np.arange(10.0) ** 4)
    assert updates == {}


def test_polynomial_with_enumerate_trick(mode):
    coefficients = T.vector("coefficients")
    x = T.scalar("x")
    components, _ = theano.scan(
        fn=lambda coefficient, power, free_variable: coefficient * (free_variable ** power),
        outputs_info=None, sequences=[coefficients, T.arange(10000)], non_sequences=x)
    calculate_polynomial = theano.function([coefficients, x], components.sum(), mode=mode)
    coeffs = np.asarray([1, 0, 2], dtype=np.float32)
    assert calculate_polynomial(coeffs, 3) == pytest.approx(1.0 + 0.0 * 3 + 2.0 * 9)
    assert calculate_polynomial(np.zeros(0), 3) == 0.0   # the shortest sequence wins


def test_triangular_numbers(mode):
    up_to = T.iscalar("up_to")
    seq = T.arange(up_to)

    def accumulate_by_adding(arange_val, sum_to_date):
        return sum_to_date + arange_val

    outputs_info = T.as_tensor_variable(np.asarray(0, seq.dtype))
    scan_result, _ = theano.scan(fn=accumulate_by_adding, outputs_info=outputs_info,
                                 sequences=seq)
    triangular_sequence = theano.function(inputs=[up_to], outputs=scan_result, mode=mode)
    got = triangular_sequence(15)
    assert got.dtype == np.dtype(seq.dtype)
    np.testing.assert_array_equal(got, [n * (n + 1) // 2 for n in range(15)])


def test_triangular_numbers_pitfall_is_an_error():
    seq = T.arange(T.iscalar("up_to"))
    with pytest.raises(TypeError, match="downcast"):
        theano.scan(fn=lambda a, s: s + a, outputs_info=T.as_tensor_variable(np.int8(0)),
                    sequences=seq)


def test_set_value_at_position(mode):
    location = T.imatrix("location")
    values = T.vector("values")
    output_model = T.matrix("output_model")

    def set_value_at_position(a_location, a_value, output_model):
        zeros = T.zeros_like(output_model)
        zeros_subtensor = zeros[a_location[0], a_location[1]]
        return T.set_subtensor(zeros_subtensor, a_value)

    result, _ = theano.scan(fn=set_value_at_position, outputs_info=None,
                            sequences=[location, values], non_sequences=output_model)
    f = theano.function([location, values, output_model], result, mode=mode)
    locs = np.asarray([[1, 1], [2, 3]], dtype=np.int32)
    vals = np.asarray([42, 50], dtype=np.float32)
    got = f(locs, vals, np.zeros((5, 5), dtype=np.float32))
    want = np.zeros((2, 5, 5))
    want[0, 1, 1], want[1, 2, 3] = 42, 50
    np.testing.assert_array_equal(got, want)


def _gibbs_model(seed=1234):
    rng = np.random.default_rng(0)
    W = theano.shared(rng.normal(size=(4, 3)), name="W")
    bvis = theano.shared(np.zeros(4), name="bvis")
    bhid = theano.shared(np.zeros(3), name="bhid")
    trng = T.shared_randomstreams.RandomStreams(seed)
    return W, bvis, bhid, trng


@pytest.mark.parametrize("explicit", [False, True])
def test_gibbs_sampling(mode, explicit):
    W, bvis, bhid, trng = _gibbs_model()

    def one_step(vsample, *params):
        w, bv, bh = params if explicit else (W, bvis, bhid)
        hmean = T.nnet.sigmoid(theano.dot(vsample, w) + bh)
        hsample = trng.binomial(size=hmean.shape, n=1, p=hmean)
        vmean = T.nnet.sigmoid(theano.dot(hsample, w.T) + bv)
        return trng.binomial(size=vsample.shape, n=1, p=vmean, dtype=theano.config.floatX)

    sample = T.vector()
    values, updates = theano.scan(one_step, outputs_info=sample, n_steps=10,
                                  non_sequences=[W, bvis, bhid] if explicit else None,
                                  strict=explicit)
    assert len(updates) == 2      # the two draws' generators advance with the loop
    gibbs10 = theano.function([sample], values[-1], updates=updates, mode=mode)
    chains = [gibbs10(np.ones(4)) for _ in range(6)]
    for c in chains:
        assert c.shape == (4,) and set(np.unique(c)) <= {0.0, 1.0}
    assert len({c.tobytes() for c in chains}) > 1   # the stream advances between calls
    frozen = theano.function([sample], values[-1], mode=mode)
    first = frozen(np.ones(4))
    np.testing.assert_array_equal(frozen(np.ones(4)), first)   # without updates: repeats


def test_gibbs_strict_requires_the_shared_variables():
    W, bvis, bhid, trng = _gibbs_model()

    def one_step(vsample):
        hmean = T.nnet.sigmoid(theano.dot(vsample, W) + bhid)
        return trng.binomial(size=hmean.shape, n=1, p=hmean)

    with pytest.raises(ValueError, match="strict=True.*'W'"):
        theano.scan(one_step, outputs_info=T.vector(), n_steps=10, strict=True)


def test_shared_variable_updated_by_the_step(mode):
    a = theano.shared(1)
    values, updates = theano.scan(lambda: {a: a + 1}, n_steps=10)
    b = a + 1
    c = updates[a] + 1
    f = theano.function([], [b, c], updates=updates, mode=mode)
    assert [int(v) for v in f()] == [2, 12] and a.get_value() == 11
    assert [int(v) for v in f()] == [12, 22] and a.get_value() == 21
    g = theano.function([], [b, c], mode=mode)   # without the updates, a stays put
    a.set_value(1)
    assert [int(v) for v in g()] == [2, 12] and a.get_value() == 1
    assert [int(v) for v in g()] == [2, 12] and a.get_value() == 1


def test_rnn_with_several_taps(mode):
    def one_step(u_tm4, u_t, x_tm3, x_tm1, y_tm1, W, W_in_1, W_in_2, W_feedback, W_out):
        x_t = T.tanh(theano.dot(x_tm1, W) + theano.dot(u_t, W_in_1)
                     + theano.dot(u_tm4, W_in_2) + theano.dot(y_tm1, W_feedback))
        y_t = theano.dot(x_tm3, W_out)
        return [x_t, y_t]

    Ws = [T.matrix(name) for name in ("W", "W_in_1", "W_in_2", "W_feedback", "W_out")]
    u, x0, y0 = T.matrix("u"), T.matrix("x0"), T.vector("y0")
    (x_vals, y_vals), updates = theano.scan(
        fn=one_step, sequences=dict(input=u, taps=[-4, -0]),
        outputs_info=[dict(initial=x0, taps=[-3, -1]), y0], non_sequences=Ws, strict=True)
    f = theano.function([u, x0, y0, *Ws], [x_vals, y_vals], mode=mode)
    rng = np.random.default_rng(1)
    nx, ny, nu = 3, 2, 2
    w = [rng.normal(size=s) for s in [(nx, nx), (nu, nx), (nu, nx), (ny, nx), (nx, ny)]]
    uv, x0v, y0v = rng.normal(size=(9, nu)), rng.normal(size=(3, nx)), rng.normal(size=ny)

    def np_step(u_tm4, u_t, x_tm3, x_tm1, y_tm1):
        x_t = np.tanh(x_tm1 @ w[0] + u_t @ w[1] + u_tm4 @ w[2] + y_tm1 @ w[3])
        return [x_t, x_tm3 @ w[4]]

    want = scan_reference(np_step, [(uv, (-4, 0))], [(x0v, (-3, -1)), (y0v, (-1,))])
    got = f(uv, x0v, y0v, *w)
    assert got[0].shape == (5, nx)     # uvals[0] plays u[-4]: scanning starts at uvals[4]
    for g, r in zip(got, want):
        np.testing.assert_allclose(g, r)


def test_powers_of_two_until(mode):
    def power_of_2(previous_power, max_value):
        return previous_power * 2, theano.scan_module.until(previous_power * 2 > max_value)

    max_value = T.scalar()
    values, _ = theano.scan(power_of_2, outputs_info=T.constant(1.), non_sequences=max_value,
                            n_steps=1024)
    f = theano.function([max_value], values, mode=mode)
    np.testing.assert_array_equal(f(45), [2, 4, 8, 16, 32, 64])
    np.testing.assert_array_equal(f(0.5), [2])
    with np.errstate(over="ignore"):
        assert len(f(np.inf)) == 1024    # n_steps bounds the loop


@pytest.mark.parametrize("keep_loop", [False, True])
def test_free_variable_example(mode, keep_loop):
    W = T.matrix("W")
    W_2 = W ** 2

    def f(x):
        return T.dot(x, W_2)

    X = T.matrix("X")
    out, _ = theano.scan(f, sequences=X)
    # keep_loop: without the rewrite that turns a map into whole-array operations
    with excluding(("scan_pushout_rows",) if keep_loop else ()):
        fn = theano.function([X, W], out, mode=mode)
    xv, wv = np.arange(6.0).reshape(3, 2), np.arange(4.0).reshape(2, 2)
    np.testing.assert_allclose(fn(xv, wv), xv @ wv ** 2)
    scans = [n for n in fn.fgraph.toposort() if isinstance(n.op, Scan)]
    assert len(scans) == (1 if keep_loop else 0)
    for node in scans:   # W ** 2 is computed once, outside the loop
        assert node.op.info.n_non_seqs <= 1
        assert all(n.op != (W ** 2).owner.op for n in toposort(node.op.inner_outputs,
                                                              blockers=node.op.inner_inputs))


def test_views_map_reduce_foldl_foldr(mode):
    x = T.vector("x")
    squares, _ = theano.map(lambda v: v * v, x)
    total, _ = theano.reduce(lambda v, acc: acc + v, x, T.constant(0.0))
    left, _ = theano.foldl(lambda v, acc: acc * 2 + v, x, T.constant(0.0))
    right, _ = theano.foldr(lambda v, acc: acc * 2 + v, x, T.constant(0.0))
    f = theano.function([x], [squares, total, left, right], mode=mode)
    xv = np.asarray([1.0, 2.0, 3.0])
    sq, tot, lf, rf = f(xv)
    np.testing.assert_allclose(sq, xv ** 2)
    assert tot == 6.0 and lf == ((1 * 2) + 2) * 2 + 3 and rf == ((3 * 2) + 2) * 2 + 1
