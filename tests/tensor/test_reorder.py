"""Sequence-memory rewrites (bptt/tensor/rewriting/reorder.py).

Oracles: the same function compiled with the pass excluded (``config.exclude_rewrites``),
PY and NUMBA; NumPy for the small graphs. Structure: after rewriting, no join keeps an
empty input, no IncSubtensor adds into a zeros buffer, and no weight-gradient product
reads a reshape of a reversed view (a reshape that would copy).
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.tensor.basic import Alloc, Join
from bptt.tensor.blas import Gemm
from bptt.tensor.math import Dot
from bptt.tensor.shape import Reshape, SumTo
from bptt.tensor.subtensor import IncSubtensor, Subtensor

from ..helpers import excluding

NAME = "sequence_memory"
# The weight-gradient products ordered here are stacked over all steps only when the
# backward loop does not sum them in chunks: every graph below is compiled without
# scan_chunk_accumulators (tests/scan/test_chunks.py covers the chunked sums, which read
# a reversed trace in memory order themselves).
CHUNKS = "scan_chunk_accumulators"


def compiled(inputs, outputs, mode, with_pass=True):
    with excluding((CHUNKS,) if with_pass else (NAME, CHUNKS)):
        return bptt.function(inputs, outputs, mode=mode)


def nodes(f, cls):
    return [n for n in f.fgraph.toposort() if isinstance(n.op, cls)]


def fired(f, rewrite):
    from bptt.graph.rewriting import fired as counts
    return counts(f.fgraph)[rewrite]


def assert_close(got, want):
    """Equal up to summation order inside BLAS (float64): rtol 1e-10."""
    assert len(got) == len(want)
    for g, e in zip(got, want):
        g, e = np.asarray(g), np.asarray(e)
        assert g.shape == e.shape and g.dtype == e.dtype
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)


def reads_reversed(v):
    """Whether `v` is a view that reverses axis 0 (through slices)."""
    while v.owner is not None and isinstance(v.owner.op, Subtensor):
        if any(getattr(e, "step", None) == -1 for e in v.owner.op.idx_list):
            return True
        v = v.owner.inputs[0]
    return False


# -- the RNN gradient: structure and values ------------------------------------------------

def rnn(go_backwards=False, truncate=-1, until=False, wrt_x=True):
    X, h0 = T.tensor3("X"), T.matrix("h0")
    U, W, b, thr = T.matrix("U"), T.matrix("W"), T.vector("b"), T.dscalar("thr")

    def step(x, h, U, W, b, thr):
        h_new = T.tanh(T.dot(x, U) + T.dot(h, W) + b)
        return (h_new, bptt.until(h_new.sum() > thr)) if until else h_new

    H, _ = bptt.scan(step, sequences=X, outputs_info=h0, non_sequences=[U, W, b, thr],
                     go_backwards=go_backwards, truncate_gradient=truncate)
    loss = 0.5 * (H ** 2).sum()
    wrt = [U, W, b, h0] + ([X] if wrt_x else [])     # the benchmark's gradients, and X's
    return [X, h0, U, W, b, thr], [loss] + bptt.grad(loss, wrt)


def rnn_values(data, n_in=3, n_h=4):
    t = data.draw(st.integers(0, 5), label="T")
    bsz = data.draw(st.integers(1, 3), label="B")
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16), label="seed"))
    thr = data.draw(st.sampled_from([-5.0, 0.5, 100.0]), label="thr")
    return [rng.standard_normal((t, bsz, n_in)), 0.1 * rng.standard_normal((bsz, n_h)),
            rng.standard_normal((n_in, n_h)) / 2, rng.standard_normal((n_h, n_h)) / 2,
            0.1 * rng.standard_normal(n_h), thr]


def test_rnn_gradient_structure():
    inputs, outputs = rnn(wrt_x=False)
    f = compiled(inputs, outputs, "PY")
    assert fired(f, "join_drop_empty") == 1
    assert fired(f, "inc_of_zeros_as_join") == 1
    assert fired(f, "sum_over_steps_in_order") == 2
    # One join left: the one-row zeros and the loss cotangent. The join of the backward
    # states with an empty rest of the cotangent is gone (it kept the cotangent alive).
    (join,) = nodes(f, Join)
    assert isinstance(join.inputs[0].owner.op, Alloc) and join.inputs[0].type.shape[0] == 1
    assert not any(type(i.owner.op).__name__ == "Scan" for i in join.inputs if i.owner)
    # No T-row zeros buffer copied to add the loss cotangent into it (and h0's one-row
    # SetSubtensor{:1} is its value: canonicalize.write_of_whole).
    assert nodes(f, IncSubtensor) == []
    before = compiled(inputs, outputs, "PY", with_pass=False)
    assert nodes(before, IncSubtensor)
    assert any(_from_scan(i) for n in nodes(before, Join) for i in n.inputs)


def _from_scan(v):
    """Whether `v` is computed from the backward Scan's outputs (its carried cotangent's
    last row, plus the loss cotangent's row of h0)."""
    from bptt.graph.traversal import ancestors

    return any(a.owner is not None and type(a.owner.op).__name__ == "Scan"
               and "grad of" in a.owner.op.info.label for a in ancestors([v]))


