"""The unrolled oracle: what a scan computes, written as an ordinary graph.

`unroll` calls the step function once per executed step, in a Python loop,
on slices of the outer variables: no Scan node, so `bptt.grad` of the result
goes through the ordinary op gradients only. It is the reference the scan
gradient (a backward Scan with mit_mot buffers) is compared with.

Scan's gradient semantics are reproduced by construction, not by copying
its algorithm:

* ``until``: the caller runs the loop numerically first and passes the number
  of executed steps; the graph has exactly that many steps.
* ``truncate_gradient=k``: every value computed by a step before the last k
  executed ones is returned in `frozen`; pass it to
  ``bptt.grad(..., consider_constant=frozen)``. Gradients then do not flow
  through those steps at all: their loss terms and sequence rows contribute
  nothing, and an initial-state row gets a gradient only if one of the last
  k steps reads it.
* ``go_backwards`` / negative n_steps: the steps read the same rows as
  forwards (Theano's tap rule, `reference.tap_rows`), from the last position
  to the first; gradients land in place by the ordinary indexing gradient.
"""
from __future__ import annotations

import bptt.tensor as T


def unroll(step, sequences=(), outputs_info=(), non_sequences=(), n_steps=0,
           backwards=False, truncate_gradient=-1, row_shapes=None):
    """The outputs of a scan as plain graphs, and the variables to hold constant.

    Parameters
    ----------
    step : callable
        Scan's step function (symbolic), returning the list of outputs; an
        ``until`` it returns is ignored (pass the executed steps instead).
    sequences : list of (variable, taps)
    outputs_info : list of (initial variable or None, taps)
        taps () for an output not fed back; (-1,) takes the initial state
        itself; deeper taps take rows of it (``init[0]`` is output[-depth]).
    non_sequences : list of variables
    n_steps : int
        Steps executed (>= 0).
    backwards : bool
        Read the sequences from their end.
    truncate_gradient : int
    row_shapes : list of tuple, optional
        Row shape of each output, used when no step runs.

    Returns
    -------
    outputs : list of variables
        One per output, its rows in processing order (initial rows excluded).
    frozen : list of variables
        Everything the steps before the truncation window computed.
    """
    seqs = [(s, tuple(taps)) for s, taps in sequences]
    hist, depth = [], []
    for init, taps in outputs_info:
        taps = tuple(taps)
        if not taps:
            hist.append([])
            depth.append(0)
        elif taps == (-1,):
            hist.append([init])
            depth.append(1)
        else:
            hist.append([init[i] for i in range(-min(taps))])
            depth.append(-min(taps))
    first_live = 0 if truncate_gradient == -1 else max(0, n_steps - truncate_gradient)
    frozen = []
    for t in range(n_steps):
        args = []
        for s, taps in seqs:
            args += [s[row] for row in _tap_rows(taps, t, backwards)]
        for (_, taps), h, d in zip(outputs_info, hist, depth):
            args += [h[t + d + k] for k in taps]
        outs = step(*args, *non_sequences)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        outs = [o for o in outs if not isinstance(o, bptt_until())]
        if t < first_live:
            frozen += outs
        for h, o in zip(hist, outs):
            h.append(o)
    results = []
    for j, (h, d) in enumerate(zip(hist, depth)):
        rows = h[d:]
        if rows:
            results.append(T.stack(rows))
        else:
            results.append(T.zeros((0,) + tuple(row_shapes[j])))
    return results, frozen


def _tap_rows(taps, t, backwards):
    """`reference.tap_rows`, backwards counted from the end (the length may be symbolic):
    the last position reads row ``L - 1 - (hi - k)`` for tap k."""
    if not backwards:
        return [t + k - min(min(taps), 0) for k in taps]
    hi = max(max(taps), 0)
    return [-(1 + t + hi - k) for k in taps]


def bptt_until():
    import bptt

    return bptt.until
