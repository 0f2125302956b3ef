"""Sequence classification: scikit-learn's handwritten digits read row by row by a GRU.

The 1797 8x8 images ship with scikit-learn (no download). Each image is a
sequence of 8 steps (its rows) of 8 features; a GRU reads it and a Dense
layer classifies its final state into the 10 digits. A fixed 25% of the
images is held out.

    PYTHONPATH=. python examples/digits.py [--cell lstm]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import bptt
import bptt.nn as nn
import bptt.tensor as T


def load(seed=0):
    from sklearn.datasets import load_digits

    d = load_digits()
    x = (d.images / 16.0).astype(bptt.config.floatX)      # (N, 8, 8) in [0, 1]
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = len(x) // 4
    test, train = order[:n_test], order[n_test:]
    return (x[train], d.target[train]), (x[test], d.target[test])


class Classifier(nn.Module):
    def __init__(self, cell, hidden):
        super().__init__()
        layer = nn.GRU if cell == "gru" else nn.LSTM
        self.rnn = layer(8, hidden, rng=0)
        self.out = nn.Dense(hidden, 10, rng=1)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.out(y[-1])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cell", choices=["gru", "lstm"], default="gru")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-3)
    args = p.parse_args()
    (xtr, ytr), (xte, yte) = load()
    model = Classifier(args.cell, args.hidden)
    x, y = T.tensor3("x"), T.lvector("y")
    logits = model(x)
    loss = nn.cross_entropy(logits, y)
    lr = bptt.shared(np.asarray(args.lr, dtype=bptt.config.floatX), name="lr")
    t0 = time.perf_counter()
    train = bptt.function([x, y], loss, updates=nn.adam(loss, model.params(), lr))
    predict = bptt.function([x], T.argmax(logits, axis=-1))
    compile_s = time.perf_counter() - t0
    steps_per_epoch = -(-len(xtr) // args.batch)
    rng = np.random.default_rng(1)

    def batches():
        order = rng.permutation(len(xtr))
        for i in range(0, len(xtr), args.batch):
            idx = order[i:i + args.batch]
            yield xtr[idx].transpose(1, 0, 2), ytr[idx]   # time-major: (8 rows, B, 8)

    def error():
        return float(np.mean(predict(xte.transpose(1, 0, 2)) != yte))

    hist = nn.fit(train, batches, epochs=args.epochs, total=steps_per_epoch, evaluate=error,
                  lr=lr, schedule=nn.cosine_schedule(args.lr, args.epochs * steps_per_epoch),
                  desc=args.cell)
    acc = 1 - hist.evals[-1][1]
    print(f"{args.cell.upper()} H={args.hidden}: held-out accuracy {acc:.2%} on {len(xte)} "
          f"images; compile {compile_s:.1f} s, training {hist.seconds:.1f} s "
          f"({args.epochs} epochs)")


if __name__ == "__main__":
    main()
