"""A NumPy loop that runs a `Program` by Theano's scan rules, written from the seeds.

Nothing here reads bptt. The rules (seed 000, and Theano/PyTensor's scan()):

Sequences. For taps ``taps`` let ``lo = min(min(taps), 0)`` and
``hi = max(max(taps), 0)`` (tap 0 always counts as present). A sequence of
L rows allows ``A = L - (hi - lo)`` steps; at the forward step in position p,
tap k reads row ``p + k - lo``. Without n_steps the loop runs ``min(A)``
steps. With ``|n_steps| = n`` a forward loop visits positions ``0 .. n-1`` of
every sequence; a backward loop (go_backwards, or a negative n_steps, the two
cancelling) visits each sequence's last n positions from the last to the
first, ``A-1, A-2, .., A-n``: the forward slices, reversed, then cut to n.

::

    u = [10 11 12 13 14 15], taps [-1, 0, 1]: lo = -1, hi = 1, A = 4
    forward  step t reads (u[t], u[t+1], u[t+2])  -> (10,11,12) (11,12,13) ..
    backward step t reads position A-1-t          -> (13,14,15) (12,13,14) ..

States. A mit_sot's initial value has ``depth = -min(taps)`` rows, row 0
being output[-depth]; a sit_sot's is the row itself. At step t tap k reads
output[t + k], an initial row while ``t + k < 0``. The returned output is the
rows the steps computed, in step order (for a backward loop too); zero steps
give zero rows of the row shape.

until. The step whose condition is true is still emitted; the loop then
stops. A shared variable's update is computed from the values at the start
of the step, and the variable holds the last step's update when the loop ends
(the initial value when no step runs).
"""
from __future__ import annotations

import numpy as np

#: op name -> NumPy implementation, called as fn(node, *child values)
NUMPY_OPS = {
    "tanh": lambda e, x: np.tanh(x),
    "sin": lambda e, x: np.sin(x),
    "sigmoid": lambda e, x: 1.0 / (1.0 + np.exp(-x)),
    "scale": lambda e, x: x * e.arg,
    "cast32": lambda e, x: np.asarray(x).astype(np.float32).astype(np.float64),
    "add": lambda e, a, b: a + b,
    "sub": lambda e, a, b: a - b,
    "mul": lambda e, a, b: a * b,
    "maximum": lambda e, a, b: np.maximum(a, b),
    "sum": lambda e, x: np.sum(x, axis=e.arg),
    "mean": lambda e, x: np.mean(x, axis=e.arg),
    "max": lambda e, x: np.max(x, axis=e.arg),
    "dot": lambda e, a, b: np.dot(a, b),
    "index": lambda e, x: x[e.arg],
    "reverse": lambda e, x: x[::-1],
    "transpose": lambda e, x: np.transpose(x),
    "splice": lambda e, a, b: np.concatenate([a[:1], b[1:]], axis=0),
    "setsub": lambda e, a, b: _write(a, e.arg, b, add=False),
    "incsub": lambda e, a, b: _write(a, e.arg, b, add=True),
    "nest": lambda e, seq, init, w: _nest(e.arg, seq, init, w),
}


def _write(a, i, b, add):
    out = np.array(a, dtype=np.float64, copy=True)
    out[i] = out[i] + b if add else b
    return out


def _nest(reduce, seq, init, w):
    """The inner scan: acc_t = tanh(acc_{t-1} * w + seq[t]); its last row or its sum."""
    acc, rows = np.asarray(init, dtype=np.float64), []
    for r in seq:
        acc = np.tanh(acc * w + r)
        rows.append(acc)
    if reduce == "last":
        return rows[-1]
    return np.sum(rows, axis=0) if rows else np.zeros(np.shape(init))


def evaluate(e, env):
    """The value of expression `e` with leaf values `env` (name -> array)."""
    if e.op == "leaf":
        return np.asarray(env[e.arg], dtype=np.float64)
    vals = [evaluate(a, env) for a in e.args]
    return np.asarray(NUMPY_OPS[e.op](e, *vals), dtype=np.float64)


class TooShort(ValueError):
    """The sequences cannot feed the steps the program asks for (not an oracle case)."""


def steps_and_positions(prog, lengths):
    """The number of steps and, per sequence, the row position each step reads from."""
    backwards = prog.go_backwards
    n = prog.n_value()
    if n is not None and n < 0:
        backwards, n = not backwards, -n
    allowed = [L - (s.hi - s.lo) for s, L in zip(prog.seqs, lengths)]
    if n is None:
        n = min(allowed)
    if any(a < n for a in allowed) or n < 0:
        raise TooShort(f"sequences allow {allowed} steps, the program asks for {n}")
    if backwards:
        return n, [[a - 1 - t for t in range(n)] for a in allowed]
    return n, [list(range(n)) for _ in allowed]


def interpret(prog, values):
    """Run `prog` on `values` (see `build.make_values`).

    Returns
    -------
    dict with "outs": one array per output (all its rows), "shared": the shared
    variable's final value (or None), "steps": the number of steps run, "twin":
    the twin scan's rows (or None).
    """
    n, positions = steps_and_positions(prog, [len(v) for v in values["seqs"]])
    hist = []
    for o, init in zip(prog.outs, values["inits"]):
        if o.kind == "mit_sot":
            hist.append([np.asarray(r) for r in init])
        elif o.kind == "sit_sot":
            hist.append([np.asarray(init)])
        else:
            hist.append([])
    shared = None if prog.shared is None else np.asarray(values["shared"], dtype=np.float64)
    done = 0
    for t in range(n):
        env = {f"n{m}": v for m, v in enumerate(values["non_seqs"])}
        for i, (s, u) in enumerate(zip(prog.seqs, values["seqs"])):
            for k in s.taps:
                env[f"s{i}@{k}"] = u[positions[i][t] + k - s.lo]
        for j, (o, h) in enumerate(zip(prog.outs, hist)):
            for k in o.taps:
                env[f"o{j}@{k}"] = h[o.depth + t + k]
        if shared is not None:
            env["sh"] = shared
        new = [evaluate(o.expr, env) for o in prog.outs]
        stop = prog.until is not None and \
            float(np.sum(evaluate(prog.until[0], env))) > prog.until[1]
        if shared is not None:
            shared = evaluate(prog.shared[1], env)
        for h, v in zip(hist, new):
            h.append(v)
        done += 1
        if stop:
            break
    twin = None
    if prog.twin is not None:
        rows = []
        for t in range(n):
            env = {f"n{m}": v for m, v in enumerate(values["non_seqs"])}
            for i, (s, u) in enumerate(zip(prog.seqs, values["seqs"])):
                for k in s.taps:
                    env[f"s{i}@{k}"] = u[positions[i][t] + k - s.lo]
            rows.append(evaluate(prog.twin, env))
        shape = tuple(prog.sizes["HK".index(c)] for c in prog.twin.shape)
        twin = np.stack(rows) if rows else np.zeros((0,) + shape)
    outs = []
    for o, h in zip(prog.outs, hist):
        rows = h[o.depth:]
        shape = tuple(prog.sizes["HK".index(c)] for c in o.shape)
        outs.append(np.stack(rows) if rows else np.zeros((0,) + shape))
    return {"outs": outs, "shared": shared, "steps": done, "twin": twin}
