"""scan() semantics: taps, n_steps, go_backwards, until, updates, nesting, closure."""
import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.scan import Scan
from bptt.tensor.random import copy_generator

from .reference import scan_reference


def _scan_nodes(f):
    return [n for n in f.fgraph.toposort() if isinstance(n.op, Scan)]


def test_sequence_taps_past_present_future(mode):
    u = T.dvector("u")
    out, _ = bptt.scan(lambda a, b, c: a + 10 * b + 100 * c,
                       sequences=dict(input=u, taps=[-2, 0, 1]))
    f = bptt.function([u], out, mode=mode)
    uv = np.arange(7.0)
    want = scan_reference(lambda a, b, c: [a + 10 * b + 100 * c], [(uv, (-2, 0, 1))], [(None, ())])[0]
    np.testing.assert_allclose(f(uv), want)
    assert len(f(uv)) == 7 - 3


def test_sequences_of_different_lengths_use_the_shortest(mode):
    a, b = T.dvector("a"), T.dvector("b")
    out, _ = bptt.scan(lambda x, y_tm1, y: x * y + y_tm1,
                       sequences=[a, dict(input=b, taps=[-1, 0])])
    f = bptt.function([a, b], out, mode=mode)
    np.testing.assert_allclose(f(np.arange(10.0), np.ones(4)), np.arange(3.0) + 1)
    np.testing.assert_allclose(f(np.arange(2.0), np.ones(4)), np.arange(2.0) + 1)


@pytest.mark.parametrize("go_backwards", [False, True])
@pytest.mark.parametrize("n", [0, 2, -3])
def test_static_n_steps_and_direction(mode, n, go_backwards):
    u = T.dvector("u")
    out, _ = bptt.scan(lambda x, acc: acc * 2 + x, sequences=u, outputs_info=T.constant(0.0),
                       n_steps=n, go_backwards=go_backwards)
    f = bptt.function([u], out, mode=mode)
    uv = np.asarray([1.0, 2.0, 3.0, 4.0])
    want = scan_reference(lambda x, acc: [acc * 2 + x], [(uv, (0,))], [(np.float64(0), (-1,))],
                          n_steps=n, go_backwards=go_backwards)[0]
    got = f(uv)
    assert got.shape == want.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, want)


def test_go_backwards_returns_outputs_in_processing_order(mode):
    out, _ = bptt.scan(lambda x: x * 10, sequences=T.dvector("u"), go_backwards=True)
    f = bptt.function([_first_input(out)], out, mode=mode)
    np.testing.assert_array_equal(f([1.0, 2.0, 3.0]), [30.0, 20.0, 10.0])


def _first_input(v):
    from bptt.graph.traversal import graph_inputs
    from bptt.graph.basic import Constant

    return next(x for x in graph_inputs([v]) if not isinstance(x, Constant))


def test_symbolic_n_steps_any_sign(mode):
    u, n = T.dvector("u"), T.lscalar("n")
    out, _ = bptt.scan(lambda x, acc: acc * 2 + x, sequences=u, outputs_info=T.constant(0.0),
                       n_steps=n)
    f = bptt.function([u, n], out, mode=mode)
    uv = np.asarray([1.0, 2.0, 3.0, 4.0])
    for k in (0, 1, 3, -1, -4):
        want = scan_reference(lambda x, acc: [acc * 2 + x], [(uv, (0,))],
                              [(np.float64(0), (-1,))], n_steps=k)[0]
        np.testing.assert_allclose(f(uv, k), want)
    with pytest.raises(ValueError, match="'u'.*has 4 rows, but 5 steps"):
        f(uv, 5)
    with pytest.raises(ValueError, match="'u'"):
        f(uv, -5)


@pytest.mark.parametrize("n", [1, -1])
def test_one_step_is_inlined_with_a_leading_dim(mode, n):
    u, h0 = T.dmatrix("u"), T.dvector("h0")
    (hs, ys), _ = bptt.scan(lambda x, h: [h + x, (h * x).sum()], sequences=u,
                            outputs_info=[h0, None], n_steps=n)
    f = bptt.function([u, h0], [hs, ys], mode=mode)
    assert not _scan_nodes(f)
    uv = np.arange(6.0).reshape(3, 2)
    h, y = f(uv, np.ones(2))
    row = uv[0] if n == 1 else uv[-1]
    np.testing.assert_allclose(h, [1 + row])
    np.testing.assert_allclose(y, [row.sum()])


