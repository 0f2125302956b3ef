"""Property tests on random expression graphs built from the op library.

Hypothesis draws a small *program*: a list of steps, each applying an op
(elementwise unary/binary with broadcasting, reductions, dot, dimshuffle,
reshape, stack) to earlier values. Every value has a *kind* that fixes its
shape in terms of one run-time size n, so every program is well formed:

    s: ()    v: (n,)    m: (n, n)    r: (1, n)    c: (n, 1)

and a flag *loose* for values whose size-n dimensions may be 1 at run time
(they descend from the input ``b``, whose static shape is unknown and whose
run-time shape is drawn among (n, n), (1, n), (n, 1), (1, 1)): those
broadcast like anything else but stay out of dot and reshape.

Two properties:

* `bptt.grad` agrees with finite differences (`verify_grad` of every step's
  value, PY mode: the rules are symbolic, the mode does not change them);
* PY and NUMBA give the same values, dtypes and shapes for every step's value
  and for the gradients of their sum.

Ops with kinks (max, abs, maximum) are left out: random compositions tie
(``max`` over a broadcast copy) or land on the kink (``abs(a - a)``), where
finite differences are meaningless; their rules are tested in test_math and
test_elemwise with values kept away from kinks.
"""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.tensor.shape import shape_i

from ..strategies import arrays, assert_same

UNARY = {
    "tanh": T.tanh, "sin": T.sin, "cos": T.cos, "sigmoid": T.sigmoid, "softplus": T.softplus,
    "neg": T.neg, "sqr": T.sqr, "exp_tanh": lambda a: T.exp(T.tanh(a)),
    "scale": lambda a: a * 0.5 - 0.25,
}
BINARY = {
    "add": T.add, "sub": T.sub, "mul": T.mul,
    "div": lambda a, b: a / (1 + b * b),          # denominators >= 1
    "mix": lambda a, b: T.switch(T.gt(b, 10.0), b, a) * b,  # switch with a never-true side
}
_RANK = {"s": 0, "v": 1, "r": 2, "c": 2, "m": 2}

# kinds of the inputs x, y, s, b (b is loose)
INPUTS = [("m", False), ("v", False), ("s", False), ("m", True)]


def _broadcast_kind(a, b):
    if a == b or b == "s":
        return a
    if a == "s":
        return b
    pair = {a, b}
    if pair == {"v", "r"}:
        return "r"
    if pair == {"v", "c"} or pair == {"r", "c"} or "m" in pair:
        return "m"
    raise AssertionError(pair)


_DOT_KIND = {("m", "m"): "m", ("m", "c"): "c", ("m", "v"): "v", ("r", "m"): "r",
             ("v", "m"): "v", ("v", "v"): "s"}


@st.composite
def programs(draw, max_steps=5):
    """A list of steps ``(op, args...)``; value i is input i, then step outputs."""
    kinds = list(INPUTS)
    steps = []
    for _ in range(draw(st.integers(1, max_steps))):
        step, kind = draw(_step(kinds))
        steps.append(step)
        kinds.append(kind)
    return steps


def _pick(draw, kinds, ok=lambda k, loose: True):
    choices = [i for i, (k, loose) in enumerate(kinds) if ok(k, loose)]
    return draw(st.sampled_from(choices)) if choices else None


@st.composite
def _step(draw, kinds):
    op = draw(st.sampled_from(["unary", "binary", "binary", "reduce", "dot", "dot3", "shuffle",
                               "reshape", "stack"]))
    a = _pick(draw, kinds)
    ka, la = kinds[a]
    if op == "unary":
        return ("unary", draw(st.sampled_from(sorted(UNARY))), a), (ka, la)
    if op == "binary":
        b = _pick(draw, kinds)
        kb, lb = kinds[b]
        return ("binary", draw(st.sampled_from(sorted(BINARY))), a, b), \
            (_broadcast_kind(ka, kb), la or lb)
    if op == "reduce" and _RANK[ka]:
        how = draw(st.sampled_from(["sum", "mean", "sum0", "sum1k"] if _RANK[ka] == 2
                                   else ["sum", "mean"]))
        kind = {"sum": "s", "mean": "s", "sum0": "v", "sum1k": "c"}[how]
        return ("reduce", how, a), (kind, la or (how == "sum0" and ka == "c"))
    if op == "dot":
        pairs = [(i, j) for i, (ki, li) in enumerate(kinds) for j, (kj, lj) in enumerate(kinds)
                 if not li and not lj and (ki, kj) in _DOT_KIND]
        if pairs:
            i, j = draw(st.sampled_from(pairs))
            return ("dot", i, j), (_DOT_KIND[(kinds[i][0], kinds[j][0])], False)
    if op == "dot3":
        ms = [i for i, (k, loose) in enumerate(kinds) if k == "m" and not loose]
        if ms:
            return ("dot3", draw(st.sampled_from(ms)), draw(st.sampled_from(ms))), ("m", False)
    if op == "shuffle":
        if ka == "m":
            return ("transpose", a), ("m", la)
        if ka == "v":
            side = draw(st.sampled_from(["r", "c"]))
            return ("pad", a, side), (side, la)
    if op == "reshape" and not la and ka in ("m", "v", "c"):
        return ("reshape", a), ({"m": "m", "v": "c", "c": "v"}[ka], False)
    if op == "stack":
        same = [i for i, (k, loose) in enumerate(kinds) if k == ka and not loose]
        if not la and same:
            return ("stack", a, draw(st.sampled_from(same))), (ka, False)
    return ("unary", "tanh", a), (ka, la)


