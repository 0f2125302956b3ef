"""bptt.compat.theano: Theano programs run by changing the import line.

One test per feature Theano code needs (issue 24's list): imports, names
Theano kept in odd places, Theano 1.0's numerics, config, graph copying,
function options, shapes, random streams, gradients, errors and the view of
a compiled graph. PY mode unless the feature is about compiled code.
"""
import copy
import sys

import numpy as np
import pytest

import bptt
import bptt.compat.theano as theano
from bptt.compat.theano import tensor as T


@pytest.fixture
def installed():
    """`install()` with every ``theano`` module restored afterwards."""
    saved = {k: sys.modules.pop(k) for k in list(sys.modules) if k.split(".")[0] == "theano"}
    theano.install()
    yield
    for k in [k for k in sys.modules if k.split(".")[0] == "theano"]:
        del sys.modules[k]
    sys.modules.update(saved)


def test_submodules_import_under_install(installed):
    import theano as th
    import theano.gradient
    import theano.ifelse
    import theano.printing
    import theano.sandbox.rng_mrg
    import theano.tensor.nnet
    from theano.sandbox.rng_mrg import MRG_RandomStreams
    from theano.tensor.nnet import sigmoid
    from theano.tensor.shared_randomstreams import RandomStreams

    assert th is theano and th.tensor is T and theano.tensor.nnet is T.nnet
    assert sigmoid is bptt.tensor.sigmoid and RandomStreams is bptt.RandomStreams
    assert issubclass(MRG_RandomStreams, bptt.RandomStreams)
    # The alias is the module itself: its spec stays bptt's.
    assert sys.modules["theano.tensor.nnet"].__spec__.name == "bptt.compat.theano.tensor.nnet"


def test_a_missing_submodule_is_an_import_error(installed):
    with pytest.raises(ModuleNotFoundError):
        import theano.sparse  # noqa: F401


def test_theano_kept_grad_and_asarray_in_its_namespaces():
    x = T.dscalar("x")
    assert theano.function([x], T.grad(x ** 3, x), mode="PY")(2.0) == 12.0
    a = theano._asarray([1, 2], dtype="float32")
    assert a.dtype == np.float32 and a.tolist() == [1.0, 2.0]


def test_softmax_of_a_vector_is_a_row_as_in_theano():
    v, m = T.dvector("v"), T.dmatrix("m")
    s = T.nnet.softmax(v)
    assert s.type.shape == (1, None)
    out = theano.function([v], s, mode="PY")([1.0, 2.0, 3.0])
    e = np.exp([1.0, 2.0, 3.0])
    np.testing.assert_allclose(out, (e / e.sum())[None, :])
    rows = theano.function([m], T.nnet.softmax(m), mode="PY")(np.eye(2))
    np.testing.assert_allclose(rows.sum(axis=1), [1.0, 1.0])


def test_relu_of_an_array_is_an_array_as_in_theano():
    a = np.array([[-1.5, 0.0], [2.0, -0.25]])
    np.testing.assert_array_equal(T.nnet.relu(a), np.maximum(a, 0))
    np.testing.assert_array_equal(T.nnet.relu(a, 0.1), np.where(a > 0, a, 0.1 * a))
    x = T.dmatrix("x")
    assert isinstance(T.nnet.relu(x), bptt.graph.basic.Variable)
    alpha = T.dscalar("alpha")      # Lasagne's ParametricRectifierLayer on an array input
    np.testing.assert_array_equal(theano.function([alpha], T.nnet.relu(a, alpha))(0.1),
                                  np.where(a > 0, a, 0.1 * a))
    np.testing.assert_array_equal(theano.function([x], T.nnet.relu(x, 0.1), mode="PY")(a),
                                  np.where(a > 0, a, 0.1 * a))


def test_xlogx_and_xlogy0_are_zero_where_x_is(mode):
    x, y = T.dvector("x"), T.dvector("y")
    f = theano.function([x, y], [T.xlogx.xlogx(x), T.xlogx.xlogy0(x, y)], mode=mode)
    a, b = f([0.0, 0.5, 2.0], [0.0, 0.25, 3.0])
    np.testing.assert_allclose(a, [0.0, 0.5 * np.log(0.5), 2 * np.log(2.0)])
    np.testing.assert_allclose(b, [0.0, 0.5 * np.log(0.25), 2 * np.log(3.0)])


