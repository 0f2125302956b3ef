"""Character-level LSTM language model on the Python standard library's own source.

The text is the standard library's top-level ``.py`` files in sorted order,
up to ``--kb`` kilobytes (nothing to download; the exact text depends on the
Python version). The last 5% is held out. Training is truncated BPTT: the
text is cut into B parallel streams walked in windows of T characters, and
the LSTM's final state of one window is the initial state of the next
(carried in shared variables updated by the training function).

Reports bits per character on the held-out text against the unigram
baseline (the entropy of the training text's character frequencies measured
on the held-out text), prints a sample and saves the weights.

    PYTHONPATH=. python examples/char_lm.py                  # defaults below
    PYTHONPATH=. python examples/char_lm.py --minutes 2      # a shorter run
"""
from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np

import bptt
import bptt.nn as nn
import bptt.tensor as T
from bptt.nn import data

VOCAB = ["\n"] + [chr(c) for c in range(32, 127)] + ["\ufffd"]  # printable ASCII, unknown
INDEX = {ch: i for i, ch in enumerate(VOCAB)}


def encode(text):
    unknown = INDEX["\ufffd"]
    return np.array([INDEX.get(ch, unknown) for ch in text.replace("\t", "    ")], dtype="int64")


class CharLM(nn.Module):
    """Embedding -> LSTM -> Dense over the vocabulary; time-major (T, B)."""

    def __init__(self, vocab, embed, hidden, layers=1):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed, rng=0)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, rng=1)
        self.out = nn.Dense(hidden, vocab, rng=2)

    def forward(self, x, state):
        y, state = self.lstm(self.embed(x), state)
        return self.out(y), state


def carried_state(model, batch, name):
    """Shared (h, c) of shape (layers, B, H), zeros, carried across windows."""
    shape = (model.lstm.num_layers, batch, model.lstm.hidden_size)
    zeros = np.zeros(shape, dtype=bptt.config.floatX)
    return bptt.shared(zeros, name=f"{name}.h"), bptt.shared(zeros, name=f"{name}.c")


def reset(state):
    for s in state:
        s.set_value(np.zeros_like(s.get_value()))


def build(model, args):
    """The training step, the held-out loss and a one-character sampler."""
    x, y = T.lmatrix("x"), T.lmatrix("y")
    state = carried_state(model, args.batch, "train")
    logits, (h, c) = model(x, state)
    loss = nn.cross_entropy(logits, y)
    grads = nn.clip_by_global_norm(bptt.grad(loss, model.params()), args.clip)
    lr = bptt.shared(np.asarray(args.lr, dtype=bptt.config.floatX), name="lr")
    updates = nn.adam(grads, model.params(), lr)
    updates[state[0]], updates[state[1]] = h, c     # carry the state to the next window
    t0 = time.perf_counter()
    train = bptt.function([x, y], loss, updates=updates, name="train_step")
    compile_train = time.perf_counter() - t0

    eval_state = carried_state(model, args.batch, "eval")
    e_logits, (eh, ec) = model(x, eval_state)
    t0 = time.perf_counter()
    evaluate = bptt.function([x, y], nn.cross_entropy(e_logits, y),
                             updates={eval_state[0]: eh, eval_state[1]: ec}, name="eval")
    h0, c0 = T.tensor3("h0"), T.tensor3("c0")
    s_logits, (sh, sc) = model(x, (h0, c0))
    step = bptt.function([x, h0, c0], [s_logits[-1, 0], sh, sc], name="sample_step")
    compile_other = time.perf_counter() - t0
    return dict(train=train, evaluate=evaluate, step=step, lr=lr, updates=updates,
                state=state, eval_state=eval_state, compile_train=compile_train,
                compile_other=compile_other)


def held_out_loss(fns, ids, args):
    """Mean cross-entropy (nats per character) over the held-out windows, state carried."""
    reset(fns["eval_state"])
    losses = [float(fns["evaluate"](x, y))
              for x, y in data.stream_windows(ids, args.batch, args.window)]
    return float(np.mean(losses))


