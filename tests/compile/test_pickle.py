"""Compiled functions pickle and deep-copy: as their graph, mode and shared values."""
import copy
import multiprocessing
import pickle

import numpy as np
import pytest

import bptt
import bptt.tensor as T


def _rnn_training_step(mode, name="step"):
    """A scan RNN's loss, with an SGD update of W and a default-valued input."""
    W = bptt.shared(np.array([[0.5, -0.2], [0.1, 0.3]]), name="W")
    x = T.dmatrix("x")
    h, _ = bptt.scan(lambda x_t, h: T.tanh(T.dot(h, W) + x_t), sequences=x,
                     outputs_info=T.zeros(2))
    loss = (h ** 2).sum()
    step = bptt.function([bptt.In(x, value=np.ones((3, 2)))], loss,
                         updates=[(W, W - 0.1 * bptt.grad(loss, W))], mode=mode, name=name)
    evaluate = bptt.function([x], loss, mode=mode)
    return W, step, evaluate


def _numpy_loss(W, x):
    h, total = np.zeros(2), 0.0
    for x_t in x:
        h = np.tanh(h @ W + x_t)
        total += (h ** 2).sum()
    return total


def test_a_pickled_function_computes_and_updates_as_the_original():
    W, step, evaluate = _rnn_training_step("PY")
    step2, evaluate2 = pickle.loads(pickle.dumps((step, evaluate)))
    W0 = W.get_value()
    assert step2() == pytest.approx(_numpy_loss(W0, np.ones((3, 2))))
    # The copies share one W between them (pickled together), not with the original.
    W_copy = step2.shared[0]
    assert evaluate2.shared[0] is W_copy and W_copy is not W
    assert not np.allclose(W_copy.get_value(), W0)
    np.testing.assert_array_equal(W.get_value(), W0)
    x = np.full((4, 2), 0.5)
    assert evaluate2(x) == pytest.approx(_numpy_loss(W_copy.get_value(), x))
    assert step2.name == "step" and step2.mode == "PY"


def test_deepcopy_of_a_model_keeps_its_functions_on_its_own_parameters():
    # rnnslu's pattern: best = copy.deepcopy(model), then train the model on.
    class Model:
        pass

    model = Model()
    model.W, model.step, model.evaluate = _rnn_training_step("PY")
    best = copy.deepcopy(model)
    saved = best.W.get_value()
    model.step()
    assert not np.allclose(model.W.get_value(), saved)
    np.testing.assert_array_equal(best.W.get_value(), saved)
    assert best.step.shared[0] is best.W and best.evaluate.shared[0] is best.W
    best.step()
    assert not np.allclose(best.W.get_value(), saved)


def test_random_streams_continue_after_pickling():
    srng = bptt.RandomStreams(7)
    u = srng.uniform(size=(3,))
    f = bptt.function([], u, mode="PY")
    g = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(g(), f())   # the same generator state was pickled
    assert not np.array_equal(g(), g())


def _call_pickled(payload):
    f = pickle.loads(payload)
    return float(f()), f.shared[0].get_value()


def _call_pickled_numba(payload, cache_dir):
    bptt.config.check_ir = False       # the graph memo is off while the IR is checked
    f = pickle.loads(payload)
    return float(f()), f._rewritten


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_functions_cross_process_boundaries_in_py_mode(start):
    W, step, _ = _rnn_training_step("PY")
    expected = _numpy_loss(W.get_value(), np.ones((3, 2)))
    with multiprocessing.get_context(start).Pool(1) as pool:
        loss, W_after = pool.apply(_call_pickled, (pickle.dumps(step),))
    assert loss == pytest.approx(expected)
    assert not np.allclose(W_after, W.get_value())   # the child updated its own copy


def test_a_numba_function_reloads_in_a_fresh_process_without_rewriting(monkeypatch):
    monkeypatch.setattr(bptt.config, "check_ir", False)
    W, step, _ = _rnn_training_step("NUMBA")
    expected = _numpy_loss(W.get_value(), np.ones((3, 2)))
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        loss, rewritten = pool.apply(_call_pickled_numba,
                                     (pickle.dumps(step), bptt.config.cache_dir))
    assert loss == pytest.approx(expected)
    assert rewritten is False    # found in the graph memo: no rewrite, no code generation