def product_reshapes(f):
    """(reversed?, the backward loop's cotangent?) for each reshaped operand of a matrix
    product (2-d: not a product of flattened vectors)."""
    found = []
    for n in nodes(f, Gemm) + nodes(f, Dot):
        if n.outputs[0].ndim != 2:
            continue
        for v in n.inputs:
            if v.owner is not None and not isinstance(v.owner.op, Reshape) and v.owner.inputs:
                v = v.owner.inputs[0]           # through the transpose
            if v.owner is None or not isinstance(v.owner.op, Reshape):
                continue
            src = base = v.owner.inputs[0]
            while base.owner is not None and isinstance(base.owner.op, Subtensor):
                base = base.owner.inputs[0]
            cotangent = base.owner is not None and isinstance(base.owner.op, SumTo)
            found.append((reads_reversed(src), cotangent))
    return sorted(found)


def test_rnn_weight_products_read_inputs_in_step_order():
    """dU and dW: X and H are reshaped in step order (no copy); only the backward loop's
    cotangent, which exists after the loop anyway, is reversed. Without the pass it is the
    opposite. (The forward's x @ U over all steps is no Dot: scan_seq_into_buffer writes
    it with ProductRows.)"""
    inputs, outputs = rnn(wrt_x=False)
    after = product_reshapes(compiled(inputs, outputs, "PY"))
    before = product_reshapes(compiled(inputs, outputs, "PY", with_pass=False))
    assert after == [(False, False)] * 2 + [(True, True)] * 2
    assert before == [(False, True), (False, True), (True, False), (True, False)]


@given(data=st.data(), go_backwards=st.booleans(), truncate=st.sampled_from([-1, 1, 2]),
       until=st.booleans())
def test_rnn_values_match_without_the_pass_py(data, go_backwards, truncate, until):
    inputs, outputs = rnn(go_backwards, truncate, until)
    key = (go_backwards, truncate, until)
    if key not in _PY_CACHE:
        _PY_CACHE[key] = (compiled(inputs, outputs, "PY"),
                          compiled(inputs, outputs, "PY", with_pass=False))
    f, g = _PY_CACHE[key]
    args = rnn_values(data)
    assert_close(f(*args), g(*args))


_PY_CACHE = {}


@pytest.fixture(scope="module")
def numba_trio():
    inputs, outputs = rnn()
    return (compiled(inputs, outputs, "NUMBA"), compiled(inputs, outputs, "NUMBA", with_pass=False),
            compiled(inputs, outputs, "PY", with_pass=False))


@given(data=st.data())
def test_rnn_values_match_without_the_pass_numba(numba_trio, data):
    f, g, py = numba_trio
    assert fired(f, "sum_over_steps_in_order") == 2
    args = rnn_values(data)
    got = f(*args)
    assert_close(got, g(*args))
    assert_close(got, py(*args))


# -- the rewrites on small graphs ----------------------------------------------------------

def test_join_drops_a_provably_empty_input(mode):
    x, y = T.matrix("x"), T.matrix("y")
    out = T.concatenate([x, y[y.shape[0]:]], axis=0)
    keep = T.concatenate([x, y[y.shape[0] - 1:]], axis=0)
    f = compiled([x, y], [out, keep], mode)
    joins = nodes(f, Join)
    assert len(joins) == 1 and len(joins[0].inputs) == 2     # only `keep` joins
    xv, yv = np.arange(6.0).reshape(3, 2), np.arange(8.0).reshape(4, 2)
    got = f(xv, yv)
    np.testing.assert_array_equal(got[0], xv)
    np.testing.assert_array_equal(got[1], np.concatenate([xv, yv[3:]]))


def test_join_dropping_an_empty_input_keeps_the_dtype_it_set():
    x, y = T.imatrix("x"), T.matrix("y")
    out = T.concatenate([x, y[y.shape[0]:]], axis=0)      # x is cast to float64 in the join
    f = compiled([x, y], [out], "PY")
    assert not nodes(f, Join) and out.dtype == "float64"
    got = f(np.ones((2, 2), "int32"), np.ones((3, 2)))[0]
    assert got.dtype == np.float64 and got.shape == (2, 2)


@given(n=st.integers(0, 4), m=st.integers(1, 3), k=st.integers(0, 2),
       seed=st.integers(0, 2 ** 16))
