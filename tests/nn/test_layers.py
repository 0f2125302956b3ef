"""Dense, Embedding, Dropout, LayerNorm against NumPy and finite differences."""
import numpy as np
import pytest

import bptt
import bptt.nn as nn
import bptt.tensor as T
from bptt.graph.replace import clone_replace


def check_grad(module, build, inputs):
    """verify_grad over `inputs` and every parameter of `module` (PY mode)."""
    params = module.params()
    syms, out = build()

    def cost(*args):
        sub = dict(zip(syms + params, args))
        return clone_replace([out], sub)
    bptt.verify_grad(cost, list(inputs) + [p.get_value() for p in params], mode="PY",
                     rng=np.random.default_rng(0))


def test_dense(mode):
    d = nn.Dense(3, 2, dtype="float64", rng=0)
    x = T.tensor3("x")
    xv = np.random.default_rng(1).standard_normal((2, 4, 3))
    got = bptt.function([x], d(x), mode=mode)(xv)
    np.testing.assert_allclose(got, xv @ d.weight.get_value().T + d.bias.get_value(),
                               rtol=1e-12)
    check_grad(d, lambda: ([x], T.sum(T.tanh(d(x)))), [xv])
    nb = nn.Dense(3, 2, bias=False, weight_init=nn.init.orthogonal)
    assert nb.bias is None and len(nb.params()) == 1


def test_embedding_gradient_by_row():
    e = nn.Embedding(6, 2, dtype="float64", rng=0)
    idx = T.lmatrix("idx")
    iv = np.array([[1, 4], [1, 0]])
    out = e(idx)
    g = bptt.grad(T.sum(out * out), e.weight)
    got, gw = bptt.function([idx], [out, g], mode="PY")(iv)
    W = e.weight.get_value()
    np.testing.assert_array_equal(got, W[iv])
    want = np.zeros_like(W)
    np.add.at(want, iv, 2 * W[iv])
    np.testing.assert_allclose(gw, want)
    assert not gw[[2, 3, 5]].any()
    with pytest.raises(TypeError, match="integers"):
        e(T.matrix("x"))


def test_dropout_train_and_eval(mode):
    drop = nn.Dropout(0.25, seed=3)
    x = T.matrix("x")
    f = bptt.function([x], drop(x), mode=mode)
    a, b = f(np.ones((200, 50))), f(np.ones((200, 50)))
    assert set(np.unique(a)) <= {0.0, 1 / 0.75}
    assert abs((a == 0).mean() - 0.25) < 0.02
    assert not np.array_equal(a, b)  # the stream advances between calls
    drop.eval()
    np.testing.assert_array_equal(bptt.function([x], drop(x), mode=mode)(np.ones((3, 2))), 1)
    with pytest.raises(ValueError, match="p must be"):
        nn.Dropout(1.0)


def test_layernorm():
    ln = nn.LayerNorm(4, dtype="float64")
    ln.weight.set_value(np.array([1.0, 2, 3, 4]))
    ln.bias.set_value(np.array([0.5, 0, 0, -1]))
    x = T.matrix("x")
    xv = np.random.default_rng(2).standard_normal((3, 4))
    got = bptt.function([x], ln(x), mode="PY")(xv)
    z = (xv - xv.mean(-1, keepdims=True)) / np.sqrt(xv.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(got, z * ln.weight.get_value() + ln.bias.get_value(), rtol=1e-12)
    check_grad(ln, lambda: ([x], T.sum(T.sin(ln(x)))), [xv])
