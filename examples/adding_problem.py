"""The adding problem (Hochreiter & Schmidhuber 1997): an LSTM remembers, a tanh RNN does not.

Each sequence has T steps of two features: a value drawn from U(0, 1) and a
marker that is 1 at exactly two steps (one in the first half, one in the
second) and 0 elsewhere. The target is the sum of the two marked values,
read from the final state. Always answering 1 (the target's mean) scores an
MSE of 1/6 = 0.167; solving the task needs a memory of about T steps.

    PYTHONPATH=. python examples/adding_problem.py            # T = 100
    PYTHONPATH=. python examples/adding_problem.py --steps 300 --length 50   # quick look

Writes examples/results/adding_problem.png (test MSE of both models against steps) and
each model's curve as examples/results/adding_problem_<model>_T<length>.json; with
``--models rnn`` and ``--models lstm`` in two processes, ``--plot-only`` draws both.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import time

import numpy as np

import bptt
import bptt.nn as nn
import bptt.tensor as T

BASELINE = 1 / 6


def make_batch(rng, length, batch):
    """Inputs (T, B, 2) and targets (B, 1)."""
    values = rng.random((length, batch))
    marks = np.zeros((length, batch))
    half = length // 2
    first = rng.integers(0, half, batch)
    second = rng.integers(half, length, batch)
    cols = np.arange(batch)
    marks[first, cols] = marks[second, cols] = 1
    x = np.stack([values, marks], axis=2)
    y = (values[first, cols] + values[second, cols])[:, None]
    return x.astype(bptt.config.floatX), y.astype(bptt.config.floatX)


class Regressor(nn.Module):
    """A recurrent layer, then a Dense read-out of its final state."""

    def __init__(self, kind, hidden, rng):
        super().__init__()
        if kind == "lstm":
            self.rnn = nn.LSTM(2, hidden, forget_bias=1.0, rng=rng)
        else:
            self.rnn = nn.RNN(2, hidden, rng=rng)
        self.out = nn.Dense(hidden, 1, rng=rng)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.out(y[-1])


def compile_model(kind, hidden, lr, clip):
    model = Regressor(kind, hidden, rng=0)
    x, y = T.tensor3("x"), T.matrix("y")
    loss = nn.mse(model(x), y)
    grads = nn.clip_by_global_norm(bptt.grad(loss, model.params()), clip)
    t0 = time.perf_counter()
    train = bptt.function([x, y], loss, updates=nn.adam(grads, model.params(), lr),
                          name=f"{kind}_train")
    test = bptt.function([x, y], loss, name=f"{kind}_test")
    return model, train, test, time.perf_counter() - t0


def run(kind, args, test_set):
    model, train, test, compile_s = compile_model(kind, args.hidden, args.lr, args.clip)
    rng = np.random.default_rng(1)

    def evaluate():
        return float(test(*test_set))

    hist = nn.fit(train, lambda: (make_batch(rng, args.length, args.batch)
                                  for _ in range(args.steps)),
                  total=args.steps, tokens=args.length * args.batch, evaluate=evaluate,
                  eval_every=args.eval_every, desc=kind)
    curve = hist.evals
    print(f"{kind}: compile {compile_s:.1f} s, train {hist.seconds:.1f} s, "
          f"test MSE {curve[-1][1]:.4f} (baseline {BASELINE:.3f})")
    return curve, compile_s, hist.seconds


def plot(out, length):
    """Draw every saved curve of this length (adding_problem_<kind>_T<length>.json)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=110)
    for name in sorted(glob.glob(os.path.join(out, f"adding_problem_*_T{length}.json"))):
        with open(name) as f:
            saved = json.load(f)
        kind, curve = saved["kind"], saved["curve"]
        s, v = zip(*curve)
        ax.plot(s, v, "o-", ms=3, label=f"{kind.upper()}")
    ax.axhline(BASELINE, color="0.5", ls="--", label="always 1 (0.167)")
    ax.set_yscale("log")
    ax.set_xlabel("training step (batch of sequences)")
    ax.set_ylabel("test MSE")
    ax.set_title(f"adding problem, T = {length}")
    ax.legend()
    fig.tight_layout()
    path = os.path.join(out, "adding_problem.png")
    fig.savefig(path)
    return path


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--length", type=int, default=100)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--models", default="lstm,rnn")
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    p.add_argument("--plot-only", action="store_true", help="redraw the saved curves")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    test_set = make_batch(np.random.default_rng(12345), args.length, 1000)
    for kind in [] if args.plot_only else args.models.split(","):
        curve, compile_s, train_s = run(kind, args, test_set)
        with open(os.path.join(args.out, f"adding_problem_{kind}_T{args.length}.json"), "w") as f:
            json.dump({"kind": kind, "curve": curve, "compile_s": compile_s, "train_s": train_s,
                       "args": vars(args)}, f)
    print(f"plot: {plot(args.out, args.length)}")


if __name__ == "__main__":
    main()
