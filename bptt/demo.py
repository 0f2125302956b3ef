"""A one-minute tour of bptt: ``python -m bptt.demo``.

Trains a small character-level LSTM language model on the Python standard
library's own source (examples/char_lm.py is the full version). The LSTM
layer is one `bptt.scan` over time; `bptt.grad` turns it into
backpropagation through time, a second scan running backwards. The demo
checks that gradient against finite differences, compiles the training
step (numba, cached on disk in ``BPTT_CACHE_DIR``), trains with truncated
BPTT (the state carried from one window to the next) under a progress bar,
and shows the loss falling below the unigram baseline, in bits per
character.
"""
from __future__ import annotations

import math
import sys
import time

import numpy as np

import bptt
import bptt.nn as nn
import bptt.tensor as T
from bptt.graph.traversal import toposort
from bptt.scan.op import Scan

KB, BATCH, WINDOW, EMBED, HIDDEN, STEPS = 200, 16, 32, 16, 64, 300
VOCAB = ["\n"] + [chr(c) for c in range(32, 127)] + ["?"]


def stdlib_ids(kb):
    """The standard library's top-level sources as character ids (printable ASCII)."""
    codes = np.frombuffer(nn.data.stdlib_text(kb).encode("ascii", "replace"), np.uint8)
    lut = np.full(256, len(VOCAB) - 1, dtype="int64")
    lut[10], lut[32:127] = 0, np.arange(1, 96)
    return lut[codes]


class CharLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(len(VOCAB), EMBED, rng=0)
        self.lstm = nn.LSTM(EMBED, HIDDEN, rng=1)      # one scan over the window
        self.out = nn.Dense(HIDDEN, len(VOCAB), rng=2)

    def forward(self, x, state):
        y, state = self.lstm(self.embed(x), state)
        return self.out(y), state


def n_scans(outputs):
    return sum(isinstance(node.op, Scan) for node in toposort(outputs))


def check_gradient():
    """BPTT through an LSTM's scan against finite differences (PY mode, tiny sizes)."""
    small = nn.LSTM(2, 3, rng=2, dtype="float64")
    x0 = np.random.default_rng(3).standard_normal((4, 2, 2))
    bptt.verify_grad(lambda x: T.sum(small(x)[0] ** 2), [x0], n_tests=1, mode="PY")


def main():
    ids = stdlib_ids(KB)
    freq = np.bincount(ids, minlength=len(VOCAB)) / len(ids)
    unigram = float(-(freq[freq > 0] * np.log2(freq[freq > 0])).sum())
    print(f"bptt {bptt.__version__}: a character-level LSTM on {len(ids) // 1000} KB of the "
          f"standard library's source\n")
    model = CharLM()
    state = [bptt.shared(np.zeros((1, BATCH, HIDDEN)), name=n) for n in ("h", "c")]
    x, y = T.lmatrix("x"), T.lmatrix("y")               # (time, batch) character ids
    logits, (h_n, c_n) = model(x, state)
    loss = nn.cross_entropy(logits, y)
    grads = bptt.grad(loss, model.params())
    print(f"model: Embedding -> LSTM({EMBED}, {HIDDEN}) -> Dense, {model.n_params()} parameters")
    print(f"graph: the loss has {n_scans([loss])} scan (the LSTM over time); with its gradient "
          f"{n_scans(grads)} (BPTT is a scan running backwards)")
    t0 = time.perf_counter()
    check_gradient()
    print(f"verify_grad: the BPTT gradient matches finite differences "
          f"({time.perf_counter() - t0:.1f} s)")

    updates = nn.adam(nn.clip_by_global_norm(grads, 1.0), model.params(), learning_rate=0.01)
    updates[state[0]], updates[state[1]] = h_n, c_n     # truncated BPTT: carry the state
    t0, c0 = time.perf_counter(), time.process_time()
    train = bptt.function([x, y], loss, updates=updates, name="train_step")
    print(f"compile the training step (numba; disk cache {bptt.config.cache_dir or 'off'}): "
          f"{time.perf_counter() - t0:.1f} s ({time.process_time() - c0:.1f} s of CPU)\n")

    windows = list(nn.data.stream_windows(ids, BATCH, WINDOW))[:STEPS]
    hist = nn.fit(train, windows, tokens=BATCH * WINDOW, desc="train")
    bits = np.asarray(hist.losses) / math.log(2)
    first, last = bits[:10].mean(), bits[-20:].mean()
    print(f"\nbits per character: first 10 steps {first:.2f} -> last 20 steps {last:.2f} "
          f"(unigram entropy of the text {unigram:.2f}); {len(windows)} steps in "
          f"{hist.seconds:.1f} s, {1e3 * hist.seconds / len(windows):.1f} ms per step")
    if not last < min(first, unigram) - 0.3:
        sys.exit("demo: the loss did not fall as expected")


if __name__ == "__main__":
    main()
