"""scan_pushout_rows and scan_state_rows: outputs computed row by row from the sequences.

Oracles: the graph compiled without any rewrite (`without_rewrites`), a NumPy
loop over Theano's tap rule, PY and NUMBA (the `mode` fixture); structure: no
Scan once every output is row-wise, the loop kept for until loops and for
states that read a state; too-short sequences raise the loop's own message.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.graph.traversal import toposort
from bptt.scan import Scan
from bptt.tensor.math import Dot

from ..helpers import without_rewrites
from .test_rewriting import compiled

PASSES = ("scan_pushout_rows", "scan_state_rows")


def _scans(f):
    return [n for n in f.fgraph.toposort() if isinstance(n.op, Scan)]


def toposort_inner(op):
    return toposort(op.inner_outputs, blockers=op.inner_inputs)


def _reference(fn_inputs, outputs, args):
    with without_rewrites():
        return bptt.function(fn_inputs, outputs, mode="PY", on_unused_input="ignore")(*args)


def _positions(length, taps, n_steps, backwards):
    """Rows each step reads (Theano's tap rule), in the order the steps run."""
    lo, hi = min(min(taps), 0), max(max(taps), 0)
    valid = length - (hi - lo)
    n = valid if n_steps is None else n_steps
    starts = range(n) if not backwards else range(valid - 1, valid - 1 - n, -1)
    return [[t + k - lo for k in taps] for t in starts]


def _map_step(taps):
    def step(*rows):
        out = 2.0
        for c, r in enumerate(rows):
            out = out + (c + 1.0) * r
        return out * 3.0
    return step


@settings(max_examples=12, deadline=None)   # each example compiles a new loop
@given(taps=st.lists(st.integers(-2, 2), min_size=1, max_size=3, unique=True),
       backwards=st.booleans(), row=st.sampled_from([(), (3,)]), data=st.data())
def test_a_map_is_whole_array_operations(mode, taps, backwards, row, data):
    lo, hi = min(min(taps), 0), max(max(taps), 0)
    length = data.draw(st.integers(hi - lo, hi - lo + 5), label="length")
    n_steps = data.draw(st.one_of(st.none(), st.integers(0, length - (hi - lo))), label="n")
    u = T.tensor("float64", (None,) + row, name="u")
    n = T.lscalar("n")
    given_n = None if n_steps is None else data.draw(st.sampled_from([n, n_steps]), label="as")
    out, _ = bptt.scan(_map_step(taps), sequences=dict(input=u, taps=taps),
                       n_steps=given_n, go_backwards=backwards)
    ins = [u, n]
    f = compiled(ins, [out], mode)
    kept = compiled(ins, [out], "PY", exclude=PASSES)
    x = np.random.default_rng(length).normal(size=(length,) + row)
    args = [x, n_steps if n_steps is not None else 0]
    got = f(*args)[0]
    want = np.array([_map_step(taps)(*(x[i] for i in rows))
                     for rows in _positions(length, taps, n_steps, backwards)]).reshape(
                         (-1,) + row)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got, _reference(ins, [out], args)[0], rtol=1e-12)
    np.testing.assert_allclose(got, kept(*args)[0], rtol=1e-12)
    assert not _scans(f) and _scans(kept)


def test_a_map_with_a_product_and_a_state_buffer_leaves_the_loop(mode):
    """A loop whose state is a product of sequence rows (it reads no state) and whose
    nit_sot is elementwise: its buffer is the initial row, then the products."""
    X, W, h0 = T.dmatrix("X"), T.dmatrix("W"), T.dvector("h0")
    (h, y), _ = bptt.scan(lambda x_t, h, W: (T.dot(x_t, W), T.exp(x_t)), sequences=X,
                          outputs_info=[h0, None], non_sequences=W)
    f = compiled([X, W, h0], [h, y], mode)
    assert not _scans(f)
    rng = np.random.default_rng(1)
    args = [rng.normal(size=(5, 2)), rng.normal(size=(2, 4)), rng.normal(size=4)]
    got = f(*args)
    np.testing.assert_allclose(got[0], args[0] @ args[1], rtol=1e-12)
    np.testing.assert_allclose(got[1], np.exp(args[0]), rtol=1e-12)


def test_an_until_loop_and_a_recurrence_stay_loops(mode):
    x = T.dvector("x")
    o, _ = bptt.scan(lambda x_t: (x_t + 1, bptt.until(x_t > 3)), sequences=x)
    (h, y), _ = bptt.scan(lambda x_t, h: (h + x_t, x_t * 2), sequences=x,
                          outputs_info=[T.zeros(()), None])
    f = compiled([x], [o], mode)
    g = compiled([x], [h, y], mode)
    assert len(_scans(f)) == 1 and len(_scans(g)) == 1
    v = np.zeros(8)
    v[3] = 4.0
    np.testing.assert_allclose(f(v)[0], v[:4] + 1)
    np.testing.assert_allclose(g(v)[0], np.cumsum(v))
    np.testing.assert_allclose(g(v)[1], 2 * v)


