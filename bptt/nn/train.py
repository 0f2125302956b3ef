"""A training loop: progress bar, periodic evaluation, checkpoints, a loss curve.

`fit` drives a compiled training step (any Python callable returning the
loss) over batches, with a tqdm bar showing the running loss and tokens per
second. `save_checkpoint` / `load_checkpoint` write a module's parameters
together with the optimizer's state (the other shared variables its updates
dictionary assigns: moments, step counts, carried RNN states), so training
resumes where it stopped. `plot_history` draws the loss curve to a PNG with
matplotlib (Agg backend, no display needed).
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field

import numpy as np

__all__ = ["History", "fit", "plot_history", "save_checkpoint", "load_checkpoint"]


@dataclass
class History:
    """What `fit` saw: per-step losses and the evaluations ``(step, value)``."""

    losses: list = field(default_factory=list)
    evals: list = field(default_factory=list)
    seconds: float = 0.0
    tokens: int = 0

    def smoothed(self, width=50):
        """The losses averaged over a trailing window of `width` steps."""
        x = np.asarray(self.losses, dtype=float)
        if len(x) == 0:
            return x
        c = np.cumsum(np.r_[0.0, x])
        lo = np.maximum(np.arange(1, len(x) + 1) - width, 0)
        return (c[1:] - c[lo]) / (np.arange(1, len(x) + 1) - lo)


def _batches_of(batches):
    return batches() if callable(batches) else batches


def _count(tokens, batch):
    if tokens is None:
        return 0
    return int(tokens(batch)) if callable(tokens) else int(tokens)


def _finite_loss(loss, n, epoch, bar):
    """`loss` as a float; a FloatingPointError naming the step if it is not finite."""
    loss = float(loss)
    if not math.isfinite(loss):
        bar.close()
        raise FloatingPointError(f"fit: the loss is {loss} at step {n} (epoch {epoch + 1}); "
                                 f"lower the learning rate or clip the gradients")
    return loss


def _bar_fields(hist, step, tokens, toks, t0):
    """The progress bar's fields: the running loss, tokens/s, and which code runs."""
    fields = {"loss": f"{np.mean(hist.losses[-50:]):.4f}"}
    if tokens is not None:
        fields["tok/s"] = f"{toks / max(time.perf_counter() - t0, 1e-9):,.0f}"
    if getattr(step, "running_mode", None) != getattr(step, "mode", None):
        fields["mode"] = "PY while numba compiles"   # compile_in_background
    return fields


