"""A plain NumPy loop with scan's semantics: the oracle every scan test compares with.

`scan_reference` mirrors `bptt.scan` (taps, n_steps, go_backwards, until);
`mit_mot_reference` mirrors the Scan op's mit_mot buffers. Both are written
from the seeds' description, independently of bptt's code.
"""
from __future__ import annotations

import numpy as np


class TooShort(ValueError):
    """A sequence cannot feed the requested steps."""


def scan_reference(step, sequences=(), outputs_info=(), non_sequences=(), n_steps=None,
                   go_backwards=False, until=False, nit_row_shapes=None):
    """Run `step` like scan would.

    Parameters
    ----------
    step : callable
        Takes the same arguments as scan's fn (NumPy values) and returns the
        list of outputs; with `until`, returns ``(outputs, stop)``.
    sequences : list of (array, taps)
    outputs_info : list of (initial array or None, taps)
        ``taps == ()`` is an output that is not fed back; (-1,) takes the
        initial state itself, deeper taps take rows of it (``init[0]`` is
        output[-depth]).
    n_steps : int or None
    nit_row_shapes : list of tuple, optional
        Row shapes of the non-fed-back outputs, used when no step runs.

    Returns
    -------
    list of arrays, one per output, in processing order.
    """
    backwards = go_backwards
    if n_steps is not None and n_steps < 0:
        backwards, n_steps = not backwards, -n_steps
    seqs = [(np.asarray(s), tuple(taps)) for s, taps in sequences]
    usable = [len(s) - (max(max(t), 0) - min(min(t), 0)) for s, t in seqs]
    if any(u < 0 for u in usable):
        raise TooShort("a sequence is shorter than the span of its taps")
    if n_steps is None:
        n_steps = min(usable)
    if any(u < n_steps for u in usable):
        raise TooShort("a sequence is too short for n_steps")
    hist = []
    for init, taps in outputs_info:
        if not taps:
            hist.append([])
        elif tuple(taps) == (-1,):
            hist.append([np.asarray(init)])
        else:
            hist.append(list(np.asarray(init)[: -min(taps)]))
    depth = [(-min(t) if t else 0) for _, t in outputs_info]
    for t in range(n_steps):
        args = []
        for (s, taps), u in zip(seqs, usable):
            args += [s[row] for row in tap_rows(taps, u, t, backwards)]
        for (init, taps), h, d in zip(outputs_info, hist, depth):
            args += [h[t + d + k] for k in taps]
        res = step(*args, *non_sequences)
        outs, stop = res if until else (res, False)
        for h, o in zip(hist, outs):
            h.append(np.asarray(o))
        if stop:
            break
    result = []
    nit = iter(nit_row_shapes or [])
    for (init, taps), h, d in zip(outputs_info, hist, depth):
        rows = h[d:]
        if rows:
            result.append(np.stack(rows))
        elif taps:
            init = np.asarray(init)
            row = init.shape if tuple(taps) == (-1,) else init.shape[1:]
            result.append(np.zeros((0,) + row, init.dtype))
        else:
            result.append(np.zeros((0,) + tuple(next(nit, ()))))
    return result


def tap_rows(taps, usable, t, backwards=False):
    """The rows a sequence's taps read at the t-th step executed (Theano's rule).

    Tap 0 counts as present: ``lo = min(taps, 0)``; the sequence allows
    `usable` positions (its length minus ``max(taps, 0) - lo``), position p
    reads row ``p + k - lo`` for tap k, and going backwards visits the
    positions from the last one down.
    """
    lo = min(min(taps), 0)
    p = usable - 1 - t if backwards else t
    return [p + k - lo for k in taps]


def mit_mot_reference(buffer, in_taps, out_taps, step, n_steps):
    """The mit_mot buffer after `n_steps` steps.

    At step t, in-tap k reads row ``t + k - lo`` and out-tap k writes row
    ``t + k - lo`` (lo: the lowest of all taps); `step` takes the in-tap
    rows and returns one value per out-tap.
    """
    buf = np.array(buffer, copy=True)
    lo = min(in_taps + out_taps)
    for t in range(n_steps):
        outs = step(*[buf[t + k - lo].copy() for k in in_taps])
        for k, o in zip(out_taps, outs):
            buf[t + k - lo] = o
    return buf
