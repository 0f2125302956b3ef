"""`inplace_inc_subtensor`: a region write into a fresh buffer nothing else reads skips the copy."""
from __future__ import annotations

import functools

import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.graph.traversal import toposort
from bptt.scan import Scan
from bptt.tensor.subtensor import AdvancedIncSubtensor, IncSubtensor

from ..helpers import backward_step, excluding, without_rewrites
from ..scan.test_rewriting import rewritten

PASS = ("inplace_inc_subtensor",)
WRITES = (IncSubtensor, AdvancedIncSubtensor)


def _writes(nodes):
    return [n for n in nodes if isinstance(n.op, WRITES)]


def _nn_lstm_grad():
    """bptt.nn.LSTM's gradient: its gates are constant column slices of z (H known)."""
    import bptt.nn as nn

    lstm = nn.LSTM(3, 4, rng=0)
    x = T.tensor3("x")
    h = T.tensor3("h0")
    c = T.tensor3("c0")
    states, _ = lstm(x, (h, c))
    loss = (states ** 2).sum()
    return [x, h, c], [loss] + bptt.grad(loss, [x] + lstm.params())


def test_the_lstm_backward_step_writes_the_gate_cotangent_into_one_zeros_row():
    ins, outs = _nn_lstm_grad()
    f = bptt.function(ins, outs, mode="PY")
    _, nodes = backward_step(f)
    gate_writes = [n for n in _writes(nodes) if n.outputs[0].ndim == 2]
    assert len(gate_writes) == 4 and all(n.op.inplace for n in gate_writes)
    assert "{inplace}" in str(gate_writes[0].op)
    with excluding(PASS):
        f = bptt.function(ins, outs, mode="PY")
    _, nodes = backward_step(f)
    assert len(_writes(nodes)) == 4 and not any(n.op.inplace for n in _writes(nodes))


def test_the_lstm_gradient_equals_the_rewrite_free_graph():
    ins, outs = _nn_lstm_grad()
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s) for s in ((5, 2, 3), (1, 2, 4), (1, 2, 4))]
    with without_rewrites():
        expected = bptt.function(ins, outs, mode="PY")(*args)
    for mode_name in ("PY", "NUMBA"):
        actual = bptt.function(ins, outs, mode=mode_name)(*args)
        for e, g in zip(expected, actual):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def _case(case):
    """(inputs, outputs) whose first output is the write examined."""
    x, y, W = T.matrix("x"), T.matrix("y"), T.matrix("W")
    z = T.zeros((x.shape[0], 4))
    if case == "zeros":
        return [x, y], [T.set_subtensor(z[:, 1:3], y)]
    if case == "product":
        return [x, W, y], [T.inc_subtensor(T.dot(x, W)[::-1, :2], y)]
    if case == "rows":
        return [x, y], [T.inc_subtensor(z[[0, 1, 0]], y)]
    if case == "other_reader":
        return [x, y], [T.set_subtensor(z[:, 1:3], y), z.sum()]
    if case == "graph_output":
        return [x, y], [T.set_subtensor(z[:, 1:3], y), z]
    if case == "graph_input":
        return [x, y], [T.set_subtensor(x[:, 1:3], y)]
    if case == "view_of_input":
        return [x, y], [T.set_subtensor(x[::-1][:, 1:3], y)]
    if case == "values_read_the_buffer":
        return [x], [T.set_subtensor(z[:, 1:3], z[:, 0:2] + 1.0)]
    raise ValueError(case)


@pytest.mark.parametrize("case", ["zeros", "product", "rows"])
def test_a_fresh_buffer_read_once_is_written_in_place(case):
    fg = rewritten(*_case(case))
    node = fg.outputs[0].owner
    assert isinstance(node.op, WRITES) and node.op.inplace
    assert not rewritten(*_case(case), exclude=PASS).outputs[0].owner.op.inplace


@pytest.mark.parametrize("case", ["other_reader", "graph_output", "graph_input", "view_of_input",
                                  "values_read_the_buffer"])
def test_the_flag_is_not_set(case):
    node = rewritten(*_case(case)).outputs[0].owner
    assert isinstance(node.op, WRITES) and not node.op.inplace


# -- values: random programs against the rewrite-free graph, PY and NUMBA --------------------------
M, K, N = 5, 3, 6


def _region(rng):
    """A random index into an (M, N) buffer: (apply, shape of the region)."""
    kind = rng.choice(["block", "reversed", "row", "rows", "cols"])
    r0, c0 = int(rng.integers(0, M - 1)), int(rng.integers(0, N - 1))
    r1, c1 = int(rng.integers(r0 + 1, M + 1)), int(rng.integers(c0 + 1, N + 1))
    if kind == "block":
        return (lambda z: z[r0:r1, c0:c1]), (r1 - r0, c1 - c0)
    if kind == "reversed":
        return (lambda z: z[::-1, c0:c1]), (M, c1 - c0)
    if kind == "row":
        return (lambda z: z[r0]), (N,)
    rows = [int(r) for r in rng.integers(0, M, 3)]            # repeats accumulate with inc
    if kind == "rows":
        return (lambda z: z[rows]), (3, N)
    return (lambda z: z[r0:r1, rows[:2]]), (r1 - r0, 2)