def test_config_has_the_attributes_theano_code_reads(monkeypatch):
    c = theano.config
    assert c.floatX == bptt.config.floatX and c.device == "cpu" and c.mode == "FAST_RUN"
    assert c.warn.subtensor_merge_bug is False
    c.warn.subtensor_merge_bug = True    # rnnrbm sets it
    assert c.compute_test_value == "off"
    with pytest.raises(ValueError, match="compute_test_value"):
        c.compute_test_value = "sometimes"
    with pytest.raises(AttributeError, match="no option"):
        c.no_such_option  # noqa: B018
    monkeypatch.setattr(bptt.config, "mode", bptt.config.mode)
    with theano.change_flags(mode="PY", on_opt_error="raise"):
        assert bptt.config.mode == "PY" and c.on_opt_error == "raise"
    assert c.on_opt_error == "warn" and c.mode == "FAST_RUN"


def test_clone_replaces_variables_in_a_copy():
    x, y = T.dscalar("x"), T.dscalar("y")
    z = x * 2 + 1
    z2 = theano.clone(z, replace={x: y})
    f = theano.function([x, y], [z, z2], mode="PY")
    assert f(1.0, 10.0) == [3.0, 21.0]


def test_no_default_updates_keeps_random_draws_fixed():
    srng = T.shared_randomstreams.RandomStreams(3)
    u = srng.uniform(size=(2,))
    fixed = theano.function([], u, no_default_updates=True, mode="PY")
    np.testing.assert_array_equal(fixed(), fixed())
    moving = theano.function([], u, mode="PY")
    assert not np.array_equal(moving(), moving())
    listed = bptt.function([], u, no_default_updates=[srng.state_updates[0][0]], mode="PY")
    np.testing.assert_array_equal(listed(), listed())


def test_tag_test_value_is_an_attribute():
    x = T.dvector("x")
    x.tag.test_value = np.ones(3)
    assert x.tag.test_value.shape == (3,) and x.tag["test_value"] is x.tag.test_value
    with pytest.raises(AttributeError):
        x.tag.other  # noqa: B018


def test_specify_shape_gives_static_sizes_and_checks_them(mode):
    x = T.dmatrix("x")
    y = T.specify_shape(x, (2, None))
    assert y.type.shape == (2, None)
    f = theano.function([x], y.sum(), mode=mode)
    assert f(np.ones((2, 3))) == 6.0
    with pytest.raises(ValueError, match="specify_shape"):
        f(np.ones((3, 3)))


def test_in_gives_defaults_and_keyword_names():
    x, y = T.dscalar("x"), T.dscalar("y")
    f = theano.function([x, theano.In(y, value=10.0, name="offset")], x + y, mode="PY")
    assert f(1.0) == 11.0 and f(1.0, 2.0) == 3.0 and f(1.0, offset=5.0) == 6.0


def test_multinomial_draws_one_hot_counts():
    srng = bptt.RandomStreams(0)
    p = T.dmatrix("p")
    one = srng.multinomial(n=1, pvals=p)
    many = srng.multinomial(size=(4000,), n=3, pvals=[0.2, 0.3, 0.5], dtype="float64")
    f = theano.function([p], [one, many.mean(axis=0)], mode="PY")
    a, freq = f(np.array([[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]]))
    assert a.dtype == np.int64 and a.shape == (3, 2)
    np.testing.assert_array_equal(a[:2], [[0, 1], [1, 0]])
    assert a[2].sum() == 1
    np.testing.assert_allclose(freq, [0.6, 0.9, 1.5], atol=0.08)


def test_multinomial_draws_alike_in_both_modes_and_has_no_gradient():
    p = T.dmatrix("p")
    srng = bptt.RandomStreams(5)
    sample = srng.multinomial(n=4, pvals=p, dtype="float64")
    rng = srng.state_updates[0][0]
    start = rng.get_value()
    values = []
    for m in ("PY", "NUMBA"):
        rng.set_value(start)    # each call advances the generator
        values.append(theano.function([p], sample, mode=m)(np.array([[0.2, 0.8], [3.0, 1.0]])))
    np.testing.assert_array_equal(values[0], values[1])
    np.testing.assert_array_equal(values[0].sum(axis=1), [4.0, 4.0])
    with pytest.raises(bptt.NullTypeGradError):
        T.grad((sample * p).sum(), p)


