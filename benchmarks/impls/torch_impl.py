"""PyTorch eager: a Python loop over the steps, ``torch.autograd.grad`` for BPTT."""
from __future__ import annotations

from .cases import Built

KINDS = ("rnn", "lstm")


def _torch():
    import torch

    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)
        torch.set_num_interop_threads(1)  # allowed once, before any parallel work
    return torch


def prepare_tensors(args):
    """Inputs [X, h0, (c0,) Wx, Wh, b] as tensors; all but X require gradients."""
    torch = _torch()
    out = [torch.from_numpy(args[0])]
    for a in args[1:]:
        out.append(torch.from_numpy(a.copy()).requires_grad_(True))
    return out


def to_numpy(result):
    return [r.detach().numpy() for r in result]


def _rnn(X, h0, Wx, Wh, b):
    torch = _torch()
    h, hs = h0, []
    for x in X:
        h = torch.tanh(x @ Wx + h @ Wh + b)
        hs.append(h)
    H = torch.stack(hs)
    loss = 0.5 * (H * H).sum()
    return [loss, *torch.autograd.grad(loss, [Wx, Wh, b, h0])]


def _lstm(X, h0, c0, Wx, Wh, b):
    torch = _torch()
    h, c, hs = h0, c0, []
    for x in X:
        i, f, o, g = (x @ Wx + h @ Wh + b).chunk(4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        hs.append(h)
    H = torch.stack(hs)
    loss = 0.5 * (H * H).sum()
    return [loss, *torch.autograd.grad(loss, [Wx, Wh, b, h0, c0])]


def build(kind, dtype):
    _torch()
    return Built(prepare_tensors, _rnn if kind == "rnn" else _lstm, to_numpy)