def unigram_bpc(train_ids, test_ids):
    counts = np.bincount(train_ids, minlength=len(VOCAB)) + 1.0   # add-one smoothing
    p = counts / counts.sum()
    return float(-np.mean(np.log2(p[test_ids])))


def sample(fns, model, prime, n, temperature, rng):
    L, H = model.lstm.num_layers, model.lstm.hidden_size
    h = np.zeros((L, 1, H), dtype=bptt.config.floatX)
    c = h.copy()
    out = list(prime)
    ids = encode(prime)
    for i in ids[:-1]:
        _, h, c = fns["step"](np.array([[i]]), h, c)
    nxt = ids[-1]
    for _ in range(n):
        logits, h, c = fns["step"](np.array([[nxt]]), h, c)
        z = logits / temperature
        p = np.exp(z - z.max())
        nxt = rng.choice(len(p), p=p / p.sum())
        out.append(VOCAB[nxt])
    return "".join(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kb", type=int, default=600, help="kilobytes of text (>= 300)")
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--embed", type=int, default=32)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--window", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--minutes", type=float, default=None,
                   help="stop training after this long (checked each step)")
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = p.parse_args()

    text = data.stdlib_text(args.kb)
    ids = encode(text)
    cut = int(len(ids) * 0.95)
    train_ids, test_ids = ids[:cut], ids[cut:]
    print(f"text: {len(text) / 1000:.0f} KB of the standard library's source "
          f"({len(train_ids)} training, {len(test_ids)} held-out characters), "
          f"vocabulary {len(VOCAB)}")
    model = CharLM(len(VOCAB), args.embed, args.hidden)
    print(f"model: {model.n_params()} parameters; compiling ...", flush=True)
    fns = build(model, args)
    print(f"compile: training step {fns['compile_train']:.1f} s, evaluation and sampler "
          f"{fns['compile_other']:.1f} s")

    per_epoch = data.n_stream_windows(len(train_ids), args.batch, args.window)
    total = per_epoch * args.epochs
    schedule = nn.warmup_schedule(nn.cosine_schedule(args.lr, total, args.lr / 10), 50)
    deadline = None if args.minutes is None else time.perf_counter() + 60 * args.minutes

    def windows():
        for w in data.stream_windows(train_ids, args.batch, args.window):
            if deadline is not None and time.perf_counter() > deadline:
                return
            yield w

    os.makedirs(args.out, exist_ok=True)
    hist = nn.fit(fns["train"], windows, epochs=args.epochs, total=per_epoch,
                  tokens=args.batch * args.window, lr=fns["lr"], schedule=schedule,
                  before_epoch=lambda e: reset(fns["state"]),
                  evaluate=lambda: held_out_loss(fns, test_ids, args),
                  eval_every=max(per_epoch // 4, 1), module=model, updates=fns["updates"],
                  checkpoint=os.path.join(args.out, "char_lm.npz"),
                  plot=os.path.join(args.out, "char_lm_loss.png"), desc="char-lm")
    bpc = min(v for _, v in hist.evals) / math.log(2)
    curve = ", ".join(f"{v / math.log(2):.2f}" for _, v in hist.evals)
    print(f"\nheld-out: {bpc:.3f} bits per character (best of {len(hist.evals)} "
          f"evaluations: {curve}); unigram baseline {unigram_bpc(train_ids, test_ids):.3f}")
    print(f"training: {len(hist.losses)} steps in {hist.seconds:.0f} s, "
          f"{hist.tokens / hist.seconds:,.0f} characters/s")
    nn.load_checkpoint(os.path.join(args.out, "char_lm.npz"), model, fns["updates"])
    print("\nsample (temperature 0.7):\n" + "-" * 60)
    print(sample(fns, model, "def ", 400, 0.7, np.random.default_rng(0)))
    print("-" * 60)


if __name__ == "__main__":
    main()