def _values(rng, shape, v):
    """Values for a region of `shape`: a scalar, a broadcast row, or a slice of the input v."""
    kind = rng.choice(["scalar", "row", "full"])
    if kind == "scalar":
        return T.constant(float(rng.standard_normal()))
    width = shape[-1]
    if kind == "row":
        return T.tanh(v[0:1, :width]) if len(shape) == 2 else T.tanh(v[0, :width])
    return v[:shape[0], :width] * 2.0 if len(shape) == 2 else v[0, :width] * 2.0


def random_program(seed):
    """(inputs, outputs): a fresh buffer (zeros, a product, a reshaped product or an
    elementwise result) written 1-4 times; sometimes another node or the outputs read
    an intermediate buffer (then the writes before it must copy)."""
    rng = np.random.default_rng(seed)
    a, W, v = T.matrix("a"), T.matrix("W"), T.matrix("v")
    base = rng.choice(["zeros", "dot", "reshaped", "elemwise"])
    z = {"zeros": lambda: T.zeros((a.shape[0] + 2, W.shape[1])),
         "dot": lambda: T.dot(T.concatenate([a, a[:2]]), W),
         "reshaped": lambda: T.dot(T.concatenate([a, a[:2]]), W).reshape((M, N)),
         "elemwise": lambda: T.exp(v[:M, :N])}[base]()
    outs = []
    for _ in range(int(rng.integers(1, 5))):
        at, shape = _region(rng)
        y = _values(rng, shape, v)
        if rng.random() < 0.5:
            z = T.set_subtensor(at(z), y)
        else:
            z = T.inc_subtensor(at(z), y)
        if rng.random() < 0.2:
            outs.append(z.sum() if rng.random() < 0.5 else z)        # an extra reader
    return [a, W, v], [z * 3.0 + 1.0] + outs


def _inputs(seed):
    rng = np.random.default_rng(seed + 1)
    return [rng.standard_normal(s) for s in ((M - 2, K), (K, N), (M + 1, N + 1))]


@functools.lru_cache(maxsize=None)
def _expected(seed):
    """Program `seed`'s outputs on its inputs by the rewrite-free graph in PY mode: the one
    reference both modes' rewritten functions are held to."""
    ins, outs = random_program(seed)
    with without_rewrites():
        reference = bptt.function(ins, outs, mode="PY", on_unused_input="ignore")
    return tuple(reference(*_inputs(seed)))


@pytest.mark.parametrize("mode_name", ["PY", "NUMBA"])
def test_random_programs_equal_the_rewrite_free_graph(mode_name):
    flagged = 0
    for seed in range(8):
        ins, outs = random_program(seed)
        f = bptt.function(ins, outs, mode=mode_name, on_unused_input="ignore")
        flagged += sum(n.op.inplace for n in _writes(f.fgraph.toposort()))
        args = _inputs(seed)
        copies = [x.copy() for x in args]
        expected = _expected(seed)
        for _ in range(2):                        # a second call sees fresh buffers again
            actual = f(*args)
            for e, g in zip(expected, actual):
                np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12, err_msg=f"seed {seed}")
        for x, c in zip(args, copies):
            np.testing.assert_array_equal(x, c)      # the caller's arrays are never written
    assert flagged >= 8                               # the programs do exercise the pass


def test_a_step_graph_writing_into_zeros_equals_the_rewrite_free_loop():
    X, h0 = T.tensor3("X"), T.matrix("h0")

    def step(x, h):
        z = T.zeros((h.shape[0], 2 * h.shape[1]))
        z = T.set_subtensor(z[:, :h.shape[1]], T.tanh(x + h))
        z = T.inc_subtensor(z[:, h.shape[1]:], h * x)
        return z[:, ::2] + z[:, 1::2]

    hs, _ = bptt.scan(step, sequences=X, outputs_info=h0)
    loss = (hs ** 2).sum()
    ins, outs = [X, h0], [hs] + bptt.grad(loss, [X, h0])
    rng = np.random.default_rng(3)
    args = [rng.standard_normal((4, 2, 3)), rng.standard_normal((2, 3))]
    with without_rewrites():
        expected = bptt.function(ins, outs, mode="PY")(*args)
    for mode_name in ("PY", "NUMBA"):
        f = bptt.function(ins, outs, mode=mode_name)
        steps = [n.op.inner_outputs for n in f.fgraph.toposort() if isinstance(n.op, Scan)]
        assert any(n.op.inplace for outs_ in steps for n in _writes(toposort(outs_)))
        for e, g in zip(expected, f(*args)):
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)