def test_mrg_random_streams_take_theano_mrg_arguments():
    srng = theano.sandbox.rng_mrg.MRG_RandomStreams(seed=1)
    p = T.dvector("p")
    b = srng.binomial(size=p.shape, n=1, p=p, dtype="float64")
    u = srng.uniform((3,), -1, 1, ndim=1)
    out, uu = theano.function([p], [b, u], mode="PY")([0.0, 1.0])
    np.testing.assert_array_equal(out, [0.0, 1.0])
    assert uu.shape == (3,) and (np.abs(uu) <= 1).all()


def test_disconnected_grad_is_the_identity_with_no_gradient(mode):
    x = T.dvector("x")
    y = (theano.gradient.disconnected_grad(x) * x).sum()
    f = theano.function([x], [y, T.grad(y, x)], mode=mode)
    value, g = f([1.0, 3.0])
    assert value == 10.0
    np.testing.assert_array_equal(g, [1.0, 3.0])   # d/dx of c * x with c = x held constant


def test_a_symbolic_shape_unpacks():
    X = T.dmatrix("X")
    n, d = X.shape
    assert theano.function([X], n * 10 + d, mode="PY")(np.ones((3, 4))) == 34
    with pytest.raises(TypeError, match="static length"):
        iter(T.dvector("v"))
    with pytest.raises(TypeError, match="cannot be iterated"):
        iter(T.tensor("float64", (2, 3)))


def test_a_step_may_return_empty_updates():
    h, _ = theano.scan(lambda h: ([h * 2], ()), outputs_info=[T.ones(())], n_steps=3)
    np.testing.assert_array_equal(theano.function([], h, mode="PY")(), [2.0, 4.0, 8.0])
    h, _ = theano.scan(lambda h: ([h * 2], (), theano.scan_module.until(h > 1)),
                       outputs_info=[T.ones(())], n_steps=5)
    np.testing.assert_array_equal(theano.function([], h, mode="PY")(), [2.0, 4.0])


def test_rop_is_in_tensor():
    x, v = T.dvector("x"), T.dvector("v")
    jv = T.Rop(T.sin(x) * 2, x, v)
    out = theano.function([x, v], jv, mode="PY")([0.0, 1.0], [1.0, 2.0])
    np.testing.assert_allclose(out, 2 * np.cos([0.0, 1.0]) * [1.0, 2.0])


def test_row_and_column_constructors_are_broadcastable():
    assert T.dcol("c").type.shape == (None, 1) and T.dcol().dtype == "float64"
    assert T.frow().type.shape == (1, None) and T.frow().dtype == "float32"
    assert T.icol().dtype == "int32" and T.row().dtype == bptt.config.floatX
    x = T.dmatrix("x")
    f = theano.function([x, c := T.dcol("c")], x + c, mode="PY")
    np.testing.assert_array_equal(f(np.zeros((2, 3)), [[1.0], [2.0]]), [[1.0] * 3, [2.0] * 3])


def test_strict_scan_with_a_free_variable_raises_missing_input():
    w = theano.shared(np.eye(2))
    with pytest.raises(theano.gof.fg.MissingInputError, match="strict=True") as info:
        theano.scan(lambda x: T.dot(x, w), outputs_info=[T.dvector("x0")], n_steps=3,
                    strict=True)
    assert isinstance(info.value, ValueError)


def test_a_variable_read_only_by_a_scan_update_is_passed_into_the_loop():
    """Theano's TestMissingInputError: Theano raised MissingInputError for `inc`, read only
    by the update; bptt passes it into the loop like any free variable of the step."""
    c, inc = theano.shared(0.0), T.dscalar("inc")
    _, updates = theano.scan(lambda: (T.zeros(()), {c: c + inc}), n_steps=20)
    f = theano.function(inputs=[inc], outputs=[], updates=updates, mode="PY")
    f(1.5)
    assert c.get_value() == 30.0