@pytest.mark.parametrize("constant", [False, True])
@pytest.mark.parametrize("steps, length", [(5, 4), (4, 5)])
@pytest.mark.parametrize("taps", [[0], [-1, 1], [2]])
def test_a_too_short_sequence_raises_the_loop_s_error(mode, taps, steps, length, constant):
    """n_steps symbolic, or a constant (the outputs then have a static length)."""
    u, n = T.dvector("u"), T.lscalar("n")
    out, _ = bptt.scan(lambda *r: sum(r) * 2.0, sequences=dict(input=u, taps=taps),
                       n_steps=steps if constant else n, name="m")
    f = compiled([u, n], [out], mode)
    assert not _scans(f)
    x = np.arange(float(length))
    span = max(max(taps), 0) - min(min(taps), 0)
    try:
        want = _reference([u, n], [out], [x, steps])
    except ValueError as e:
        with pytest.raises(ValueError) as got:
            f(x, steps)
        assert str(got.value) == str(e)
        assert length < steps + span
        return
    np.testing.assert_allclose(f(x, steps)[0], want[0])


def test_a_negative_symbolic_n_steps_runs_backwards_as_the_loop(mode):
    u, n = T.dvector("u"), T.lscalar("n")
    out, _ = bptt.scan(lambda r: r * 2.0 + 1.0, sequences=u, n_steps=n, name="m")
    f = compiled([u, n], [out], mode)
    assert not _scans(f)
    x = np.arange(4.0)
    for steps in (-3, -1, 0, 2):
        np.testing.assert_allclose(f(x, steps)[0], _reference([u, n], [out], [x, steps])[0])
    np.testing.assert_allclose(f(x, -3)[0], x[::-1][:3] * 2 + 1)


def test_the_gradient_of_a_map_has_no_loop(mode):
    """Theano's test_remove_stuff: the backward loop of ``2 * m_t`` is ``2 * g``."""
    x = T.dvector("x")
    o, _ = bptt.scan(lambda m: 2 * m + T.sin(m), sequences=x)
    g = bptt.grad(o.mean(), x)
    f = compiled([x], [g], mode)
    assert not _scans(f)
    v = np.array([0.5, 1.0, -2.0])
    np.testing.assert_allclose(f(v)[0], (2 + np.cos(v)) / 3, rtol=1e-12)


@pytest.mark.parametrize("backwards", [False, True])
@pytest.mark.parametrize("truncate", [1, 2, 5])
def test_a_truncated_gradient_of_a_map_has_no_loop(mode, truncate, backwards):
    """The backward loop runs the last `truncate` steps; rows before them get zeros."""
    x = T.dvector("x")
    o, _ = bptt.scan(lambda m: 2 * m + T.sin(m), sequences=x, truncate_gradient=truncate,
                     go_backwards=backwards)
    g = bptt.grad((o * T.arange(o.shape[0])).sum(), x)
    f = compiled([x], [g], mode)
    assert not _scans(f)
    v = np.linspace(-1.0, 1.0, 4)
    want = np.arange(4.0) * (2 + np.cos(v[::-1] if backwards else v))
    want[:max(4 - truncate, 0)] = 0.0                  # steps the truncation leaves out
    want = want[::-1] if backwards else want
    np.testing.assert_allclose(f(v)[0], want, rtol=1e-12)
    np.testing.assert_allclose(f(v)[0], _reference([x], [g], [v])[0], rtol=1e-12)


# -- a state that only copies rows --------------------------------------------------------------
def _copy_state_loop(taps, backwards):
    W, h = T.dmatrix("W"), T.dmatrix("h")
    init = T.dmatrix("init") if taps != [-1] else T.dvector("init")

    def step(h_t, *rest):
        prev, W = rest[:-1], rest[-1]
        return h_t, T.dot(h_t + sum(prev), W)

    outs, _ = bptt.scan(step, sequences=[h], non_sequences=[W], go_backwards=backwards,
                        outputs_info=[dict(initial=init, taps=taps), None])
    return [W, h, init], outs


