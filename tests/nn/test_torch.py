"""Weights load from torch and give torch's outputs and gradients (skipped without torch)."""
import numpy as np
import pytest

import bptt
import bptt.nn as nn
import bptt.tensor as T

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_sequence_layer_matches_torch(kind):
    torch.manual_seed(0)
    tl = getattr(torch.nn, kind)(3, 4, num_layers=2, bidirectional=True).double()
    layer = getattr(nn, kind)(3, 4, num_layers=2, bidirectional=True, dtype="float64")
    layer.load_state_dict({k: v.detach().numpy() for k, v in tl.state_dict().items()})
    x = T.tensor3("x")
    y, fin = layer(x)
    h_n = fin[0] if kind == "LSTM" else fin
    cost = T.sum(y * y) + T.sum(h_n)
    f = bptt.function([x], [y, h_n] + bptt.grad(cost, layer.params()), mode="PY")
    xv = np.random.default_rng(0).standard_normal((5, 2, 3))
    got = f(xv)
    ty, tfin = tl(torch.tensor(xv))
    th = tfin[0] if kind == "LSTM" else tfin
    (ty * ty).sum().add(th.sum()).backward()
    np.testing.assert_allclose(got[0], ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[1], th.detach().numpy(), rtol=1e-10, atol=1e-12)
    named = dict(tl.named_parameters())
    for (name, _), g in zip(layer.named_params(), got[2:]):
        np.testing.assert_allclose(g, named[name].grad.numpy(), rtol=1e-9, atol=1e-11,
                                   err_msg=name)


def test_dense_embedding_layernorm_match_torch():
    torch.manual_seed(1)
    td, te, tn = torch.nn.Linear(3, 2).double(), torch.nn.Embedding(5, 3).double(), \
        torch.nn.LayerNorm(3).double()
    d, e, n = nn.Dense(3, 2, dtype="float64"), nn.Embedding(5, 3, dtype="float64"), \
        nn.LayerNorm(3, dtype="float64")
    for mine, theirs in ((d, td), (e, te), (n, tn)):
        mine.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    idx = T.lmatrix("idx")
    out = d(n(e(idx)))
    iv = np.array([[0, 4], [2, 2]])
    got = bptt.function([idx], out, mode="PY")(iv)
    want = td(tn(te(torch.tensor(iv)))).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_adam_matches_torch():
    rng = np.random.default_rng(2)
    w0 = rng.standard_normal((3, 2))
    target = rng.standard_normal((3, 2))
    w = bptt.shared(w0.copy(), name="w")
    loss = T.sum((w - target) ** 4)
    step = bptt.function([], loss, updates=nn.adam(loss, [w], learning_rate=0.05), mode="PY")
    tw = torch.tensor(w0.copy(), requires_grad=True)
    opt = torch.optim.Adam([tw], lr=0.05)
    for _ in range(20):
        step()
        opt.zero_grad()
        ((tw - torch.tensor(target)) ** 4).sum().backward()
        opt.step()
    np.testing.assert_allclose(w.get_value(), tw.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_adamw_matches_torch():
    rng = np.random.default_rng(3)
    w0 = rng.standard_normal(4)
    w = bptt.shared(w0.copy(), name="w")
    loss = T.sum(T.sin(w) * w)
    upd = nn.adamw(loss, [w], learning_rate=0.1, weight_decay=0.3)
    step = bptt.function([], loss, updates=upd, mode="PY")
    tw = torch.tensor(w0.copy(), requires_grad=True)
    opt = torch.optim.AdamW([tw], lr=0.1, weight_decay=0.3)
    for _ in range(10):
        step()
        opt.zero_grad()
        (torch.sin(tw) * tw).sum().backward()
        opt.step()
    np.testing.assert_allclose(w.get_value(), tw.detach().numpy(), rtol=1e-10, atol=1e-12)
