"""`scan_step_shapes`: a step graph learns the sizes its outer inputs prove equal.

An RNN whose initial state is ``zeros((batch, W.shape[1]))`` has, outside,
``h.shape[1] == W.shape[1]``; inside the backward step the state row and the
non-sequence ``W.T`` are fresh variables, so the gradient kept
``SumTo(da, (B, W.shape[1]))``. With the pass it goes, and the SumTo to
``U``'s width, which is needed when U really has one column, stays (and the
other way round when the state is as wide as U). Values are compared with the pass excluded (PY and NUMBA),
over shapes with a batch or width of 1, zero steps, go_backwards,
truncate_gradient and until.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.compile.passes import pm
from bptt.graph.fg import FunctionGraph
from bptt.graph.traversal import toposort
from bptt.scan.op import Scan
from bptt.scan.rewriting.shapes import scan_step_shapes
from bptt.tensor.shape import SumTo
from bptt.tensor.subtensor import Subtensor

from ..helpers import backward_step, excluding

NAME = "scan_step_shapes"


def compiled(inputs, outputs, mode, with_pass=True):
    with excluding(() if with_pass else (NAME,)):
        return bptt.function(inputs, outputs, mode=mode)


def rnn(width_from="W", go_backwards=False, truncate=-1, until=False):
    """(inputs, loss and gradients) of a tanh RNN whose state width is W's or U's columns."""
    X, U, W, b = T.tensor3("X"), T.matrix("U"), T.matrix("W"), T.vector("b")
    thr = T.dscalar("thr")
    width = (W if width_from == "W" else U).shape[1]
    h0 = T.zeros((X.shape[1], width))

    def step(x, h, U, W, b, thr):
        h_new = T.tanh(T.dot(x, U) + T.dot(h, W) + b)
        return (h_new, bptt.until(h_new.sum() > thr)) if until else h_new

    H, _ = bptt.scan(step, sequences=X, outputs_info=h0, non_sequences=[U, W, b, thr],
                     go_backwards=go_backwards, truncate_gradient=truncate, name="rnn")
    loss = 0.5 * (H ** 2).sum() + H.sum()
    inputs = [X, U, W, b, thr]
    return inputs, [loss] + bptt.grad(loss, [X, U, W, b])


def sum_tos(f):
    """The step's unbroadcasts of the products' gradients (2-d); the bias gradient's per-step
    sum (1-d: it stays in the loop, see scan/rewriting/chunks.py) is not one of them."""
    _, nodes = backward_step(f)
    return sum(isinstance(n.op, SumTo) and n.outputs[0].ndim == 2 for n in nodes)


@st.composite
def rnn_values(draw, square):
    """Values where h's width is W's columns (square W) or U's (W of 1 or H columns)."""
    n, B, In, H = (draw(st.integers(0, 4)), draw(st.integers(1, 3)), draw(st.integers(1, 2)),
                   draw(st.integers(1, 3)))
    u_cols = H if not square else draw(st.sampled_from([1, H]))
    w_cols = H if square else draw(st.sampled_from([1, H]))
    b_len = draw(st.sampled_from([1, H]))
    thr = draw(st.sampled_from([-1.0, 0.5, 100.0]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    return [rng.standard_normal((n, B, In)), rng.standard_normal((In, u_cols)),
            0.5 * rng.standard_normal((H, w_cols)), rng.standard_normal(b_len), thr]


def assert_same(got, want):
    assert len(got) == len(want)
    for g, e in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-12, atol=1e-12)
        assert np.shape(g) == np.shape(e) and np.asarray(g).dtype == np.asarray(e).dtype


# -- structure ------------------------------------------------------------------------------
VARIANTS = [dict(), dict(go_backwards=True, truncate=2), dict(until=True),
            dict(until=True, truncate=1)]


@pytest.mark.parametrize("variant", VARIANTS, ids=str)
def test_sum_to_over_the_weights_width_goes(variant):
    """Two SumTos: da to the width of W (for dh) and to the width of U (for dX). With h as
    wide as W, the first changes nothing and goes; U may have one column: the second stays
    (the values below draw U and b with one column)."""
    inputs, outputs = rnn("W", **variant)
    assert sum_tos(compiled(inputs, outputs, "PY", with_pass=False)) == 2
    assert sum_tos(compiled(inputs, outputs, "PY")) == 1


def test_the_other_sum_to_goes_when_h_is_as_wide_as_u():
    inputs, outputs = rnn("U")
    assert sum_tos(compiled(inputs, outputs, "PY", with_pass=False)) == 2
    assert sum_tos(compiled(inputs, outputs, "PY")) == 1


def test_int_non_sequence_equal_to_a_row_size():
    """``k = X.shape[1]`` enters the step as an int non-sequence: ``x_t[:k]`` then covers
    the whole row and is ``x_t``."""
    X = T.matrix("X")
    ys, _ = bptt.scan(lambda x, k: 2.0 * x[:k], sequences=X, non_sequences=X.shape[1])
    for with_pass, count in [(False, 1), (True, 0)]:
        f = compiled([X], ys, "PY", with_pass)
        node = next(n for n in f.fgraph.toposort() if isinstance(n.op, Scan))
        nodes = toposort(node.op.inner_outputs)
        assert sum(isinstance(n.op, Subtensor) for n in nodes) == count
        x = np.arange(6.0).reshape(3, 2)
        np.testing.assert_array_equal(f(x), 2 * x)


def test_pass_changes_nothing_the_second_time():
    """Run the pipeline up to and including the pass, then the pass again: nothing changes."""
    inputs, outputs = rnn("W")
    fg = FunctionGraph(inputs, outputs, clone=True)
    for rw, _ in pm.passes[:pm.names().index(NAME) + 1]:
        rw.apply(fg)
    assert not scan_step_shapes.apply(fg)


# -- values: pass included vs excluded -------------------------------------------------------
@given(data=st.data(), variant=st.sampled_from(VARIANTS), square=st.booleans())
def test_values_match_without_the_pass_py(data, variant, square):
    inputs, outputs = rnn("W" if square else "U", **variant)
    f, ref = compiled(inputs, outputs, "PY"), compiled(inputs, outputs, "PY", with_pass=False)
    vals = data.draw(rnn_values(square))
    assert_same(f(*vals), ref(*vals))


@pytest.fixture(scope="module", params=[dict(), dict(go_backwards=True, truncate=2)], ids=str)
def numba_pair(request):
    inputs, outputs = rnn("W", **request.param)
    return compiled(inputs, outputs, "NUMBA"), compiled(inputs, outputs, "PY", with_pass=False)


@given(data=st.data())
def test_values_match_without_the_pass_numba(numba_pair, data):
    f, ref = numba_pair
    assert sum_tos(f) == 1     # the SumTo to U's width stays
    vals = data.draw(rnn_values(True))
    assert_same(f(*vals), ref(*vals))


def test_gradient_matches_numpy_bptt(mode):
    """An independent oracle for the rewritten step: NumPy BPTT, B=1 and H=1 included."""
    inputs, outputs = rnn("W")
    f = compiled(inputs, outputs, mode)
    for n, B, In, H in [(3, 2, 2, 3), (2, 1, 1, 1), (0, 2, 1, 2)]:
        rng = np.random.default_rng(n + 10 * B + 100 * H)
        X = rng.standard_normal((n, B, In))
        U, W, b = rng.standard_normal((In, H)), 0.5 * rng.standard_normal((H, H)), \
            rng.standard_normal(H)
        got = f(X, U, W, b, 100.0)
        for g, w in zip(got, _numpy_rnn(X, U, W, b)):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def _numpy_rnn(X, U, W, b):
    hs = [np.zeros((X.shape[1], W.shape[1]))]
    for x in X:
        hs.append(np.tanh(x @ U + hs[-1] @ W + b))
    gX, gU, gW, gb = np.zeros_like(X), np.zeros_like(U), np.zeros_like(W), np.zeros_like(b)
    dh = np.zeros_like(hs[0])
    for t in reversed(range(len(X))):
        da = (dh + hs[t + 1] + 1.0) * (1 - hs[t + 1] ** 2)
        gX[t], gU, gW, gb = da @ U.T, gU + X[t].T @ da, gW + hs[t].T @ da, gb + da.sum(0)
        dh = da @ W.T
    loss = sum(0.5 * (h ** 2).sum() + h.sum() for h in hs[1:])
    return [loss, gX, gU, gW, gb]
