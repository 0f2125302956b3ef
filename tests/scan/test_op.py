"""The Scan op on hand-built nodes: layout, mit_mot buffers, identity, mappings, shapes."""
import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.graph.fg import FunctionGraph
from bptt.scan import Scan, ScanArgs, ScanInfo

from .reference import mit_mot_reference, scan_reference


def _info(**kw):
    base = dict(n_seqs=0, mit_mot_in_slices=(), mit_mot_out_slices=(), mit_sot_in_slices=(),
                n_sit_sot=0, n_nit_sot=0, n_shared_outs=0, n_non_seqs=0)
    base.update(kw)
    return ScanInfo(**base)


def _mixed_op():
    """seq x; mit_sot f (taps -2, -1): fibonacci; sit_sot h += x; nit_sot 2x; shared s += 1."""
    x_t, f2, f1, h, s, w = (T.dscalar(n) for n in ("x_t", "f2", "f1", "h", "s", "w"))
    info = _info(n_seqs=1, mit_sot_in_slices=((-2, -1),), n_sit_sot=1, n_nit_sot=1,
                 n_shared_outs=1, n_non_seqs=1, name="mixed")
    return Scan([x_t, f2, f1, h, s, w], [f2 + f1, h + x_t, w * x_t, s + 1], info)


def test_mixed_categories_follow_the_layout(mode):
    op = _mixed_op()
    x, n, f0, h0, s0, w, ln = (T.dvector("x"), T.lscalar("n"), T.dvector("f0"), T.dvector("h0"),
                               T.dscalar("s0"), T.dscalar("w"), T.lscalar("len"))
    outs = op(n, x, f0, h0, s0, ln, w)
    f = bptt.function([x, n, f0, h0, s0, ln, w], outs, mode=mode)
    xv = np.arange(1.0, 6.0)
    fib, hs, nit, s = f(xv, 4, [1.0, 1.0], [0.0], 10.0, 4, 2.0)
    np.testing.assert_array_equal(fib, [1, 1, 2, 3, 5, 8])          # 2 initial rows in front
    np.testing.assert_array_equal(hs, [0, 1, 3, 6, 10])             # 1 initial row in front
    np.testing.assert_array_equal(nit, 2 * xv[:4])
    assert s == 14.0
    # a nit_sot length below n_steps keeps the last rows, in time order
    _, _, nit, _ = f(xv, 5, [1.0, 1.0], [0.0], 0.0, 2, 2.0)
    np.testing.assert_array_equal(nit, 2 * xv[3:5])
    # only the first `depth` rows of an initial buffer are read
    fib, _, _, _ = f(xv, 3, [1.0, 1.0, 99.0], [0.0, 99.0], 0.0, 3, 1.0)
    np.testing.assert_array_equal(fib, [1, 1, 2, 3, 5])


def test_zero_steps_keep_row_shapes(mode):
    x_t, w = T.dvector("x_t"), T.dmatrix("w")
    info = _info(n_seqs=1, n_nit_sot=1, n_non_seqs=1)
    op = Scan([x_t, w], [T.dot(x_t, w)], info)
    x, wv, n = T.dmatrix("x"), T.dmatrix("wv"), T.lscalar("n")
    f = bptt.function([x, n, wv], op(n, x, n, wv), mode=mode)
    out = f(np.zeros((0, 3)), 0, np.ones((3, 5)))
    assert out.shape == (0, 5) and out.dtype == np.float64
    assert f(np.ones((2, 3)), 2, np.ones((3, 5))).shape == (2, 5)


def test_zero_step_row_shapes_read_no_step_value():
    """A nit_sot sized by a value the step computes (the gradient's SumTo reads
    ``tanh(..).shape``) gets that value's inferred size for n == 0: the shape program
    (compiled into the numba loop's n == 0 branch) computes no step value."""
    from bptt.graph.traversal import toposort
    from bptt.tensor.elemwise import Elemwise
    from bptt.tensor.shape import SumTo, shape_i

    x_t, w = T.dvector("x_t"), T.dmatrix("w")
    y = T.tanh(T.dot(x_t, w))
    op = Scan([x_t, w], [SumTo()(2 * T.dot(x_t, w), shape_i(y, 0))],
              _info(n_seqs=1, n_nit_sot=1, n_non_seqs=1))
    program = op._row_shape_program()
    nodes = toposort(program.outputs, blockers=program.inputs)
    assert not [n for n in nodes if isinstance(n.op, Elemwise) and n.outputs[0].ndim], nodes
    x, wv, n = T.dmatrix("x"), T.dmatrix("wv"), T.lscalar("n")
    f = bptt.function([x, n, wv], op(n, x, n, wv), mode="PY")
    assert f(np.zeros((0, 3)), 0, np.ones((3, 5))).shape == (0, 5)
    np.testing.assert_allclose(f(np.ones((2, 3)), 2, np.ones((3, 5))), np.full((2, 5), 6.0))