@pytest.mark.parametrize("backwards", [False, True])
@pytest.mark.parametrize("taps", [[-1], [-2], [-2, -1], [-3, -1]])
def test_a_state_copying_rows_is_a_shifted_sequence(mode, taps, backwards):
    """Theano's test_pushout_dot, with deeper taps: the state becomes views of its buffer
    (initial rows, then the sequence's rows), and the product leaves the loop."""
    ins, outs = _copy_state_loop(taps, backwards)
    f = compiled(ins, outs, mode)
    kept = compiled(ins, outs, "PY", exclude=PASSES)
    (loop,) = _scans(f)
    assert not any(isinstance(n.op, Dot) for n in toposort_inner(loop.op))
    assert any(isinstance(n.op, Dot) for n in toposort_inner(_scans(kept)[0].op))
    rng = np.random.default_rng(len(taps))
    extent = -min(taps)
    init = rng.normal(size=(extent, 3)) if taps != [-1] else rng.normal(size=3)
    args = [rng.normal(size=(3, 2)), rng.normal(size=(6, 3)), init]
    got, want = f(*args), _reference(ins, outs, args)
    for a, b, c in zip(got, want, kept(*args)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
        np.testing.assert_allclose(a, c, rtol=1e-12)
    rows = args[1][::-1] if backwards else args[1]
    buf = np.concatenate([np.atleast_2d(init), rows])
    prev = sum(buf[extent + k: extent + k + 6] for k in taps)
    np.testing.assert_allclose(got[1], (rows + prev) @ args[0], rtol=1e-12)


def test_a_too_short_initial_state_raises_the_loop_s_error(mode):
    ins, outs = _copy_state_loop([-3, -1], False)
    f = compiled(ins, outs, mode)
    args = [np.ones((3, 2)), np.ones((4, 3)), np.ones((2, 3))]
    with pytest.raises(ValueError) as want:
        _reference(ins, outs, args)
    with pytest.raises(ValueError) as got:
        f(*args)
    assert str(got.value) == str(want.value)


def _state_rows_loop(seq_taps, state_taps, backwards, n_kind, row):
    """A mit_sot/sit_sot copying ``f`` of sequence rows, and a nit_sot reading its taps."""
    u, W, n = T.tensor("float64", (None,) + row, name="u"), T.tensor(
        "float64", row * 2, name="W"), T.lscalar("n")
    init = T.tensor("float64", (None,) + row, name="init") if state_taps != [-1] else \
        T.tensor("float64", row, name="init")
    k = len(seq_taps)

    def step(*rest):
        rows, prev, w = rest[:k], rest[k:-1], rest[-1]
        new = sum((c + 1.0) * r for c, r in enumerate(rows)) + 0.5
        mixed = rows[0] - sum(prev)
        return new, (T.dot(mixed, w) if row else mixed * w)

    n_steps = {"none": None, "const": 3, "sym": n}[n_kind]
    outs, _ = bptt.scan(step, sequences=dict(input=u, taps=seq_taps), non_sequences=[W],
                        outputs_info=[dict(initial=init, taps=state_taps), None],
                        n_steps=n_steps, go_backwards=backwards)
    return [u, W, init, n], outs


def _state_rows_numpy(x, w, init, seq_taps, state_taps, n_steps, backwards):
    extent = -min(state_taps)
    buf = list(np.reshape(init, (-1,) + x.shape[1:])[:extent])
    zs = []
    for t, rows in enumerate(_positions(len(x), seq_taps, n_steps, backwards)):
        r = [x[i] for i in rows]
        prev = sum(buf[extent + t + j] for j in state_taps)
        zs.append((r[0] - prev) @ w if x.ndim > 1 else (r[0] - prev) * w)
        buf.append(sum((c + 1.0) * v for c, v in enumerate(r)) + 0.5)
    return np.array(buf[extent:]).reshape((-1,) + x.shape[1:]), np.array(zs)


@settings(max_examples=12, deadline=None)   # each example compiles a new loop
@given(seq_taps=st.lists(st.integers(-2, 2), min_size=1, max_size=2, unique=True),
       state_taps=st.sampled_from([[-1], [-2], [-2, -1], [-3, -1]]), backwards=st.booleans(),
       n_kind=st.sampled_from(["none", "const", "sym"]), row=st.sampled_from([(), (3,)]),
       data=st.data())
def test_a_state_copying_rows_matches_the_loop(mode, seq_taps, state_taps, backwards, n_kind,
                                               row, data):
    """Over sequence taps, state taps, directions and n_steps (None, a constant, symbolic,
    too many for the sequence): the loop's values, or its error, and no product in the step."""
    span = max(max(seq_taps), 0) - min(min(seq_taps), 0)
    length = data.draw(st.integers(span + 1, span + 5), label="length")
    steps = {"none": length - span, "const": 3,
             "sym": data.draw(st.integers(0, length - span + 1), label="n")}[n_kind]
    ins, outs = _state_rows_loop(seq_taps, state_taps, backwards, n_kind, row)
    f = compiled(ins, outs, mode)
    (loop,) = _scans(f)
    rng = np.random.default_rng(length)
    extent = -min(state_taps)
    init = rng.normal(size=((extent,) if state_taps != [-1] else ()) + row)
    args = [rng.normal(size=(length,) + row), rng.normal(size=row * 2), init, steps]
    try:
        want = _reference(ins, outs, args)
    except ValueError as e:
        assert length - span < steps
        with pytest.raises(ValueError) as got:
            f(*args)
        assert str(got.value) == str(e)
        return
    if row:
        assert not any(isinstance(nd.op, Dot) for nd in toposort_inner(loop.op))
    got = f(*args)
    state, zs = _state_rows_numpy(args[0], args[1], init, seq_taps, state_taps,
                                  None if n_kind == "none" else steps, backwards)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(got[0].reshape(state.shape), state, rtol=1e-12)
    np.testing.assert_allclose(got[1].reshape(zs.shape), zs, rtol=1e-12)
