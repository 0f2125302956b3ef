"""Module: names, params(), state_dict round trips and load errors; initialisers."""
import numpy as np
import pytest

import bptt.nn as nn
from bptt.nn import init


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(5, 3, rng=0)
        self.lstm = nn.LSTM(3, 4, rng=1)
        self.out = nn.Dense(4, 5, rng=2)
        self.add_param("scale", np.ones(2), trainable=False)

    def forward(self, x):
        return x


def test_names_and_params():
    net = Net()
    names = [n for n, _ in net.named_params()]
    assert names == ["emb.weight", "lstm.weight_ih_l0", "lstm.weight_hh_l0", "lstm.bias_ih_l0",
                     "lstm.bias_hh_l0", "out.weight", "out.bias"]
    assert [p.name for p in net.params()] == names
    assert "scale" in net.state_dict() and "scale" not in names
    assert net.n_params() == 15 + 4 * 4 * 3 + 4 * 4 * 4 + 2 * 16 + 20 + 5
    assert net.lstm.state_dict()["weight_ih_l0"].shape == (16, 3)


def test_state_dict_round_trip(tmp_path):
    a, b = Net(), Net()
    for p in b.params():
        p.set_value(p.get_value() + 1)
    path = tmp_path / "net.npz"
    nn.save(a, path)
    nn.load(b, path)
    for (n, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        np.testing.assert_array_equal(x, y, err_msg=n)
    sd = a.state_dict()
    sd["out.bias"][:] = 7  # a copy: the module is unchanged
    assert not np.any(a.out.bias.get_value() == 7)


def test_load_errors_name_every_problem_and_change_nothing():
    net = Net()
    sd = net.state_dict()
    before = net.out.weight.get_value()
    del sd["emb.weight"]
    sd["extra"] = np.zeros(1)
    sd["out.weight"] = np.zeros((3, 3))
    with pytest.raises(ValueError) as err:
        net.load_state_dict(sd)
    msg = str(err.value)
    assert "missing entries: emb.weight" in msg and "unexpected entries: extra" in msg
    assert "'out.weight' has shape (3, 3)" in msg and "(5, 4)" in msg
    np.testing.assert_array_equal(net.out.weight.get_value(), before)
    assert "strict=False" in msg
    with pytest.raises(ValueError) as err:   # strict=False does not ignore a shape: no hint
        net.load_state_dict(sd, strict=False)
    assert "'out.weight' has shape (3, 3)" in str(err.value)
    assert "strict=False" not in str(err.value)
    sd["out.weight"] = before + 1
    net.load_state_dict(sd, strict=False)
    np.testing.assert_array_equal(net.out.weight.get_value(), before + 1)


def test_float64_values_load_into_float32():
    d = nn.Dense(2, 2, dtype="float32")
    d.load_state_dict({"weight": np.ones((2, 2)), "bias": np.zeros(2)})
    assert d.weight.get_value().dtype == np.float32


def test_sequential_and_train_eval():
    s = nn.Sequential(nn.Dense(2, 3), nn.Dropout(0.5), nn.Dense(3, 1))
    assert [n for n, _ in s.named_params()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    s.eval()
    assert not any(m.training for m in s.modules())
    s.train()
    assert all(m.training for m in s.modules())


def test_initialisers():
    shape = (300, 200)
    fan_in, fan_out = 200, 300
    w = init.glorot_uniform(shape, rng=0)
    a = np.sqrt(6 / (fan_in + fan_out))
    assert np.abs(w).max() <= a and np.abs(w).max() > 0.99 * a
    assert np.isclose(init.glorot_normal(shape, rng=0).std(), np.sqrt(2 / (fan_in + fan_out)),
                      rtol=0.02)
    assert np.isclose(init.he_normal(shape, rng=0).std(), np.sqrt(2 / fan_in), rtol=0.02)
    assert np.abs(init.he_uniform(shape, rng=0)).max() <= np.sqrt(6 / fan_in)
    q = init.orthogonal((5, 3), rng=0)
    np.testing.assert_allclose(q.T @ q, np.eye(3), atol=1e-12)
    q = init.orthogonal((3, 5), gain=2.0, rng=0)
    np.testing.assert_allclose(q @ q.T, 4 * np.eye(3), atol=1e-12)
    np.testing.assert_array_equal(init.glorot_uniform(shape, rng=3), init.glorot_uniform(shape, rng=3))
    assert not np.array_equal(init.glorot_uniform(shape, rng=3), init.glorot_uniform(shape, rng=4))
    assert init.zeros((2,)).sum() == 0 and init.constant((2,), 3.0).sum() == 6
    assert init.xavier_uniform is init.glorot_uniform
    with pytest.raises(ValueError, match="orthogonal"):
        init.orthogonal((3,))
    with pytest.raises(TypeError, match="rng"):
        init.normal((2,), rng="seed")
