"""User-shaped graphs for the compile and threads benchmarks: what people write with bptt.

Each builder takes ``tiny`` (small sizes, for the test that they build) and
returns ``(function, args)``: a `bptt.function` compiled in the current
``bptt.config.mode`` and the arguments of one call. `GRAPHS` names them:

* ``charlm-{lstm,gru,rnn}-train``: the char-LM training step of docs/training.md
  (embedding, the cell, a dense layer, softmax cross-entropy, global-norm
  clipping, Adam, the state carried in shared variables), T=64 B=32 H=128;
* ``charlm-lstm-eval``: the same model's loss, no updates (its evaluation function);
* ``digits-{gru,lstm}``: a digit classifier's training step, 8 steps of 8
  features, the last state through a dense layer and softmax cross-entropy, SGD;
* ``bilstm-2layer``: a 2-layer bidirectional LSTM's training step (squared error);
* ``scan-until``: a loop that stops on a condition (the seeds' powers of two);
* ``scan-nested``: a scan whose step is a scan, and its gradient;
* ``seed-*``: the examples of Theano's scan documentation (tests/scan/test_seed_examples.py).
"""
from __future__ import annotations

import numpy as np

import bptt
import bptt.nn as nn
import bptt.tensor as T
from bptt.scan import until

VOCAB = 65


class _CharLM(nn.Module):
    def __init__(self, cell, embed, hidden):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, embed, rng=0)
        self.rnn = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}[cell](embed, hidden, rng=1)
        self.out = nn.Dense(hidden, VOCAB, rng=2)

    def forward(self, x, state=None):
        y, state = self.rnn(self.embed(x), state)
        return self.out(y), state


def _char_ids(t, b, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(0, VOCAB, size=(t, b)) for _ in range(2)]


def charlm_train(cell, tiny=False):
    """The char-LM training step of docs/training.md with `cell` ("lstm", "gru", "rnn")."""
    t, b, e, h = (5, 2, 4, 6) if tiny else (64, 32, 32, 128)
    model = _CharLM(cell, e, h)
    states = [bptt.shared(np.zeros((1, b, h)), name=n)
              for n in (("h", "c") if cell == "lstm" else ("h",))]
    x, y = T.lmatrix("x"), T.lmatrix("y")
    logits, new = model(x, tuple(states) if cell == "lstm" else states[0])
    new = list(new) if cell == "lstm" else [new]
    loss = nn.cross_entropy(logits, y)
    grads = nn.clip_by_global_norm(bptt.grad(loss, model.params()), 1.0)
    updates = nn.adam(grads, model.params(), learning_rate=3e-3)
    for s, n in zip(states, new):
        updates[s] = n
    return bptt.function([x, y], loss, updates=updates), _char_ids(t, b)


def charlm_eval(tiny=False):
    """The char-LM's evaluation function: the loss of a window, from a zero state."""
    t, b, e, h = (5, 2, 4, 6) if tiny else (64, 32, 32, 128)
    model = _CharLM("lstm", e, h)
    x, y = T.lmatrix("x"), T.lmatrix("y")
    logits, _ = model(x)
    return bptt.function([x, y], nn.cross_entropy(logits, y)), _char_ids(t, b)


class _Classifier(nn.Module):
    def __init__(self, cell, n_in, hidden, classes):
        super().__init__()
        self.rnn = {"lstm": nn.LSTM, "gru": nn.GRU}[cell](n_in, hidden, rng=1)
        self.out = nn.Dense(hidden, classes, rng=2)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.out(y[-1])


def digits(cell, tiny=False):
    """A digit classifier's training step: 8 steps of 8 features (an 8 x 8 image by rows)."""
    b, h = (3, 5) if tiny else (64, 64)
    model = _Classifier(cell, 8, h, 10)
    x, y = T.tensor3("x"), T.lvector("y")
    loss = nn.cross_entropy(model(x), y)
    updates = nn.sgd(bptt.grad(loss, model.params()), model.params(), learning_rate=0.1)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((8, b, 8)), rng.integers(0, 10, size=b)]
    return bptt.function([x, y], loss, updates=updates), args


def bilstm(tiny=False):
    """A 2-layer bidirectional LSTM's training step, squared error against a target."""
    t, b, f, h = (4, 2, 3, 5) if tiny else (50, 16, 32, 64)
    lstm = nn.LSTM(f, h, num_layers=2, bidirectional=True, rng=1)
    x, target = T.tensor3("x"), T.tensor3("target")
    y, _ = lstm(x)
    loss = nn.mse(y, target)
    updates = nn.sgd(bptt.grad(loss, lstm.params()), lstm.params(), learning_rate=0.01)
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((t, b, f)), rng.standard_normal((t, b, 2 * h))]
    return bptt.function([x, target], loss, updates=updates), args


