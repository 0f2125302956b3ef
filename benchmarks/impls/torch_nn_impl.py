"""PyTorch ``nn.LSTM`` (its fused CPU kernel) with ``torch.autograd.grad``.

nn.LSTM orders its gates [i | f | g | o] along the rows of ``weight_ih``
(4H x In) and has two biases; our layout is [i | f | o | g] along the columns
of Wx (In x 4H). ``prepare`` copies our weights in (bias_hh = 0) and
``to_numpy`` maps the gradients back (not timed).
"""
from __future__ import annotations

import numpy as np

from .cases import Built
from .torch_impl import _torch

KINDS = ("lstm",)


def _gate_order(n):
    """Our column index for each row of nn.LSTM's weights: [i f g o] <- [i f o g]."""
    i, f, o, g = (np.arange(k * n, (k + 1) * n) for k in range(4))
    return np.concatenate([i, f, g, o])


def build(kind, dtype):
    torch = _torch()

    def prepare(args):
        X, h0, c0, Wx, Wh, b = args
        n = h0.shape[1]
        perm = _gate_order(n)
        cell = torch.nn.LSTM(X.shape[2], n, dtype=getattr(torch, dtype))
        with torch.no_grad():
            cell.weight_ih_l0.copy_(torch.from_numpy(Wx[:, perm].T.copy()))
            cell.weight_hh_l0.copy_(torch.from_numpy(Wh[:, perm].T.copy()))
            cell.bias_ih_l0.copy_(torch.from_numpy(b[perm].copy()))
            cell.bias_hh_l0.zero_()
        h0t = torch.from_numpy(h0.copy()).requires_grad_(True)
        c0t = torch.from_numpy(c0.copy()).requires_grad_(True)
        return [cell, torch.from_numpy(X), h0t, c0t, perm]

    def run(cell, X, h0, c0, perm):
        H, _ = cell(X, (h0[None], c0[None]))
        loss = 0.5 * (H * H).sum()
        wanted = [cell.weight_ih_l0, cell.weight_hh_l0, cell.bias_ih_l0, h0, c0]
        return [loss, *torch.autograd.grad(loss, wanted), perm]

    def to_numpy(result):
        loss, g_ih, g_hh, g_b, g_h0, g_c0, perm = result
        out = [loss.detach().numpy()]
        for g in (g_ih.T, g_hh.T, g_b):  # back to our column order
            mapped = np.empty_like(g.detach().numpy())
            mapped[..., perm] = g.detach().numpy()
            out.append(mapped)
        return out + [g_h0.detach().numpy(), g_c0.detach().numpy()]

    return Built(prepare, run, to_numpy)