def test_mit_sot_initial_rows_order(mode):
    x0 = T.dvector("x0")
    out, _ = bptt.scan(lambda a, b, c: a + 0 * b + 0 * c,
                       outputs_info=dict(initial=x0, taps=[-3, -2, -1]), n_steps=5)
    f = bptt.function([x0], out, mode=mode)
    np.testing.assert_array_equal(f([1.0, 2.0, 3.0]), [1, 2, 3, 1, 2])  # init[0] is output[-3]


def test_outputs_info_forms(mode):
    x = T.dvector("x")
    outs, _ = bptt.scan(lambda v, a, c: [a + v, v * 2, c - v, v * 3], sequences=x,
                        outputs_info=[T.constant(0.0), None, dict(initial=T.constant(1.0)),
                                      dict(initial=T.constant(5.0), taps=None)])
    f = bptt.function([x], outs, mode=mode)
    xv = np.arange(3.0)
    a, b, c, d = f(xv)
    np.testing.assert_allclose(a, np.cumsum(xv))
    np.testing.assert_allclose(b, 2 * xv)
    np.testing.assert_allclose(c, 1 - np.cumsum(xv))
    np.testing.assert_allclose(d, 3 * xv)    # taps=None: not fed back, initial ignored


@pytest.mark.parametrize("order", ["outputs_updates", "updates_outputs", "pairs", "until_last"])
def test_step_return_orders(mode, order):
    s = bptt.shared(0.0, name="s")

    def step(x, acc):
        out = acc + x
        ups = {s: s + x}
        if order == "outputs_updates":
            return out, ups
        if order == "updates_outputs":
            return ups, [out]
        if order == "pairs":
            return [out], [(s, s + x)]
        return out, ups, bptt.until(out > 100)

    x = T.dvector("x")
    out, updates = bptt.scan(step, sequences=x, outputs_info=T.constant(0.0))
    f = bptt.function([x], out, updates=updates, mode=mode)
    np.testing.assert_allclose(f(np.arange(4.0)), np.cumsum(np.arange(4.0)))
    assert s.get_value() == 6.0


def test_until_stops_after_the_true_step(mode):
    x, lim = T.dvector("x"), T.dscalar("lim")
    (acc, seen), _ = bptt.scan(lambda v, a: ([a + v, v], bptt.until(a + v > lim)),
                               sequences=x, outputs_info=[T.constant(0.0), None])
    f = bptt.function([x, lim], [acc, seen], mode=mode)
    a, s = f(np.arange(1.0, 10.0), 5.0)
    np.testing.assert_array_equal(a, [1, 3, 6])
    np.testing.assert_array_equal(s, [1, 2, 3])
    a, _ = f(np.arange(1.0, 4.0), 100.0)
    assert len(a) == 3


def test_nested_scan_and_output_as_sequence(mode):
    m = T.dmatrix("m")

    def row_cumsum(row):
        out, _ = bptt.scan(lambda v, acc: acc + v, sequences=row, outputs_info=T.constant(0.0))
        return out

    inner, _ = bptt.scan(row_cumsum, sequences=m)
    total, _ = bptt.scan(lambda r, acc: acc + r, sequences=inner,
                         outputs_info=T.zeros_like(m[0]))
    f = bptt.function([m], [inner, total], mode=mode)
    mv = np.arange(6.0).reshape(2, 3)
    a, b = f(mv)
    np.testing.assert_allclose(a, np.cumsum(mv, axis=1))
    np.testing.assert_allclose(b, np.cumsum(np.cumsum(mv, axis=1), axis=0))


def test_nested_scan_reads_the_outer_step(mode):
    x = T.dvector("x")

    def outer(v):
        ys, _ = bptt.scan(lambda acc: acc * v, outputs_info=T.constant(1.0), n_steps=3)
        return ys[-1]

    out, _ = bptt.scan(outer, sequences=x)
    f = bptt.function([x], out, mode=mode)
    np.testing.assert_allclose(f([1.0, 2.0, 3.0]), [1.0, 8.0, 27.0])


def test_return_list_and_no_outputs():
    x = T.dvector("x")
    outs, _ = bptt.scan(lambda v: v * 2, sequences=x, return_list=True)
    assert isinstance(outs, list) and len(outs) == 1
    a = bptt.shared(0)
    outs, updates = bptt.scan(lambda: {a: a + 1}, n_steps=3)
    assert outs is None and list(updates) == [a]


def test_python_number_outputs_are_constants(mode):
    x = T.dvector("x")
    (ones, acc), _ = bptt.scan(lambda v, a: [1, a + 1], sequences=x,
                               outputs_info=[None, T.constant(0.0)])
    f = bptt.function([x], [ones, acc], mode=mode)
    o, a = f(np.zeros(3))
    np.testing.assert_array_equal(o, [1, 1, 1])
    assert o.dtype == np.int64
    np.testing.assert_array_equal(a, [1.0, 2.0, 3.0])