def scan_until(tiny=False):
    """Powers of two until one exceeds a bound (the seeds' `until` example)."""
    max_value = T.dscalar("max_value")

    def power_of_2(previous, bound):
        return previous * 2, until(previous * 2 > bound)

    values, _ = bptt.scan(power_of_2, outputs_info=T.constant(1.0), non_sequences=max_value,
                          n_steps=1024)
    return bptt.function([max_value], values), [np.asarray(45.0)]


def scan_nested(tiny=False):
    """A scan whose step runs a scan (a running sum of each row), and its gradient."""
    X = T.dmatrix("X")

    def row_total(row, acc):
        partial, _ = bptt.scan(lambda v, s: s + v * v, sequences=row, outputs_info=acc)
        return partial[-1]

    totals, _ = bptt.scan(row_total, sequences=X, outputs_info=T.constant(0.0))
    loss = totals.sum()
    n = (3, 4) if tiny else (20, 30)
    return (bptt.function([X], [loss, bptt.grad(loss, X)]),
            [np.random.default_rng(0).standard_normal(n)])


def seed_power(tiny=False):
    """``A ** k`` elementwise by a scan (the seeds' first example)."""
    k, A = T.iscalar("k"), T.dvector("A")
    result, _ = bptt.scan(lambda prior, A: prior * A, outputs_info=T.ones_like(A),
                          non_sequences=A, n_steps=k)
    return bptt.function([A, k], result[-1]), [np.arange(10.0), np.asarray(2, dtype=np.int32)]


def seed_polynomial(tiny=False):
    """A polynomial's value from its coefficients, by a scan over them and an arange."""
    coefficients, x = T.dvector("coefficients"), T.dscalar("x")
    components, _ = bptt.scan(lambda c, power, x: c * (x ** power), outputs_info=None,
                              sequences=[coefficients, T.arange(1000)], non_sequences=x)
    return (bptt.function([coefficients, x], components.sum()),
            [np.asarray([1.0, 0.0, 2.0]), np.asarray(3.0)])


def seed_taps(tiny=False):
    """The seeds' RNN with several taps (u[t-4], u[t], x[t-3], x[t-1], y[t-1]) and its grad."""
    n = 3 if tiny else 10
    W, W_in_1, W_in_2, W_feedback, W_out = (T.dmatrix(s) for s in
                                            ("W", "W_in_1", "W_in_2", "W_feedback", "W_out"))
    u, x0, y0 = T.dmatrix("u"), T.dmatrix("x0"), T.dvector("y0")

    def one_step(u_tm4, u_t, x_tm3, x_tm1, y_tm1, W, W_in_1, W_in_2, W_feedback, W_out):
        x_t = T.tanh(T.dot(x_tm1, W) + T.dot(u_t, W_in_1) + T.dot(u_tm4, W_in_2)
                     + T.dot(y_tm1, W_feedback))
        y_t = T.dot(x_tm3, W_out)
        return [x_t, y_t]

    (x_vals, y_vals), _ = bptt.scan(
        one_step, sequences=dict(input=u, taps=[-4, 0]),
        outputs_info=[dict(initial=x0, taps=[-3, -1]), y0],
        non_sequences=[W, W_in_1, W_in_2, W_feedback, W_out])
    loss = (y_vals ** 2).sum()
    params = [W, W_in_1, W_in_2, W_feedback, W_out]
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((20, n)) * 0.1, rng.standard_normal((3, n)) * 0.1,
            rng.standard_normal(n) * 0.1]
    args += [rng.standard_normal((n, n)) * 0.1 for _ in params]
    return bptt.function([u, x0, y0] + params, [loss] + bptt.grad(loss, params)), args


GRAPHS = {
    "charlm-lstm-train": lambda tiny=False: charlm_train("lstm", tiny),
    "charlm-gru-train": lambda tiny=False: charlm_train("gru", tiny),
    "charlm-rnn-train": lambda tiny=False: charlm_train("rnn", tiny),
    "charlm-lstm-eval": charlm_eval,
    "digits-gru": lambda tiny=False: digits("gru", tiny),
    "digits-lstm": lambda tiny=False: digits("lstm", tiny),
    "bilstm-2layer": bilstm,
    "scan-until": scan_until,
    "scan-nested": scan_nested,
    "seed-power": seed_power,
    "seed-polynomial": seed_polynomial,
    "seed-taps": seed_taps,
}