def test_an_initial_state_broadcastable_where_the_step_is_not_has_a_gradient():
    """Theano's TestInconsistentBroadcast: Theano's gradient raised TypeError for an initial
    state whose first axis is broadcastable where the step's output is not; bptt builds the
    gradient, and the sizes meet at run time (a step returning other rows raises)."""
    x = T.tensor3("x")
    y, _ = theano.scan(lambda x_t, prev: x_t + prev, sequences=x,
                       outputs_info=[dict(initial=T.constant(np.zeros((1, 4))))])
    g = theano.function([x], T.grad((y ** 2).sum(), x), mode="PY")
    v = np.random.default_rng(0).normal(size=(3, 1, 4))
    ys = np.cumsum(v, axis=0)                       # y_t = x_0 + ... + x_t
    want = np.cumsum((2 * ys)[::-1], axis=0)[::-1]   # d/dx_s sum_t y_t**2 = sum_{t>=s} 2 y_t
    np.testing.assert_allclose(g(v), want, rtol=1e-12)
    with pytest.raises(ValueError, match="must return the same shape at every step"):
        g(np.zeros((3, 2, 4)))

def test_grad_of_an_integer_cost_is_zero():
    x = T.dvector("x")
    g = T.grad(T.argmax(x), x)
    np.testing.assert_array_equal(theano.function([x], g, mode="PY")([1.0, 3.0]), [0.0, 0.0])
    with pytest.raises(bptt.DisconnectedInputError):   # as for a float cost
        T.grad(T.argmax(x), T.dvector("unrelated"))
    with pytest.warns(UserWarning, match="'unrelated'") as record:
        T.grad(T.argmax(x), T.dvector("unrelated"), disconnected_inputs="warn")
    assert record[0].filename == __file__   # the warning names the caller's line


def test_a_scan_state_no_step_reads_is_a_disconnected_input_as_in_theano():
    """Theano's connection pattern of Scan: the cost reaches x0, not z0 (a ValueError)."""
    x0, z0 = T.dvector("x0"), T.dvector("z0")
    [x, z], _ = theano.scan(lambda a, c: (a ** 2, a + 1), outputs_info=[x0, z0], n_steps=4)
    T.grad((x + z).sum(), x0)
    with pytest.raises(ValueError, match="'z0'"):
        T.grad((x + z).sum(), z0)


def test_grad_through_a_scan_updated_shared_variable():
    """The gradient of a shared variable's final value with respect to its initial one."""
    from collections import OrderedDict

    s = theano.shared(np.float32(3.0))
    _, updates = theano.scan(lambda: ([], OrderedDict([(s, s * np.float32(2.0))])), n_steps=3)
    g = T.grad(list(updates.values())[0], s)
    assert theano.function([], g, mode="PY")() == 8.0


def test_excluding_a_theano_scan_optimization_excludes_bptt_s_pass():
    """Theano's test_merge excludes the sequence push-out; so does bptt's mode: the
    product of each row stays in the step instead of leaving the loop, and a map
    stays a loop (Theano's PushOutSeqScan also replaces a loop it empties)."""
    from bptt.compat.theano.compile.mode import get_mode
    from bptt.scan import Scan
    from bptt.tensor.math import Dot

    X, W = T.dmatrix("X"), T.dmatrix("W")
    hs, _ = theano.scan(lambda s, h: T.tanh(T.dot(s, W) + h), sequences=[X],
                        outputs_info=T.zeros_like(X[0]))
    ys, _ = theano.scan(lambda s: s + 1, sequences=[X])
    plain = get_mode("FAST_COMPILE")
    kept = plain.excluding("scanOp_pushout_seqs_ops", "a_tag_bptt_has_no_pass_for")
    assert kept.excluded_passes == ("scan_pushout_rows", "scan_state_rows", "scan_pushout_seqs")
    assert plain.excluded_passes == ()
    x, w = np.arange(6.0).reshape(3, 2) / 10, np.eye(2)
    want = [np.tanh(x[0])]
    for row in x[1:]:
        want.append(np.tanh(row + want[-1]))
    for mode, dots_in_step, loop_outputs in ((plain, 0, 1), (kept, 1, 2)):
        f = theano.function([X, W], [hs, ys], mode=mode)
        (loop,) = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, Scan)]
        assert len(loop.outputs) == loop_outputs    # the map is the loop's twin, or gone
        step = loop.op.fn.maker.fgraph.toposort()
        assert sum(isinstance(n.op, Dot) for n in step) == dots_in_step
        got_h, got_y = f(x, w)
        np.testing.assert_allclose(got_h, want)
        np.testing.assert_allclose(got_y, x + 1)