def test_shared_variables_are_found_and_updated(mode):
    w = bptt.shared(np.asarray([1.0, 2.0]), name="w")
    count = bptt.shared(0, name="count")
    out, updates = bptt.scan(lambda x: ({count: count + 1}, x * w), sequences=T.dmatrix("x"))
    f = bptt.function([_first_input(out)], out, updates=updates, mode=mode)
    np.testing.assert_allclose(f(np.ones((3, 2))), np.ones((3, 2)) * [1.0, 2.0])
    assert count.get_value() == 3
    w.set_value(np.asarray([3.0, 3.0]))
    np.testing.assert_allclose(f(np.ones((1, 2))), [[3.0, 3.0]])
    assert count.get_value() == 4


def test_random_draws_advance_each_step(mode):
    srng = bptt.RandomStreams(7)
    out, updates = bptt.scan(lambda: srng.uniform((2,)), n_steps=4)
    f = bptt.function([], out, updates=updates, mode=mode)
    a = f()
    assert len({r.tobytes() for r in a}) == 4
    assert not np.array_equal(f(), a)


def test_random_draws_with_until(mode):
    """A step that draws and stops with until, returning (outputs, updates, until): the
    loop draws once per executed step, and the generator advances by exactly those draws,
    so the next call continues the stream (Theano's docs: pass the updates, or the draws
    repeat)."""
    srng = bptt.RandomStreams(5)
    count = bptt.shared(np.int64(0), name="count")
    lim = T.dscalar("lim")

    def step(h):
        hn = h + srng.uniform((), low=0.0, high=1.0)
        return hn, {count: count + 1}, bptt.until(hn > lim)

    out, updates = bptt.scan(step, outputs_info=T.constant(0.0), n_steps=50, name="walk")
    (rng,) = [v for v in updates if v is not count]
    ref = copy_generator(rng.get_value())

    def expected():
        h, rows = 0.0, []
        while len(rows) < 50 and (not rows or rows[-1] <= 3.0):
            h += ref.random()
            rows.append(h)
        return rows

    f = bptt.function([lim], out, updates=updates, mode=mode)
    steps = 0
    for _ in range(2):
        want = expected()
        steps += len(want)
        np.testing.assert_allclose(f(3.0), want, rtol=1e-12)
        assert count.get_value() == steps
        assert rng.get_value().bit_generator.state == ref.bit_generator.state
    g = bptt.function([lim], out, mode=mode)   # updates not passed: the draws repeat
    assert np.array_equal(g(3.0), g(3.0))


def test_upcast_of_step_output_to_state_dtype(mode):
    x = T.fvector("x")
    out, _ = bptt.scan(lambda v, a: a + v, sequences=x, outputs_info=T.constant(0.0, dtype="float64"))
    assert out.dtype == "float64"
    f = bptt.function([x], out, mode=mode)
    np.testing.assert_allclose(f(np.ones(3, "float32")), [1.0, 2.0, 3.0])


def test_truncate_gradient_is_recorded():
    out, _ = bptt.scan(lambda v: v, sequences=T.dvector(), truncate_gradient=5, name="tg")
    node = out.owner
    assert node.op.info.truncate_gradient == 5 and node.op.info.name == "tg"


def test_debugprint_shows_the_inner_graph():
    import io

    from bptt.printing import debugprint

    out, _ = bptt.scan(lambda v, a: a + T.tanh(v), sequences=T.dvector("u"),
                       outputs_info=T.constant(0.0), name="printed")
    buf = io.StringIO()
    debugprint(out, file=buf)
    text = buf.getvalue()
    assert "printed" in text and "tanh" in text.lower()


def test_equal_loops_merge(mode):
    x = T.dvector("x")
    a, _ = bptt.scan(lambda v, acc: acc + v * 2, sequences=x, outputs_info=T.constant(0.0))
    b, _ = bptt.scan(lambda v, acc: acc + v * 2, sequences=x, outputs_info=T.constant(0.0))
    assert a.owner.inputs[0].owner.op == b.owner.inputs[0].owner.op
    f = bptt.function([x], [a, b], mode=mode)
    assert len(_scan_nodes(f)) == 1
    r1, r2 = f(np.arange(3.0))
    np.testing.assert_allclose(r1, r2)


def test_truncate_gradient_must_be_positive():
    with pytest.raises(ValueError, match="truncate_gradient must be -1"):
        bptt.scan(lambda v: v, sequences=T.dvector(), truncate_gradient=0)