def build(program, inputs):
    """The graph of `program` on symbolic `inputs`: the value of every step."""
    vals = list(inputs)
    for step in program:
        op, *args = step
        if op == "unary":
            out = UNARY[args[0]](vals[args[1]])
        elif op == "binary":
            out = BINARY[args[0]](vals[args[1]], vals[args[2]])
        elif op == "reduce":
            how, x = args[0], vals[args[1]]
            out = {"sum": lambda: T.sum(x), "mean": lambda: T.mean(x),
                   "sum0": lambda: T.sum(x, axis=0),
                   "sum1k": lambda: T.sum(x, axis=1, keepdims=True)}[how]()
        elif op == "dot":
            out = T.dot(vals[args[0]], vals[args[1]])
        elif op == "dot3":     # a 3-d left operand, as in a batch of RNN states
            out = T.sum(T.dot(T.shape_padleft(vals[args[0]]), vals[args[1]]), axis=0)
        elif op == "transpose":
            out = vals[args[0]].T
        elif op == "pad":
            x = vals[args[0]]
            out = x.dimshuffle("x", 0) if args[1] == "r" else x.dimshuffle(0, "x")
        elif op == "reshape":
            x = vals[args[0]]
            out = {1: lambda: x.reshape((-1, 1)),
                   2: lambda: (x.T.reshape((-1,)).reshape((shape_i(x, 0), -1))
                               if x.type.shape[1] != 1 else T.flatten(x))}[x.ndim]()
        elif op == "stack":
            out = T.sum(T.stack([vals[args[0]], vals[args[1]]]), axis=0)
        vals.append(out)
    return vals[len(inputs):]


@st.composite
def points(draw, dtype):
    """Input values: x (n, n), y (n,), s (), b (n or 1, n or 1)."""
    n = draw(st.integers(1, 3))
    b_shape = (draw(st.sampled_from([1, n])), draw(st.sampled_from([1, n])))
    return [draw(arrays(dtype, s, domain="unit")) for s in [(n, n), (n,), (), b_shape]]


def _inputs(dtype):
    return [T.tensor(dtype, (None,) * _RANK[k]) for k, _ in INPUTS]


# PY examples cost milliseconds: draw more of them than the profile's default.
@settings(max_examples=4 * settings.default.max_examples)
@given(program=programs(), dtype=st.sampled_from(["float32", "float64"]), data=st.data())
def test_random_graph_gradients_match_finite_differences(program, dtype, data):
    pt = data.draw(points(dtype))
    bptt.verify_grad(lambda *xs: build(program, xs), pt, mode="PY")


# Each distinct program is a distinct numba compilation (~1-3 s of CPU for a graph and
# its gradients), while PY examples cost milliseconds: the NUMBA comparison draws
# fewer, smaller programs so that this file stays well under a minute.
@settings(max_examples=6)
@given(program=programs(max_steps=4), dtype=st.sampled_from(["float32", "float64"]),
       data=st.data())
def test_random_graphs_py_equals_numba(program, dtype, data):
    xs = _inputs(dtype)
    outs = build(program, xs)
    grads = bptt.grad(sum(T.sum(o) for o in outs), xs, disconnected_inputs="ignore")
    pt = data.draw(points(dtype))
    f_py = bptt.function(xs, outs + grads, mode="PY", on_unused_input="ignore")
    f_nb = bptt.function(xs, outs + grads, mode="NUMBA", on_unused_input="ignore")
    scale = 1 + sum(float(np.abs(p).sum()) for p in pt)
    for k, (a, b) in enumerate(zip(f_nb(*pt), f_py(*pt))):
        assert_same(a, b, scale=scale, what=f"output {k} of {program}")