def test_zero_step_row_shapes_are_merged():
    """Two nit_sots sized by two slices of one step input: the shape program computes
    the slice length once (merged, canonicalized), not once per output."""
    from bptt.graph.traversal import toposort

    x_t = T.dvector("x_t")
    k = T.lscalar("k")
    op = Scan([x_t, k], [x_t[k:] * 2, x_t[k:] + 1], _info(n_seqs=1, n_nit_sot=2, n_non_seqs=1))
    program = op._row_shape_program()
    nodes = toposort(program.outputs, blockers=program.inputs)
    keys = [(n.op, tuple(n.inputs)) for n in nodes]
    assert len(set(keys)) == len(keys), nodes
    x, n = T.dmatrix("x"), T.lscalar("n")
    f = bptt.function([x, n, k], op(n, x, n, n, k), mode="PY")
    for got in f(np.zeros((0, 5)), 0, 2):
        assert got.shape == (0, 3)


def _mit_mot_op(in_taps, out_taps):
    """Each out-tap row becomes (its in-tap row, if read, else 0) + 0.5 * sum of in-tap rows."""
    ins = [T.dvector(f"m{k:+d}") for k in in_taps]
    w = T.dvector("w")
    total = ins[0]
    for v in ins[1:]:
        total = total + v
    outs = []
    for k in out_taps:
        prev = ins[in_taps.index(k)] if k in in_taps else 0.0
        outs.append(prev + 0.5 * total * w)
    info = _info(mit_mot_in_slices=(tuple(in_taps),), mit_mot_out_slices=(tuple(out_taps),),
                 n_non_seqs=1)
    return Scan(ins + [w], outs, info)


@pytest.mark.parametrize("in_taps, out_taps", [((0, 1), (1,)), ((-1, 0, 2), (0, 1)), ((1,), (0,))])
def test_mit_mot_matches_reference(mode, in_taps, out_taps):
    op = _mit_mot_op(list(in_taps), list(out_taps))
    buf, w, n = T.dmatrix("buf"), T.dvector("w"), T.lscalar("n")
    f = bptt.function([n, buf, w], op(n, buf, w), mode=mode)
    rng = np.random.default_rng(3)
    lo, hi = min(in_taps + out_taps), max(in_taps + out_taps)
    for steps in (0, 1, 4):
        bv = rng.normal(size=(steps + hi - lo + 1, 2))   # one spare row: left untouched
        wv = rng.normal(size=2)

        def step(*rows):
            total = sum(rows)
            return [(rows[in_taps.index(k)] if k in in_taps else 0.0) + 0.5 * total * wv
                    for k in out_taps]

        np.testing.assert_allclose(f(steps, bv, wv), mit_mot_reference(bv, list(in_taps),
                                                                       list(out_taps), step, steps))
    with pytest.raises(ValueError, match="rows along its first axis"):
        f(4, np.zeros((4 + hi - lo - 1, 2)), np.zeros(2))


def test_as_while_trims_and_counts_steps(mode):
    h, lim = T.dscalar("h"), T.dscalar("lim")
    info = _info(n_sit_sot=1, n_nit_sot=1, n_non_seqs=1, as_while=True)
    op = Scan([h, lim], [h * 2, h + 0.5, h * 2 > lim], info)
    n, h0, limit = T.lscalar("n"), T.dvector("h0"), T.dscalar("limit")
    outs = op(n, h0, n, limit)
    assert len(outs) == info.n_outer_outputs == 3 and outs[2].dtype == "int64"
    f = bptt.function([n, h0, limit], outs, mode=mode)
    states, nit, count = f(10, [1.0], 5.0)
    np.testing.assert_array_equal(states, [1, 2, 4, 8])
    np.testing.assert_array_equal(nit, [1.5, 2.5, 4.5])
    assert count == 3
    _, _, count = f(2, [1.0], 1e9)
    assert count == 2


def test_step_shape_mismatch_names_the_step():
    h = T.dvector("h")
    info = _info(n_sit_sot=1)
    op = Scan([h], [T.concatenate([h, h])[:2]], info, output_labels=["the state 'h'"])
    n, h0 = T.lscalar("n"), T.dmatrix("h0")
    f = bptt.function([n, h0], op(n, h0), mode="PY")
    assert f(3, np.ones((1, 2))).shape == (4, 2)
    with pytest.raises(ValueError, match=r"at step 0, the state 'h' has shape \(2,\)"):
        f(3, np.ones((1, 3)))


