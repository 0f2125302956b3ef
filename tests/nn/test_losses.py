"""Losses from logits against NumPy formulas, masks, reductions and gradients."""
import numpy as np
import pytest

import bptt
import bptt.nn as nn
import bptt.tensor as T


def np_log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def run(expr, ins, vals, mode="PY"):
    return bptt.function(ins, expr, mode=mode)(*vals)


@pytest.mark.parametrize("reduction,mode", [("mean", "NUMBA"), ("mean", "PY"), ("sum", "PY"),
                                            ("none", "PY")])
def test_cross_entropy(reduction, mode):
    rng = np.random.default_rng(0)
    z, t = rng.standard_normal((4, 3, 5)) * 50, rng.integers(0, 5, (4, 3))  # large logits
    m = (rng.random((4, 3)) > 0.3).astype(float)
    x, y, mk = T.tensor3("z"), T.lmatrix("t"), T.matrix("m")
    got = run(nn.cross_entropy(x, y, mk, reduction), [x, y, mk], [z, t, m], mode)
    per = -np.take_along_axis(np_log_softmax(z), t[..., None], -1)[..., 0] * m
    want = {"mean": per.sum() / m.sum(), "sum": per.sum(), "none": per}[reduction]
    np.testing.assert_allclose(got, want, rtol=1e-10)
    assert np.all(np.isfinite(got))
    unmasked = run(nn.cross_entropy(x, y), [x, y], [z, t])
    want = -np.take_along_axis(np_log_softmax(z), t[..., None], -1).mean()
    np.testing.assert_allclose(unmasked, want, rtol=1e-10)


def test_cross_entropy_gradient_is_softmax_minus_onehot():
    z, t = np.array([[1000.0, 0.0, -1000.0], [0.5, 0.2, 0.1]]), np.array([2, 0])
    x, y = T.matrix("z"), T.lvector("t")
    g = run(bptt.grad(nn.cross_entropy(x, y, reduction="sum"), x), [x, y], [z, t])
    p = np.exp(np_log_softmax(z))
    np.testing.assert_allclose(g, p - np.eye(3)[t], atol=1e-12)
    bptt.verify_grad(lambda a: nn.cross_entropy(a, T.constant(t)), [z[1:] * np.ones((2, 1))],
                     mode="PY", rng=np.random.default_rng(1))


def test_bce_with_logits_and_mse():
    rng = np.random.default_rng(2)
    z, t, m = rng.standard_normal(6) * 40, rng.random(6), np.array([1, 1, 0, 1, 0, 1.0])
    x, y, mk = T.vector("z"), T.vector("t"), T.vector("m")
    got = run(nn.binary_cross_entropy_with_logits(x, y, mk), [x, y, mk], [z, t, m])
    per = np.logaddexp(0, z) - t * z
    np.testing.assert_allclose(got, (per * m).sum() / m.sum(), rtol=1e-12)
    sig = 1 / (1 + np.exp(-z[:2] / 40))
    small = run(nn.binary_cross_entropy_with_logits(x, y, reduction="none"), [x, y],
                [z[:2] / 40, t[:2]])
    np.testing.assert_allclose(small, -(t[:2] * np.log(sig) + (1 - t[:2]) * np.log(1 - sig)),
                               rtol=1e-12)
    got = run(nn.mse(x, y, mk, "sum"), [x, y, mk], [z, t, m])
    np.testing.assert_allclose(got, (((z - t) ** 2) * m).sum())
    np.testing.assert_allclose(run(nn.mse(x, y), [x, y], [z, t]), ((z - t) ** 2).mean())
    bptt.verify_grad(lambda a, b: nn.binary_cross_entropy_with_logits(a, b), [z / 10, t],
                     mode="PY", rng=np.random.default_rng(3))


def test_loss_errors():
    with pytest.raises(TypeError, match="integer class indices"):
        nn.cross_entropy(T.matrix("z"), T.matrix("t"))
    with pytest.raises(ValueError, match="reduction"):
        nn.mse(T.vector("a"), T.vector("b"), reduction="avg")
    with pytest.raises(ValueError, match="mask has 2"):
        nn.mse(T.vector("a"), T.vector("b"), mask=T.matrix("m"))