def test_inc_of_zeros_is_a_join(mode, n, m, k, seed):
    y = T.matrix("y")
    zeros = T.zeros((y.shape[0] + k, y.shape[1]))
    out = bptt.tensor.subtensor.inc_subtensor(zeros[k:], y) * 2.0
    key = (mode, k)
    if key not in _INC_CACHE:
        _INC_CACHE[key] = compiled([y], [out], mode)
        assert not nodes(_INC_CACHE[key], IncSubtensor)
    yv = np.random.default_rng(seed).standard_normal((n, m))
    want = np.zeros((n + k, m))
    want[k:] += yv
    np.testing.assert_array_equal(_INC_CACHE[key](yv)[0], want * 2.0)


_INC_CACHE = {}


def test_inc_of_zeros_with_a_broadcast_value_is_kept():
    y, n = T.matrix("y"), T.lscalar("n")
    zeros = T.zeros((n + 1, y.shape[1]))
    out = bptt.tensor.subtensor.inc_subtensor(zeros[1:], y)      # y may be one row
    f = compiled([y, n], [out], "PY")
    assert nodes(f, IncSubtensor)
    np.testing.assert_array_equal(f(np.ones((1, 2)), 3)[0], [[0, 0], [1, 1], [1, 1], [1, 1]])


def flat(v):
    return v.reshape((v.shape[0] * v.shape[1], v.shape[2]))


@given(t=st.integers(0, 4), b=st.integers(1, 3), seed=st.integers(0, 2 ** 16))
def test_product_of_two_reversed_sequences_drops_both(mode, t, b, seed):
    x, z = T.tensor3("x"), T.vector("z")
    key = ("both", mode)
    if key not in _DOT_CACHE:
        n = x.shape[0]
        y = T.tanh(x[:, :, :2]) * z          # steps and batch provably those of x
        out = T.dot(flat(x[::-1][:n]).T, flat(y[::-1]))
        f = _DOT_CACHE[key] = compiled([x, z], [out], mode)
        assert fired(f, "sum_over_steps_in_order") == 1
        products = nodes(f, Dot) + nodes(f, Gemm)
        assert products and not any(reads_reversed(r.owner.inputs[0]) for n in products
                                    for v in n.inputs for r in [v, *(v.owner.inputs if
                                                                    v.owner else [])]
                                    if r.owner is not None and isinstance(r.owner.op, Reshape))
    rng = np.random.default_rng(seed)
    xv, zv = rng.standard_normal((t, b, 3)), rng.standard_normal(2)
    yv = np.tanh(xv[:, :, :2]) * zv
    want = xv[::-1].reshape(-1, 3).T @ yv[::-1].reshape(-1, 2)
    np.testing.assert_allclose(_DOT_CACHE[key](xv, zv)[0], want, rtol=1e-12, atol=1e-12)


_DOT_CACHE = {}


def test_product_of_unrelated_step_axes_is_kept():
    """Equal row counts but different step axes: reversing both would pair other rows."""
    x, y = T.tensor3("x"), T.tensor3("y")
    out = T.dot(flat(x[::-1]).T, flat(y[::-1]))
    f = compiled([x, y], [out], "PY")
    assert fired(f, "sum_over_steps_in_order") == 0
    rng = np.random.default_rng(0)
    xv, yv = rng.standard_normal((2, 6, 3)), rng.standard_normal((3, 4, 2))
    want = xv[::-1].reshape(-1, 3).T @ yv[::-1].reshape(-1, 2)
    np.testing.assert_allclose(f(xv, yv)[0], want, rtol=1e-12)


def test_one_reversed_operand_not_from_a_loop_is_kept():
    x, y = T.tensor3("x"), T.tensor3("y")
    n, m = x.shape[0], x.shape[1]
    out = T.dot(flat(x[::-1]).T, flat(y[:n, :m]))
    f = compiled([x, y], [out], "PY")
    assert fired(f, "sum_over_steps_in_order") == 0


def test_lstm_weight_products_read_the_trace_in_step_order(monkeypatch):
    """dWh pairs H (batch of h0) with the gate cotangent (batch of x @ Wx + h @ Wh): the
    batches are not provably equal, but the step axes are, and the dot checks that both
    fold as many rows. So H is reshaped in step order (no copy) and only the loop's
    cotangent is reversed; it was the opposite when every folded axis had to be equal.
    (With the backward reading the forward's pre-activation: recomputed, `H[::-1] @ Wh`
    is one more product over the reversed trace, not a weight product.)"""
    from ..helpers import lstm_grad_graph

    monkeypatch.setattr(bptt.config, "reuse_forward", True)
    inputs, outputs = lstm_grad_graph()
    found = product_reshapes(compiled(inputs, outputs, "PY"))
    assert (True, False) not in found and (True, True) in found
