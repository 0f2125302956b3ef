"""Pieces several test modules share: pass exclusion, the LSTM step, the backward step's nodes."""
import contextlib

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


def backward_step(f):
    """(op, inner nodes in order) of the compiled function `f`'s backward ("grad of") scan."""
    node = next(n for n in f.fgraph.toposort()
                if isinstance(n.op, Scan) and n.op.info.name.startswith("grad of"))
    return node.op, toposort(node.op.inner_outputs)