def test_maker_fgraph_is_a_read_only_view_of_the_compiled_graph():
    x = T.dvector("x")
    out, _ = theano.scan(lambda v, h: h + v * 2, sequences=x, outputs_info=T.zeros(()))
    f = theano.function([x], out, mode="PY")
    view = f.maker.fgraph
    nodes = view.toposort()
    scans = [n for n in nodes if isinstance(n.op, theano.scan_module.scan_op.Scan)]
    assert len(scans) == 1 and set(nodes) == view.apply_nodes
    assert view.inputs[0].type == x.type and len(view.outputs) == 1
    nodes.clear()
    view.inputs.clear()
    assert f.maker.fgraph.toposort() and f.maker.fgraph.inputs     # copies were cleared
    with pytest.raises(AttributeError):
        view.apply_nodes.add(None)
    inner = scans[0].op.fn.maker.fgraph
    assert [n.op for n in inner.toposort()] and len(inner.outputs) == 1
    np.testing.assert_array_equal(f([1.0, 2.0]), [2.0, 6.0])


def test_function_takes_theano_argument_order_and_modes():
    s = theano.shared(0.0)
    x = T.dscalar("x")
    f = theano.function([x], x + s, theano.compile.mode.get_mode("FAST_COMPILE"), {s: s + x})
    assert f.mode == "PY" and f(2.0) == 2.0 and s.get_value() == 2.0
    g = theano.function([x], x, mode=theano.Mode(linker="py"))
    assert g.mode == "PY"


def test_ifelse_picks_a_branch():
    c, a, b = T.dscalar("c"), T.dvector("a"), T.dvector("b")
    f = theano.function([c, a, b], theano.ifelse.ifelse(c > 0, a, b), mode="PY")
    np.testing.assert_array_equal(f(1.0, [1.0], [2.0]), [1.0])
    np.testing.assert_array_equal(f(-1.0, [1.0], [2.0]), [2.0])


def test_a_theano_function_deep_copies_with_its_model():
    # rnnslu keeps ``best_rnn = copy.deepcopy(rnn)``: the copy's functions use its own
    # parameters.
    class Model:
        def __init__(self):
            self.w = theano.shared(np.ones(2), name="w")
            x = T.dvector("x")
            self.train = theano.function([x], (self.w * x).sum(),
                                         updates={self.w: self.w + x}, mode="PY")

    model = Model()
    best = copy.deepcopy(model)
    model.train([1.0, 1.0])
    np.testing.assert_array_equal(best.w.get_value(), [1.0, 1.0])
    assert best.train([1.0, 2.0]) == 3.0
    np.testing.assert_array_equal(best.w.get_value(), [2.0, 3.0])
    assert hasattr(best.train, "maker")


def test_verify_grad_takes_theano_arguments():
    rng = np.random.RandomState(0)
    T.verify_grad(lambda a: T.tanh(a).sum(), [rng.rand(3)], 2, rng, None, None, mode="PY")
    assert T.verify_grad.E_grad is bptt.GradientError
    with pytest.raises(T.verify_grad.E_grad):
        T.verify_grad(lambda a: _wrong_gradient(a), [rng.rand(3)], rng=rng, mode="PY")


def _wrong_gradient(a):
    # a * zero_grad(a): the value of a ** 2, the gradient of a * c: half the true one.
    return (a * theano.gradient.zero_grad(a)).sum()


def test_plural_row_and_column_constructors():
    r, s = T.drows("r", "s")
    assert s.name == "s" and s.type.shape == (1, None) and T.fcols(1)[0].type.dtype == "float32"


def test_pp_prints_the_expression():
    from bptt.compat.theano import pp

    x = T.dscalar("x")
    assert pp(T.tanh(x * 2)) == theano.printing.pprint(T.tanh(x * 2)) == "tanh((x * 2.0))"


def test_function_copy_swaps_shared_variables_and_deletes_updates(mode):
    # the tutorial's accumulator (doc/tutorial/examples.txt, "Copying functions")
    state, new_state = theano.shared(0), theano.shared(0)
    inc = T.iscalar("inc")
    acc = theano.function([inc], state, updates=[(state, state + inc)], mode=mode)
    acc(10)
    swapped = acc.copy(swap={state: new_state})
    assert swapped(100) == 0 and new_state.get_value() == 100 and state.get_value() == 10
    frozen = acc.copy(delete_updates=True)
    assert frozen(9000) == 10 and state.get_value() == 10
    assert acc(1) == 10 and state.get_value() == 11
    with pytest.raises(TypeError, match="another type"):
        acc.copy(swap={state: theano.shared(0.5)})