def test_equal_inner_graphs_give_equal_ops():
    a, b = _mixed_op(), _mixed_op()
    assert a == b and hash(a) == hash(b)
    x = T.dscalar()
    other = Scan([x], [x * 3], _info(n_sit_sot=1))
    assert other != Scan([x], [x * 2], _info(n_sit_sot=1))
    assert other == Scan([x], [x * 3], _info(n_sit_sot=1, name="renamed"))


def test_scan_args_round_trip():
    op = _mixed_op()
    ins = [T.lscalar("n"), T.dvector("x"), T.dvector("f0"), T.dvector("h0"), T.dscalar("s0"),
           T.lscalar("len"), T.dscalar("w")]
    node = op.make_node(*ins)
    args = ScanArgs.from_node(node)
    assert args.outer_inputs == node.inputs and args.outer_outputs == node.outputs
    assert args.inner_inputs == op.inner_inputs and args.inner_outputs == op.inner_outputs
    assert args.make_op() == op and args.info == op.info
    args.remove("nit_sot", 0)
    new = args.make_node()
    assert new.op.info.n_nit_sot == 0 and len(new.outputs) == len(node.outputs) - 1


def test_var_mappings_link_each_loop_variable():
    op = _mixed_op()
    m = op.var_mappings
    assert len(m) == 12
    # outer inputs: n_steps, x, f0, h0, s0, len, w; outer outputs: fib, h, nit, s
    assert m["outer_out_from_outer_inp"] == {0: -1, 1: -1, 2: 0, 3: 1, 4: 3, 5: 2, 6: -1}
    assert m["inner_inp_from_outer_inp"][2] == [1, 2]
    assert m["inner_out_from_inner_inp"][1] == [0] and m["inner_out_from_inner_inp"][5] == []
    assert m["outer_inp_from_inner_out"] == {0: 2, 1: 3, 2: 5, 3: 4}


def test_connection_pattern_follows_the_recurrence():
    a, b, c = T.dscalar("a"), T.dscalar("b"), T.dscalar("c")
    # sit_sot a' = b ; sit_sot b' = c (a non-sequence): c reaches b, then a.
    op = Scan([a, b, c], [b, c + 0], _info(n_sit_sot=2, n_non_seqs=1))
    node = op.make_node(T.lscalar(), T.dvector(), T.dvector(), T.dscalar())
    assert op.inner_connection_pattern() == [[False, False], [True, False], [False, True]]
    assert op.connection_pattern(node) == [[False, False], [True, False], [True, True],
                                           [True, True]]


def test_infer_shape_matches_the_run():
    op = _mixed_op()
    ins = [T.lscalar("n"), T.dvector("x"), T.dvector("f0"), T.dvector("h0"), T.dscalar("s0"),
           T.lscalar("len"), T.dscalar("w")]
    node = op.make_node(*ins)
    shapes = op.infer_shape(None, node, [tuple(T.shape(v)[d] for d in range(v.ndim))
                                         for v in ins])
    flat = [s for sh in shapes for s in sh]
    f = bptt.function(ins, [T.as_tensor_variable(s) for s in flat], mode="PY",
                      on_unused_input="ignore")
    vals = [5, np.arange(7.0), np.ones(3), np.zeros(1), 0.0, 3, 1.0]
    got = [int(v) for v in f(*vals)]
    assert got == [2 + 5, 1 + 5, 3]


def test_make_node_rejects_wrong_inputs():
    op = _mixed_op()
    with pytest.raises(ValueError, match="expected 7 outer inputs"):
        op.make_node(T.lscalar())
    with pytest.raises(TypeError, match="n_steps must be an integer scalar"):
        op.make_node(T.dscalar(), T.dvector(), T.dvector(), T.dvector(), T.dscalar(),
                     T.lscalar(), T.dscalar())
    with pytest.raises(TypeError, match="sequence 0"):
        op.make_node(T.lscalar(), T.dmatrix(), T.dvector(), T.dvector(), T.dscalar(),
                     T.lscalar(), T.dscalar())


def test_scan_node_survives_the_rewrite_pipeline(mode):
    x = T.dvector("x")
    out, _ = bptt.scan(lambda v, acc: acc + v * 1 + 0, sequences=x, outputs_info=T.constant(0.0))
    f = bptt.function([x], out, mode=mode)
    np.testing.assert_allclose(f(np.arange(4.0)), np.cumsum(np.arange(4.0)))
    FunctionGraph([x], [out])   # the scan graph is a valid FunctionGraph


def test_reference_itself():
    # a tiny self-check of the oracle: cumulative sum backwards with a tap -2 state
    out = scan_reference(lambda x, a, b: [a + b + x], [(np.arange(3.0), (0,))],
                         [(np.zeros(2), (-2, -1))], go_backwards=True)
    assert out[0].tolist() == [2.0, 3.0, 5.0]