def fit(step, batches, epochs=1, *, tokens=None, evaluate=None, eval_every=None,
        lr=None, schedule=None, before_epoch=None, module=None, checkpoint=None,
        updates=None, plot=None, progress=True, total=None, desc="train"):
    """Call ``step(*batch)`` for every batch of every epoch and return a `History`.

    Parameters
    ----------
    step : callable
        A compiled training function (or a wrapper) returning the loss.
    batches : iterable of tuples, or a callable returning one per epoch
        Pass a callable (e.g. ``lambda: data.stream_windows(...)``) to iterate
        more than one epoch over a generator.
    epochs : int
    tokens : int or callable ``batch -> int``, optional
        Tokens per batch, for the tokens/s in the bar.
    evaluate : callable ``() -> float``, optional
        Held-out loss; called every `eval_every` steps and after each epoch.
    lr, schedule : shared scalar and `Schedule`, optional
        Before each step, ``lr`` is set to ``schedule(step_number)``.
    before_epoch : callable ``(epoch) -> None``, optional
        E.g. reset carried RNN states.
    module, checkpoint, updates : optional
        With a `checkpoint` path, ``save_checkpoint(checkpoint, module, updates)``
        after each evaluation that improves on the best so far (after each
        epoch when there is no `evaluate`).
    plot : path, optional
        Write the loss curve (and evaluations) there at the end.
    progress : bool
        Show the tqdm bar.
    total : int, optional
        Steps per epoch, for the bar (``len(batches)`` when it has one).
    """
    from tqdm.auto import tqdm

    hist, n, best = History(), 0, math.inf
    t_start = time.perf_counter()

    def run_eval(bar):
        nonlocal best
        value = float(evaluate())
        hist.evals.append((n, value))
        if bar is not None:
            bar.write(f"step {n}: held-out {value:.4f}")
        if checkpoint is not None and value < best:
            save_checkpoint(checkpoint, module, updates, step=n)
        best = min(best, value)

    for epoch in range(epochs):
        if before_epoch is not None:
            before_epoch(epoch)
        it = _batches_of(batches)
        count = total if total is not None else (len(it) if hasattr(it, "__len__") else None)
        bar = tqdm(it, total=count, desc=f"{desc} {epoch + 1}/{epochs}", disable=not progress,
                   dynamic_ncols=True)
        t0, toks = time.perf_counter(), 0
        for batch in bar:
            if schedule is not None:
                schedule.apply(lr, n)
            hist.losses.append(_finite_loss(step(*batch), n, epoch, bar))
            n += 1
            toks += _count(tokens, batch)
            if n % 10 == 0 or n == 1:
                bar.set_postfix(_bar_fields(hist, step, tokens, toks, t0), refresh=False)
            if evaluate is not None and eval_every and n % eval_every == 0:
                run_eval(bar)
        bar.close()
        hist.tokens += toks
        if evaluate is not None and not (hist.evals and hist.evals[-1][0] == n):
            run_eval(bar if progress else None)
        elif checkpoint is not None:
            save_checkpoint(checkpoint, module, updates, step=n)
    hist.seconds = time.perf_counter() - t_start
    if plot is not None:
        plot_history(hist, plot)
    return hist


def plot_history(history, path, title="training loss", logy=False):
    """Save the (smoothed) training loss and the evaluations as a PNG at `path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5), dpi=110)
    steps = np.arange(1, len(history.losses) + 1)
    ax.plot(steps, history.losses, color="0.8", lw=0.8, label="train (per step)")
    ax.plot(steps, history.smoothed(), color="C0", label="train (mean of 50)")
    if history.evals:
        s, v = zip(*history.evals)
        ax.plot(s, v, "o-", color="C1", label="held-out")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _optimizer_state(module, updates):
    if not updates:
        return {}
    own = {id(p) for p in module.params()} if module is not None else set()
    state = {}
    for var in updates:
        if id(var) in own:
            continue
        if not var.name:
            raise ValueError("save_checkpoint: an updated shared variable has no name; name "
                             "it (bptt.shared(value, name=...)) so it can be saved")
        if var.name in state:
            raise ValueError(f"save_checkpoint: two updated shared variables are named "
                             f"{var.name!r}; give them distinct names")
        state[var.name] = var
    return state


def save_checkpoint(path, module, updates=None, step=0):
    """Write `module`'s parameters, the optimizer state in `updates` and `step` to `path` (.npz)."""
    arrays = {"model/" + k: v for k, v in module.state_dict().items()}
    arrays.update({"optim/" + k: v.get_value() for k, v in _optimizer_state(module, updates).items()})
    arrays["step"] = np.asarray(step)
    tmp = os.fspath(path) + ".tmp.npz"
    np.savez(tmp, **arrays)
    os.replace(tmp, path)
    return path


def load_checkpoint(path, module, updates=None):
    """Restore what `save_checkpoint` wrote; returns the saved step number."""
    with np.load(path) as f:
        data = {k: f[k] for k in f.files}
    state = _optimizer_state(module, updates)
    saved = {k[6:]: v for k, v in data.items() if k.startswith("optim/")}
    missing = sorted(set(state) - set(saved))
    if missing:
        raise ValueError(f"load_checkpoint: {path} holds no optimizer state for "
                         f"{', '.join(missing)} (saved with other updates?)")
    module.load_state_dict({k[6:]: v for k, v in data.items() if k.startswith("model/")})
    for name, var in state.items():
        var.set_value(saved[name].astype(var.dtype))
    return int(data["step"])
