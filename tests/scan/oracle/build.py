"""Turn a `Program` into a bptt graph, and draw the values it runs on.

`build` returns a `Built`: the function inputs (sequences, initial states,
non-sequences, then the symbolic n_steps if any), the scan's outputs, what the
function returns of each (all rows or the last), the updates, a scalar cost
of the returned values, and the float inputs the gradients are taken for.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import bptt
import bptt.tensor as T

#: op name -> bptt implementation, called as fn(node, *child variables)
BPTT_OPS = {
    "tanh": lambda e, x: T.tanh(x),
    "sin": lambda e, x: T.sin(x),
    "sigmoid": lambda e, x: T.nnet.sigmoid(x),
    "scale": lambda e, x: x * e.arg,
    "cast32": lambda e, x: T.cast(T.cast(x, "float32"), "float64"),
    "add": lambda e, a, b: a + b,
    "sub": lambda e, a, b: a - b,
    "mul": lambda e, a, b: a * b,
    "maximum": lambda e, a, b: T.maximum(a, b),
    "sum": lambda e, x: T.sum(x, axis=e.arg),
    "mean": lambda e, x: T.mean(x, axis=e.arg),
    "max": lambda e, x: T.max(x, axis=e.arg),
    "dot": lambda e, a, b: T.dot(a, b),
    "index": lambda e, x: x[e.arg],
    "reverse": lambda e, x: x[::-1],
    "transpose": lambda e, x: x.T,
    "splice": lambda e, a, b: T.concatenate([a[:1], b[1:]], axis=0),
    "setsub": lambda e, a, b: T.set_subtensor(a[e.arg], b),
    "incsub": lambda e, a, b: T.inc_subtensor(a[e.arg], b),
    "nest": lambda e, seq, init, w: _nest(e.arg, seq, init, w),
}


def _nest(reduce, seq, init, w):
    rows, _ = bptt.scan(lambda r, acc, w_: T.tanh(acc * w_ + r), sequences=[seq],
                        outputs_info=[init], non_sequences=[w], name="inner")
    return rows[-1] if reduce == "last" else T.sum(rows, axis=0)


def build_expr(e, env):
    if e.op == "leaf":
        return env[e.arg]
    return BPTT_OPS[e.op](e, *[build_expr(a, env) for a in e.args])


def _var(ndim, name):
    return T.tensor("float64", (None,) * ndim, name=name)


@dataclass
class Built:
    inputs: list
    outs: list            # every scan output (all rows)
    returned: list        # what the function returns: one entry per output whose use is not "none"
    updates: dict
    shared: object        # the SharedVariable or None
    cost: object
    wrt: list             # float inputs
    wrt_values: list      # their indices in `inputs`


def build(prog, values, inputs=None):
    """The bptt graph of `prog` (`values` gives the shared variable's initial value);
    `inputs` replaces the float inputs (for verify_grad)."""
    seqs = [_var(1 + len(s.shape), f"u{i}") for i, s in enumerate(prog.seqs)]
    inits = [None if o.kind == "nit_sot" else
             T.constant(values["inits"][j]) if o.init == "const" else
             _var(len(o.shape) + (o.kind == "mit_sot"), f"x{j}0") for j, o in enumerate(prog.outs)]
    non_seqs = []
    for m, n in enumerate(prog.non_seqs):
        if n.source == "input":
            non_seqs.append(_var(len(n.shape), f"w{m}"))
        elif n.source == "const":
            non_seqs.append(T.constant(values["non_seqs"][m]))
        else:
            non_seqs.append(non_seqs[n.source])
    floats = seqs + [x for x, o in zip(inits, prog.outs) if x is not None and o.init == "input"] \
        + [v for v, n in zip(non_seqs, prog.non_seqs) if n.source == "input"]
    if inputs is not None:
        swap = dict(zip(floats, inputs))
        seqs = [swap[v] for v in seqs]
        inits = [None if x is None else swap.get(x, x) for x in inits]
        non_seqs = [swap.get(v, v) for v in non_seqs]
        floats = list(inputs)
    shared = None
    if prog.shared is not None:
        shared = bptt.shared(np.array(values["shared"]), name="sh")
    passed = [v for v, n in zip(non_seqs, prog.non_seqs) if n.passed]
    n_steps, n_var = _n_steps(prog)
    sequences = [dict(input=u, taps=list(s.taps)) for u, s in zip(seqs, prog.seqs)]
    outs, updates = bptt.scan(
        _step_function(prog, non_seqs, shared), sequences=sequences,
        outputs_info=_outputs_info(prog, inits), non_sequences=passed, n_steps=n_steps,
        truncate_gradient=prog.truncate, go_backwards=prog.go_backwards, name="oracle",
        return_list=True)
    returned, cost = _returned_and_cost(prog, outs)
    if prog.twin is not None:
        twin, _ = bptt.scan(
            _twin_function(prog, non_seqs), sequences=sequences, non_sequences=passed,
            n_steps=n_steps, go_backwards=prog.go_backwards, name="twin")
        returned.append(twin)
        cost = cost + 0.25 * T.sum(twin * twin)
    all_inputs = floats + ([n_var] if n_var is not None else [])
    picked = list(range(len(floats))) if prog.wrt is None else list(prog.wrt)
    return Built(all_inputs, outs, returned, dict(updates), shared, cost,
                 [floats[i] for i in picked], picked)


def _step_function(prog, non_seqs, shared):
    """The step: sequence taps, output taps, then the passed non-sequences."""
    def step(*args):
        args, env = list(args), {}
        for i, s in enumerate(prog.seqs):
            for k in s.taps:
                env[f"s{i}@{k}"] = args.pop(0)
        for j, o in enumerate(prog.outs):
            for k in o.taps:
                env[f"o{j}@{k}"] = args.pop(0)
        for m, (v, n) in enumerate(zip(non_seqs, prog.non_seqs)):
            env[f"n{m}"] = args.pop(0) if n.passed else v
        assert not args, args
        outs = [build_expr(o.expr, env) for o in prog.outs]
        result = [outs]
        if shared is not None:
            env["sh"] = shared
            result.append({shared: build_expr(prog.shared[1], env)})
        if prog.until is not None:
            cond = T.gt(T.sum(build_expr(prog.until[0], env)), prog.until[1])
            result.append(bptt.until(cond))
        return tuple(result) if len(result) > 1 else outs
    return step


def _twin_function(prog, non_seqs):
    """The twin loop's step: the same sequences and non-sequences, no state."""
    def twin_step(*args):
        args, env = list(args), {}
        for i, s in enumerate(prog.seqs):
            for k in s.taps:
                env[f"s{i}@{k}"] = args.pop(0)
        for m, (v, n) in enumerate(zip(non_seqs, prog.non_seqs)):
            env[f"n{m}"] = args.pop(0) if n.passed else v
        return build_expr(prog.twin, env)
    return twin_step


def _n_steps(prog):
    """scan's n_steps, and the symbolic input that gives it (or None)."""
    if prog.n_steps is None:
        return None, None
    if prog.n_steps[0] == "const":
        return prog.n_steps[1], None
    n = T.lscalar("n_steps")
    return n, n


def _outputs_info(prog, inits):
    info = []
    for o, x in zip(prog.outs, inits):
        if o.kind == "nit_sot":
            info.append(None)
        elif o.kind == "sit_sot":
            info.append(x)
        else:
            info.append(dict(initial=x, taps=list(o.taps)))
    return info


def _returned_and_cost(prog, outs):
    """What the function returns of each output (all rows or the last), and the cost."""
    returned, cost = [], 0.0
    for j, (o, y) in enumerate(zip(prog.outs, outs)):
        if o.use == "none":
            continue
        r = y[-1] if o.use == "last" else y
        if o.use != "cost":
            returned.append(r)
        cost = cost + _cost_term(prog.cost, j, r)
    return returned, cost


def _cost_term(kind, j, r):
    if kind == "half_sq":
        return 0.5 * T.sum(r ** 2)
    if kind == "cube":
        return 0.4 * T.sum(r * r * r)
    return (0.3 + 0.2 * j) * T.sum(r) + (0.1 + 0.05 * j) * T.sum(r * r)


def make_values(prog):
    """The arrays `prog` runs on, from its seed: dict of seqs, inits, non_seqs, shared, n."""
    rng = np.random.default_rng(prog.seed)
    H, K = prog.sizes
    size = {"H": H, "K": K}

    def draw(shape, lead=()):
        return rng.uniform(-1.0, 1.0, lead + tuple(size[c] for c in shape))

    n = prog.n_value()
    base = prog.steps if n is None else abs(n)
    seqs = [draw(s.shape, (base + s.hi - s.lo + s.extra,)) for s in prog.seqs]
    inits = [None if o.kind == "nit_sot" else
             draw(o.shape, (o.depth,) if o.kind == "mit_sot" else ()) for o in prog.outs]
    non_seqs = []
    for m in prog.non_seqs:
        non_seqs.append(non_seqs[m.source] if isinstance(m.source, int) else draw(m.shape))
    shared = None if prog.shared is None else draw(prog.shared[0])
    return {"seqs": seqs, "inits": inits, "non_seqs": non_seqs, "shared": shared, "n": n}


def input_values(prog, values):
    """The function's arguments, in `Built.inputs` order."""
    args = values["seqs"] + \
        [x for x, o in zip(values["inits"], prog.outs) if x is not None and o.init == "input"] + \
        [v for v, n in zip(values["non_seqs"], prog.non_seqs) if n.source == "input"]
    if prog.n_steps is not None and prog.n_steps[0] == "sym":
        args.append(np.int64(values["n"]))
    return args
