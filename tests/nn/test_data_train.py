"""Stream windows, padded batches, the fit loop, checkpoints and the loss plot."""
import numpy as np
import pytest

import bptt
import bptt.nn as nn
import bptt.tensor as T
from bptt.nn import data


def test_stream_windows_continue_each_stream():
    seq = np.arange(23)
    wins = list(data.stream_windows(seq, batch_size=2, window=4, drop_last=False))
    # streams of (23 - 1) // 2 = 11 items: 0..10 and 11..21; windows of 4, 4, 3
    assert [w[0].shape for w in wins] == [(4, 2), (4, 2), (3, 2)]
    xs = np.concatenate([w[0] for w in wins])
    ys = np.concatenate([w[1] for w in wins])
    np.testing.assert_array_equal(xs[:, 0], np.arange(11))
    np.testing.assert_array_equal(xs[:, 1], np.arange(11, 22))
    np.testing.assert_array_equal(ys, xs + 1)
    assert len(list(data.stream_windows(seq, 2, 4))) == 2 == data.n_stream_windows(23, 2, 4)
    assert data.n_stream_windows(23, 2, 4, drop_last=False) == 3
    with pytest.raises(ValueError, match="streams"):
        list(data.stream_windows(np.arange(3), 4, 2))


def test_pad_sequences_and_batches():
    seqs = [np.ones((3, 2)), 2 * np.ones((1, 2)), 3 * np.ones((2, 2))]
    x, mask = data.pad_sequences(seqs, value=-1)
    assert x.shape == (3, 3, 2)
    np.testing.assert_array_equal(mask, [[1, 1, 1], [1, 0, 1], [1, 0, 0]])
    assert x[1, 1, 0] == -1 and x[1, 2, 0] == 3
    with pytest.raises(ValueError, match="differ"):
        data.pad_sequences([np.ones((2, 2)), np.ones((2, 3))])
    labels = np.array([10, 20, 30])
    batches = list(data.padded_batches(seqs, labels, batch_size=2, rng=0))
    assert sum(len(b[2]) for b in batches) == 3
    for x, mask, y in batches:
        for b, label in enumerate(y):
            assert mask[:, b].sum() == {10: 3, 20: 1, 30: 2}[label]
            assert x[0, b, 0] == label // 10
    targets = [np.arange(3), np.arange(1), np.arange(2)]
    x, mask, y = next(data.padded_batches(seqs, targets, batch_size=3, shuffle=False))
    np.testing.assert_array_equal(y[:, 1], [0, 0, 0])
    assert y.shape == (3, 3)


def test_stdlib_text_is_the_sorted_sources_cut_at_kb():
    import glob
    import os
    import sysconfig

    text = data.stdlib_text(300)
    assert len(text) == 300_000 and text == data.stdlib_text(300)
    first = sorted(glob.glob(os.path.join(sysconfig.get_paths()["stdlib"], "*.py")))[0]
    with open(first, encoding="utf-8", errors="replace") as f:
        head = f.read()
    assert text.startswith(head[:1000])
    assert data.stdlib_text(2) == text[:2000]


def test_fit_checkpoint_plot(tmp_path):
    model = nn.Dense(2, 1, rng=0, dtype="float64")
    x, y = T.matrix("x"), T.matrix("y")
    loss = nn.mse(model(x), y)
    lr = bptt.shared(np.asarray(0.0), name="lr")
    updates = nn.adam(loss, model.params(), learning_rate=lr)
    step = bptt.function([x, y], loss, updates=updates, mode="PY")
    held = bptt.function([x, y], loss, mode="PY")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((64, 2))
    Y = X @ np.array([[2.0], [-1.0]]) + 0.5
    batches = lambda: ((X[i:i + 16], Y[i:i + 16]) for i in range(0, 64, 16))  # noqa: E731
    ckpt, png = tmp_path / "ckpt.npz", tmp_path / "loss.png"
    hist = nn.fit(step, batches, epochs=5, tokens=16, evaluate=lambda: held(X, Y),
                  eval_every=8, lr=lr, schedule=nn.warmup_schedule(0.1, 4), module=model,
                  checkpoint=ckpt, updates=updates, plot=png, progress=False)
    assert len(hist.losses) == 20 and hist.tokens == 320
    assert [s for s, _ in hist.evals] == [4, 8, 12, 16, 20]
    assert hist.evals[-1][1] < hist.evals[0][1] / 2
    assert png.stat().st_size > 1000
    saved_w = model.weight.get_value()
    best = min(v for _, v in hist.evals)
    assert np.isclose(best, hist.evals[-1][1])  # last was best: the checkpoint is the end state
    other = nn.Dense(2, 1, rng=5, dtype="float64")
    upd2 = nn.momentum(nn.mse(other(x), y), other.params(), learning_rate=lr)
    with pytest.raises(ValueError, match="no optimizer state for bias.velocity, weight.velocity"):
        nn.load_checkpoint(ckpt, other, upd2)
    assert nn.load_checkpoint(ckpt, model, updates) == 20
    np.testing.assert_array_equal(model.weight.get_value(), saved_w)


def test_fit_stops_on_nan():
    with pytest.raises(FloatingPointError, match="step 1"):
        nn.fit(lambda: float("nan") if fit_calls.append(1) or len(fit_calls) > 1 else 1.0,
               [()] * 3, progress=False)


fit_calls = []


class _CompilingStep:
    """A step that reports PY code running in a NUMBA function, as while the
    background compile runs."""

    mode, running_mode = "NUMBA", "PY"

    def __call__(self, x):
        return 2.0


def test_fit_bar_shows_loss_tokens_and_the_running_code(capsys):
    nn.fit(_CompilingStep(), [(0,)] * 10, tokens=64, progress=True, desc="bar")
    shown = capsys.readouterr().err
    assert "loss=2.0000" in shown and "tok/s=" in shown
    assert "mode=PY while numba compiles" in shown
