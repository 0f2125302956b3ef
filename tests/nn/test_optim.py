"""Each optimizer against its published formula in NumPy; clipping; schedules."""
import math

import numpy as np
import pytest

import bptt
import bptt.nn as nn
import bptt.tensor as T

TARGET = np.array([[0.3, -1.2], [2.0, 0.1]])


def grad_np(w):
    return 4 * (w - TARGET) ** 3 + np.cos(w)


def run_bptt(make_updates, w0, n=6, lr=None):
    w = bptt.shared(w0.copy(), name="w")
    loss = T.sum((w - TARGET) ** 4) + T.sum(T.sin(w))
    step = bptt.function([], loss, updates=make_updates(loss, [w]), mode="PY")
    out = []
    for _ in range(n):
        step()
        out.append(w.get_value())
    return out


def reference(name, w, n, lr, **kw):
    state = {k: np.zeros_like(w) for k in ("v", "a", "m", "s")}
    out = []
    for t in range(1, n + 1):
        g = grad_np(w)
        if name == "sgd":
            w = w - lr * g
        elif name in ("momentum", "nesterov_momentum"):
            mu = kw.get("momentum", 0.9)
            state["v"] = mu * state["v"] - lr * g
            w = w + (mu * state["v"] - lr * g if name == "nesterov_momentum" else state["v"])
        elif name == "adagrad":
            state["a"] += g * g
            w = w - lr * g / np.sqrt(state["a"] + 1e-6)
        elif name == "rmsprop":
            state["a"] = 0.9 * state["a"] + 0.1 * g * g
            w = w - lr * g / np.sqrt(state["a"] + 1e-6)
        elif name in ("adam", "adamw"):
            if name == "adamw":
                w = w * (1 - lr * kw["weight_decay"])
            state["m"] = 0.9 * state["m"] + 0.1 * g
            state["s"] = 0.999 * state["s"] + 0.001 * g * g
            mh, sh = state["m"] / (1 - 0.9 ** t), state["s"] / (1 - 0.999 ** t)
            w = w - lr * mh / (np.sqrt(sh) + 1e-8)
        out.append(w)
    return out


CASES = [("sgd", {}), ("momentum", {"momentum": 0.8}), ("nesterov_momentum", {}),
         ("adagrad", {}), ("rmsprop", {}), ("adam", {}), ("adamw", {"weight_decay": 0.1})]


@pytest.mark.parametrize("name,kw", CASES)
def test_optimizer_matches_formula(name, kw):
    w0 = np.array([[0.1, 0.2], [-0.3, 0.4]])
    fn = getattr(nn, name)
    got = run_bptt(lambda loss, ps: fn(loss, ps, learning_rate=0.01, **kw), w0)
    want = reference(name, w0, 6, 0.01, **kw)
    for t, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-11, atol=1e-13, err_msg=f"{name} step {t + 1}")


@pytest.mark.parametrize("mode", ["PY", "NUMBA"])
def test_adam_counts_its_steps_in_an_int64(mode):
    w = bptt.shared(np.array([1.0, -2.0], "float32"), name="w")
    loss = T.sum(w * w)
    updates = nn.adam(loss, [w], 0.01)
    (step,) = [v for v in updates if v.name == "w.adam_step"]
    assert step.dtype == "int64"
    f = bptt.function([], loss, updates=updates, mode=mode)
    for _ in range(3):
        f()
    assert step.get_value().dtype == np.int64 and step.get_value() == 3


def test_shared_learning_rate_and_schedule():
    lr = bptt.shared(np.asarray(0.1), name="lr")
    w = bptt.shared(np.array([1.0, -2.0]), name="w")
    loss = T.sum(w * w)
    step = bptt.function([], loss, updates=nn.sgd(loss, [w], lr), mode="PY")
    sched = nn.step_schedule(0.1, 2, gamma=0.5)
    want = np.array([1.0, -2.0])
    for s in range(5):
        sched.apply(lr, s)
        step()
        want = want - sched(s) * 2 * want
    np.testing.assert_allclose(w.get_value(), want, rtol=1e-12)


def test_grads_list_and_clipping():
    w = bptt.shared(np.array([3.0, 4.0]), name="w")
    v = bptt.shared(np.array([12.0]), name="v")
    loss = 0.5 * T.sum(w * w) + 0.5 * T.sum(v * v)  # grads are w and v: norm 13
    grads = bptt.grad(loss, [w, v])
    clipped, norm = nn.clip_by_global_norm(grads, 6.5, return_norm=True)
    f = bptt.function([], clipped + [norm] + nn.clip_by_value(grads, 3.5), mode="PY")
    cw, cv, n, vw, vv = f()
    assert np.isclose(n, 13)
    np.testing.assert_allclose(cw, [1.5, 2.0], rtol=1e-6)
    np.testing.assert_allclose(cv, [6.0], rtol=1e-6)
    np.testing.assert_array_equal(vw, [3.0, 3.5])
    np.testing.assert_array_equal(vv, [3.5])
    unclipped = bptt.function([], nn.clip_by_global_norm(grads, 100.0), mode="PY")()
    np.testing.assert_allclose(unclipped[0], [3, 4])
    upd = nn.sgd(clipped, [w, v], 1.0)
    bptt.function([], [], updates=upd, mode="PY")()
    np.testing.assert_allclose(w.get_value(), [1.5, 2.0], rtol=1e-6)
    with pytest.raises(ValueError, match="2 gradients for 1"):
        nn.sgd(grads, [w], 0.1)
    with pytest.raises(ValueError, match="no parameters"):
        nn.adam(loss, [])


def test_schedules():
    c = nn.cosine_schedule(1.0, 10, minimum=0.1)
    assert c(0) == 1.0 and math.isclose(c(10), 0.1) and math.isclose(c(5), 0.55)
    assert c(20) == c(10)
    w = nn.warmup_schedule(c, 4)
    assert [round(w(s), 6) for s in range(3)] == [0.25, round(0.5 * c(1), 6), round(0.75 * c(2), 6)]
    assert w(7) == c(7)
    assert nn.warmup_schedule(0.2, 2)(0) == 0.1
    s = nn.step_schedule(1.0, 3, 0.1)
    assert [s(i) for i in (0, 2, 3, 6)] == [1.0, 1.0, 0.1, pytest.approx(0.01)]
    assert nn.constant_schedule(0.3)(100) == 0.3
