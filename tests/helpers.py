"""Pieces several test modules share: pass exclusion, compiling without rewrites, the LSTM
step and gradient graph, the RNN gradient by a NumPy loop, the backward step's nodes."""
import contextlib

import numpy as np

import bptt
import bptt.tensor as T
from bptt.config import config
from bptt.graph.traversal import toposort
from bptt.scan import Scan


@contextlib.contextmanager
def excluding(names):
    """Compile with the rewrite passes `names` skipped, besides those already skipped."""
    old = config.exclude_rewrites
    config.exclude_rewrites = old + tuple(n for n in names if n not in old)
    try:
        yield
    finally:
        config.exclude_rewrites = old


@contextlib.contextmanager
def without_rewrites():
    """Compile with no rewrite pass at all (``config.rewrites`` off): the reference graph."""
    old = config.rewrites
    config.rewrites = False
    try:
        yield
    finally:
        config.rewrites = old


def lstm_step(x, h, c, Wx, Wh, b):
    """One LSTM step: ``z = x @ Wx + h @ Wh + b`` cut into the gates i, f, o, g by slices."""
    n = h.shape[1]
    z = T.dot(x, Wx) + T.dot(h, Wh) + b
    i = T.nnet.sigmoid(z[:, :n])
    f = T.nnet.sigmoid(z[:, n:2 * n])
    o = T.nnet.sigmoid(z[:, 2 * n:3 * n])
    g = T.tanh(z[:, 3 * n:])
    c_new = f * c + i * g
    return o * T.tanh(c_new), c_new



def rnn_grad_graph(dtype="float64", n_steps=None, **scan_kw):
    """(inputs, [loss] + gradients wrt U, W, b, h0) of the benchmark's tanh RNN over X,
    ``h_t = tanh(x_t @ U + h_{t-1} @ W + b)``, loss 0.5 * sum(h ** 2): inputs X, h0, U, W, b.
    `scan_kw` goes to `bptt.scan` (truncate_gradient, go_backwards, name)."""
    X, h0 = T.tensor3("X", dtype=dtype), T.matrix("h0", dtype=dtype)
    U, W, b = T.matrix("U", dtype=dtype), T.matrix("W", dtype=dtype), T.vector("b", dtype=dtype)
    hs, _ = bptt.scan(lambda x, h, U, W, b: T.tanh(T.dot(x, U) + T.dot(h, W) + b),
                      sequences=X, outputs_info=h0, non_sequences=[U, W, b], n_steps=n_steps,
                      **scan_kw)
    loss = 0.5 * (hs ** 2).sum()
    return [X, h0, U, W, b], [loss] + bptt.grad(loss, [U, W, b, h0])


def numpy_rnn_grads(x, h0, u, w, b, n):
    """Loss and gradients (U, W, b, h0) of ``h_t = tanh(x_t @ U + h_{t-1} @ W + b)`` over the
    first n rows of x, loss 0.5 * sum(h ** 2), by a plain NumPy loop (W may have one
    column: ``h @ W`` then broadcasts across H and dW sums dpre's columns)."""
    hs = [h0]
    for t in range(n):
        hs.append(np.tanh(x[t] @ u + hs[-1] @ w + b))
    du, dw, db, g = np.zeros_like(u), np.zeros_like(w), np.zeros_like(b), np.zeros_like(h0)
    for t in reversed(range(n)):
        dpre = (g + hs[t + 1]) * (1 - hs[t + 1] ** 2)
        dw_pre = dpre.sum(1, keepdims=True) if w.shape[1] == 1 else dpre
        du, dw, db = du + x[t].T @ dpre, dw + hs[t].T @ dw_pre, db + dpre.sum(0)
        g = dw_pre @ w.T
    return [0.5 * sum((h ** 2).sum() for h in hs[1:]), du, dw, db, g]


def lstm_grad_graph():
    """(inputs, [loss] + gradients wrt all inputs but X) of an LSTM over X with the loss
    0.5 * sum(h ** 2), as the benchmark's: inputs X, h0, c0, Wx, Wh, b."""
    X, h0, c0 = T.tensor3("X"), T.matrix("h0"), T.matrix("c0")
    Wx, Wh, b = T.matrix("Wx"), T.matrix("Wh"), T.vector("b")
    (hs, cs), _ = bptt.scan(lstm_step, sequences=X, outputs_info=[h0, c0],
                            non_sequences=[Wx, Wh, b])
    loss = 0.5 * (hs ** 2).sum()
    ins = [X, h0, c0, Wx, Wh, b]
    return ins, [loss] + bptt.grad(loss, ins[1:])

def backward_step(f):
    """(op, inner nodes in order) of the compiled function `f`'s backward ("grad of") scan."""
    node = next(n for n in f.fgraph.toposort()
                if isinstance(n.op, Scan) and n.op.info.name.startswith("grad of"))
    return node.op, toposort(node.op.inner_outputs)
