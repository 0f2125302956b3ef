"""Batching for recurrent training: truncated-BPTT streams and padded minibatches.

Both produce time-major arrays, ``(T, B, ...)``, as the sequence layers take.

`stream_windows` cuts one long sequence into B parallel streams (stream b is
the b-th contiguous slice of length ``(N - 1) // B``) and walks them in
windows of `window` steps: window k of stream b follows window k-1 of
stream b in the text, so the final state of one training step is the right
initial state of the next (truncated BPTT with the state carried)::

    data:     a0 a1 a2 a3 a4 a5 | b0 b1 b2 b3 b4 b5 |   (B = 2 streams)
    window 0: x = [[a0, b0], [a1, b1], [a2, b2]]      y = x shifted by one step
    window 1: x = [[a3, b3], [a4, b4]]                (the last window may be shorter)

`padded_batches` groups variable-length sequences into minibatches padded
to the longest, with a ``(T, B)`` mask of 1 at real steps and 0 at padding.

`stdlib_text` is a text every machine with Python has: the standard
library's own source, for language-model examples with nothing to download.
"""
from __future__ import annotations

import glob
import os
import sysconfig

import numpy as np

from .init import as_rng

__all__ = ["stream_windows", "n_stream_windows", "pad_sequences", "padded_batches",
           "stdlib_text"]


def _streams(data, batch_size):
    data = np.asarray(data)
    length = (len(data) - 1) // batch_size
    if length < 1:
        raise ValueError(f"stream_windows: {len(data)} items cannot fill {batch_size} "
                         f"streams of at least 2 items")
    xs = data[:length * batch_size].reshape((batch_size, length) + data.shape[1:])
    ys = data[1:length * batch_size + 1].reshape((batch_size, length) + data.shape[1:])
    return np.swapaxes(xs, 0, 1), np.swapaxes(ys, 0, 1), length


def n_stream_windows(n_items, batch_size, window, drop_last=True):
    """How many windows `stream_windows` yields for a sequence of `n_items`."""
    length = (n_items - 1) // batch_size
    return length // window if drop_last else -(-length // window)


def stream_windows(data, batch_size, window, drop_last=True):
    """Yield ``(x, y)`` windows of shape ``(window, batch_size, ...)``, y = x one step ahead.

    Parameters
    ----------
    data : array_like
        One long sequence (e.g. character ids), first axis the time.
    batch_size : int
        Number of parallel streams B.
    window : int
        Steps per window T (the truncation length of BPTT).
    drop_last : bool
        Skip a last, shorter window (so every window has the same shape and
        one compiled function serves them all).
    """
    xs, ys, length = _streams(data, batch_size)
    for start in range(0, length, window):
        stop = min(start + window, length)
        if drop_last and stop - start < window:
            return
        yield xs[start:stop], ys[start:stop]


def pad_sequences(sequences, value=0, dtype=None, length=None):
    """Stack variable-length sequences into ``(T, B, ...)`` with a ``(T, B)`` float mask.

    Parameters
    ----------
    sequences : list of array_like
        Each of shape ``(L_b, ...)``, the trailing shape shared.
    value : scalar
        Fill value of the padding.
    dtype : dtype, optional
        Of the padded array (the sequences' common dtype by default).
    length : int, optional
        Pad to this many steps instead of the longest sequence's.

    Returns
    -------
    x : ndarray ``(T, B, ...)``
    mask : ndarray ``(T, B)`` of floatX, 1 at real steps
    """
    from ..config import config

    seqs = [np.asarray(s) for s in sequences]
    if not seqs:
        raise ValueError("pad_sequences: no sequences given")
    tails = {s.shape[1:] for s in seqs}
    if len(tails) > 1:
        raise ValueError(f"pad_sequences: the sequences' shapes after the first axis differ: "
                         f"{sorted(tails)}")
    T = max(len(s) for s in seqs) if length is None else length
    dtype = np.result_type(*seqs) if dtype is None else dtype
    x = np.full((T, len(seqs)) + seqs[0].shape[1:], value, dtype=dtype)
    mask = np.zeros((T, len(seqs)), dtype=config.floatX)
    for b, s in enumerate(seqs):
        n = min(len(s), T)
        x[:n, b] = s[:n]
        mask[:n, b] = 1
    return x, mask


def padded_batches(sequences, targets=None, batch_size=32, shuffle=True, rng=None,
                   value=0, drop_last=False):
    """Yield padded minibatches ``(x, mask)`` or ``(x, mask, targets)``.

    Parameters
    ----------
    sequences : list of array_like
    targets : array_like or list, optional
        One target per sequence (a label, or a sequence: then padded too).
    batch_size : int
    shuffle : bool
        Visit the sequences in a random order (seeded by `rng`).
    rng : numpy.random.Generator or int seed
    value : scalar
        Padding value.
    drop_last : bool
        Skip a last, smaller batch.
    """
    n = len(sequences)
    order = as_rng(rng).permutation(n) if shuffle else np.arange(n)
    for start in range(0, n, batch_size):
        idx = order[start:start + batch_size]
        if drop_last and len(idx) < batch_size:
            return
        x, mask = pad_sequences([sequences[i] for i in idx], value=value)
        if targets is None:
            yield x, mask
            continue
        picked = [targets[i] for i in idx]
        if np.ndim(picked[0]) == 0:
            yield x, mask, np.asarray(picked)
        else:
            yield x, mask, pad_sequences(picked, value=value, length=len(x))[0]


def stdlib_text(kb):
    """The first `kb` kilobytes (thousands of characters) of the Python standard
    library's top-level ``.py`` sources in sorted file order. The text depends on
    the Python version; undecodable bytes read as U+FFFD."""
    parts, size = [], 0
    for path in sorted(glob.glob(os.path.join(sysconfig.get_paths()["stdlib"], "*.py"))):
        with open(path, encoding="utf-8", errors="replace") as f:
            parts.append(f.read())
        size += len(parts[-1])
        if size >= kb * 1000:
            break
    return "".join(parts)[:kb * 1000]
