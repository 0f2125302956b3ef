"""Errors a user can make with scan: each names the variable and the scan, and says the fix."""
import numpy as np
import pytest

import bptt
import bptt.tensor as T


def _fails(exc, match, **kw):
    with pytest.raises(exc, match=match):
        bptt.scan(**kw)


def test_downcast_from_step_output_to_initial_state():
    x0 = T.bscalar("x0")
    with pytest.raises(TypeError) as info:
        bptt.scan(lambda s, a: a + s, sequences=T.lvector("s"), outputs_info=x0, name="tri")
    msg = str(info.value)
    for part in ("scan 'tri'", "'x0'", "int64", "int8", "downcast", "astype('int64')"):
        assert part in msg


def test_initial_state_ndim_and_shape():
    _fails(ValueError, r"'h0'.*1-d.*but its state is 2-d",
           fn=lambda h: h.sum(axis=0), outputs_info=T.dmatrix("h0"), n_steps=3)
    _fails(ValueError, r"static shape \(3,\).*rows of shape \(2,\)",
           fn=lambda h: T.zeros((3,)), outputs_info=T.zeros((2,)), n_steps=3)
    _fails(ValueError, r"taps \[-3, -1\] need 3 initial rows.*has 2",
           fn=lambda a, b: a + b, n_steps=3,
           outputs_info=dict(initial=T.zeros((2, 4)), taps=[-3, -1]))


def test_mit_sot_initial_rows_checked_at_run_time():
    x0 = T.dmatrix("x0")
    out, _ = bptt.scan(lambda a, b: a + b, outputs_info=dict(initial=x0, taps=[-3, -1]),
                       n_steps=2)
    f = bptt.function([x0], out, mode="PY")
    with pytest.raises(ValueError, match=r"initial state 'x0'.*has 2 rows.*taps need 3"):
        f(np.zeros((2, 1)))


def test_wrong_number_of_outputs():
    _fails(ValueError, r"returned 1 output\(s\), but outputs_info describes 2",
           fn=lambda a, b: a + b, outputs_info=[T.constant(0.0), T.constant(1.0)], n_steps=2)


def test_until_must_come_last():
    _fails(ValueError, "until must come last",
           fn=lambda a: (bptt.until(a > 3), a + 1), outputs_info=T.constant(0.0), n_steps=5)
    with pytest.raises(TypeError, match="condition must be a scalar"):
        bptt.until(T.dvector())


def test_taps_without_initial_state():
    _fails(ValueError, r"taps \[-1\] but gives no initial state",
           fn=lambda a: a, outputs_info=dict(taps=[-1]), n_steps=2)


@pytest.mark.parametrize("where, entry, key, allowed", [
    ("outputs_info", dict(initail=T.dvector("h0")), "initail", "'initial', 'taps'"),
    ("outputs_info", dict(initial=T.dvector("h0"), tap=[-1]), "tap", "'initial', 'taps'"),
    ("outputs_info", dict(initial=T.dvector("h0"), return_steps=2), "return_steps",
     "'initial', 'taps'"),
    ("sequences", dict(input=T.dmatrix("u"), tapz=[0]), "tapz", "'input', 'taps'"),
])
def test_unknown_dict_key(where, entry, key, allowed):
    """A misspelt key is refused when the scan is built, not ignored."""
    kw = dict(n_steps=3) if where == "outputs_info" else {}
    with pytest.raises(ValueError) as info:
        bptt.scan(lambda *a: a[0] * 2, name="rnn", **{where: [entry]}, **kw)
    msg = str(info.value)
    for part in ("scan 'rnn'", f"{where}[0]", repr(key), allowed):
        assert part in msg


@pytest.mark.parametrize("taps, match", [([-1, -1], "repeat a tap"), ([0], "tap 0"),
                                         ([-1, 2], "future steps")])
def test_bad_output_taps(taps, match):
    _fails(ValueError, match, fn=lambda *a: a[0], n_steps=2,
           outputs_info=dict(initial=T.dmatrix("x0"), taps=taps))


@pytest.mark.parametrize("tap", [-1.5, 0.5, True, T.iscalar("k")])
@pytest.mark.parametrize("where", ["sequences", "outputs_info"])
def test_a_tap_that_is_not_an_integer_is_refused(where, tap):
    """int() would truncate -1.5 to -1 (and read True as 1): a silently different loop."""
    entry = (dict(input=T.dvector("u"), taps=[tap]) if where == "sequences"
             else dict(initial=T.dvector("x0"), taps=[-2, tap]))
    with pytest.raises(TypeError) as info:
        bptt.scan(lambda *a: a[0] * 2, name="rnn", n_steps=2, **{where: [entry]})
    for part in ("scan 'rnn'", f"{where}[0]", f"tap {tap!r}", "not an integer"):
        assert part in str(info.value)


def test_empty_sequence_taps_are_refused():
    """taps=[] would pass no slice, yet the sequence still bounds the steps: refused."""
    _fails(ValueError, r"sequences\[0\]: taps=\[\] gives the step function no slice.*taps=\[0\]",
           fn=lambda *a: T.constant(1.0), sequences=dict(input=T.dvector("u"), taps=[]))


def test_numpy_integer_taps_are_accepted():
    u = T.dvector("u")
    out, _ = bptt.scan(lambda a, b: a - b, sequences=dict(input=u, taps=np.array([2, 0])))
    assert bptt.function([u], out, mode="PY")(np.arange(5.0) ** 2).tolist() == [4, 8, 12]


def test_updates_between_outputs():
    s = bptt.shared(0.0)
    _fails(ValueError, "updates in the middle",
           fn=lambda v: (v, {s: s + 1}, v * 2), sequences=T.dvector(),
           outputs_info=[None, None])


def test_update_key_must_be_shared():
    x = T.dscalar("x")
    _fails(TypeError, "'x'.*not a shared variable", fn=lambda: {x: x + 1}, n_steps=2)


def test_update_dtype_must_fit():
    a = bptt.shared(1, name="a")
    _fails(TypeError, r"update of 'a' has dtype float64.*astype\('int64'\)",
           fn=lambda: {a: a + 0.5}, n_steps=2)


def test_strict_names_the_missing_variable():
    w = T.dvector("w")
    _fails(ValueError, r"strict=True.*uses 'w'.*non_sequences",
           fn=lambda v: v * w, sequences=T.dvector("x"), strict=True)
    out, _ = bptt.scan(lambda v, w: v * w, sequences=T.dvector("x"), non_sequences=w,
                       strict=True)   # passing it is enough
    assert out.ndim == 2


def test_missing_n_steps():
    _fails(ValueError, "n_steps is required", fn=lambda a: a, outputs_info=T.constant(0.0))


def test_bad_n_steps_type():
    _fails(TypeError, "integer", fn=lambda a: a, outputs_info=T.constant(0.0), n_steps=2.5)
    _fails(TypeError, "integer scalar", fn=lambda a: a, outputs_info=T.constant(0.0),
           n_steps=T.dscalar())


def test_non_tensor_output():
    _fails(TypeError, "must return tensors", fn=lambda a: "nope", sequences=T.dvector(),
           outputs_info=[None])


def test_scalar_sequence():
    _fails(TypeError, r"sequences\[0\].*is a scalar", fn=lambda a: a, sequences=T.dscalar("s"))


@pytest.mark.parametrize("n", [None, 3, "symbolic"])
def test_sequence_too_short_is_a_call_time_error(mode, n):
    u = T.dvector("u")
    k = T.lscalar("k")
    out, _ = bptt.scan(lambda a, b: a + b, sequences=dict(input=u, taps=[-2, 0]),
                       n_steps=k if n == "symbolic" else n, name="short")
    f = bptt.function([u, k] if n == "symbolic" else [u], out, mode=mode)
    args = [3] if n == "symbolic" else []
    assert len(f(np.arange(5.0), *args)) == 3
    rows = 1 if n is None else 4
    with pytest.raises(ValueError) as info:
        f(np.arange(float(rows)), *args)
    msg = str(info.value)
    for part in ("scan 'short'", "'u'", "taps [-2, 0]", f"has {rows} rows"):
        assert part in msg
    if n is None:
        assert "0 steps with these taps need 2" in msg
        assert len(f(np.arange(2.0))) == 0     # exactly the taps' span: zero steps


@pytest.mark.parametrize("wrt", ["u", "r"])
@pytest.mark.parametrize("taps", [[0], [-2, 0]])
def test_gradient_alone_names_the_users_too_short_sequence(mode, wrt, taps):
    # Only the gradient is asked for. With one tap the backward loop alone reads the rows
    # cut from the forward's sequence: its message names the user's sequence, not
    # "sequence 0". With two the forward loop runs and checks first.
    u, r, k = T.dmatrix("u"), T.dscalar("r"), T.lscalar("k")
    s, _ = bptt.scan(lambda *a: a[-1] + a[-2] * r + a[0], sequences=dict(input=u, taps=taps),
                     outputs_info=T.zeros((3,)), n_steps=k, name="fwd")
    f = bptt.function([u, r, k], bptt.grad(s.sum(), {"u": u, "r": r}[wrt]), mode=mode)
    assert np.shape(f(np.ones((5, 3)), 2.0, 3)) == {"u": (5, 3), "r": ()}[wrt]
    with pytest.raises(ValueError) as info:
        f(np.ones((5, 3)), 2.0, 6)
    msg = str(info.value)
    scan = "scan 'grad of fwd'" if taps == [0] else "scan 'fwd'"
    for part in (scan, f"sequence 'u' (taps {taps})", "pass a longer sequence"):
        assert part in msg


@pytest.mark.parametrize("taps, backwards", [([1], False), ([-1], True)])
def test_a_lone_tap_checks_a_sequence_whose_name_holds_braces(mode, taps, backwards):
    """The check of a sequence no slice shows (a lone future tap forwards, a lone past tap
    backwards) builds a str.format template from the names: their braces are text."""
    u, W = T.dvector("u{t}"), T.dmatrix("W")
    out, _ = bptt.scan(lambda a: a * 2, sequences=dict(input=u, taps=taps),
                       go_backwards=backwards, name="rnn{0}")
    f = bptt.function([u], out, mode=mode)
    assert f(np.arange(3.0)).tolist() == ([2, 4] if not backwards else [2, 0])
    assert len(f(np.arange(1.0))) == 0
    with pytest.raises(ValueError) as info:
        f(np.arange(0.0))
    for part in ("scan 'rnn{0}'", "sequence 'u{t}'", "has 0 rows, but 0 steps"):
        assert part in str(info.value)
    unnamed, _ = bptt.scan(lambda a: a, sequences=dict(input=T.dot(W, W), taps=taps),
                           go_backwards=backwards)   # its label: output 0 of Dot{...}
    row = [0, 1] if not backwards else [1, 0]     # forwards tap 1 reads row 1, backwards -1 row 0
    assert bptt.function([W], unnamed, mode=mode)(np.eye(2)).tolist() == [row]


def test_run_time_shape_change_names_the_step():
    x = T.dvector("x")
    out, _ = bptt.scan(lambda i, h: h[: i + 1] + 1, sequences=T.arange(3),
                       outputs_info=x, name="grow")
    f = bptt.function([x], out, mode="PY")
    with pytest.raises(ValueError, match=r"scan 'grow': at step 0, output 0.*'x'.*shape \(1,\)"):
        f(np.zeros(2))


@pytest.mark.parametrize("init", ["constant", "input"])
def test_rows_computed_outside_the_loop_keep_the_row_shape_check(mode, init):
    # A loop whose state's new row is computed row-wise leaves the loop as one array: its
    # row shape is still checked against the initial state's, with the loop's message
    # rather than NumPy's join error.
    v, w0 = T.dvector("v"), T.dvector("w0")
    h0 = T.as_tensor_variable(np.zeros(5)) if init == "constant" else w0
    out, _ = bptt.scan(lambda h, v: v, outputs_info=[h0], non_sequences=[v], n_steps=3,
                       name="copy")
    f = bptt.function([v, w0], out, mode=mode, on_unused_input="ignore")
    np.testing.assert_array_equal(f(np.ones(5), np.zeros(5)), np.ones((3, 5)))
    with pytest.raises(ValueError, match=r"scan 'copy': at step 0, output 0 .* has shape "
                                         r"\(6,\), but the rows it is stored in have shape \(5,\)"):
        f(np.ones(6), np.zeros(5))


def test_a_state_read_as_views_of_its_rows_keeps_the_row_shape_check(mode):
    # The state's rows join its initial row outside the loop: the join needs equal row
    # sizes, and that need must not fold the check that reports them with the loop's message.
    x, w0 = T.dmatrix("x"), T.dvector("w0")
    out, _ = bptt.scan(lambda x_t, h: (x_t, h.sum()), sequences=x, outputs_info=[w0, None],
                       name="copy")
    f = bptt.function([x, w0], out[1], mode=mode)
    np.testing.assert_array_equal(f(np.ones((3, 5)), np.zeros(5)), [0.0, 5.0, 5.0])
    with pytest.raises(ValueError, match=r"scan 'copy': at step 0, output 0 .* has shape "
                                         r"\(6,\), but the rows it is stored in have shape \(5,\)"):
        f(np.ones((3, 6)), np.zeros(5))


def test_shared_variable_keeps_its_value_when_a_call_fails():
    a = bptt.shared(0.0, name="a")
    u = T.dvector("u")
    out, updates = bptt.scan(lambda p, v: (v, {a: a + v}), sequences=dict(input=u, taps=[-1, 0]),
                             n_steps=3)
    f = bptt.function([u], out[0], updates=updates, mode="PY")
    with pytest.raises(ValueError):
        f(np.ones(3))
    assert a.get_value() == 0.0


def test_step_function_arity_lists_the_arguments():
    with pytest.raises(TypeError, match=r"passes 3 arguments: 'u'\[t-1\], 'u'\[t\], .*'w'"):
        bptt.scan(lambda a, b: a + b, sequences=dict(input=T.dvector("u"), taps=[-1, 0]),
                  non_sequences=T.dscalar("w"))


@pytest.mark.parametrize("n_steps", [1, -1])
def test_inlined_step_names_a_too_short_sequence(mode, n_steps):
    """With n_steps=+-1 the step is inlined (no loop); a sequence too short for its
    taps is still reported by name at run time, never as an indexing error."""
    x = T.dvector("x")
    out, _ = bptt.scan(lambda a, b: a - b, sequences=dict(input=x, taps=[0, 2]),
                       n_steps=n_steps, name="short")
    f = bptt.function([x], out, mode=mode)
    # Three rows allow one position, forwards or backwards: x[0] - x[2].
    np.testing.assert_allclose(f(np.array([1.0, 2.0, 5.0])), [-4.0])
    # Backwards, the step is the last position: x[1] - x[3].
    np.testing.assert_allclose(f(np.array([1.0, 2.0, 5.0, 9.0])), [-4.0 if n_steps == 1 else -7.0])
    with pytest.raises(ValueError, match=r"scan 'short': sequence 'x' \(taps \[0, 2\]\) has 2 "
                                         r"rows, but 1 step with these taps needs 3"):
        f(np.array([1.0, 2.0]))


def test_inlined_step_names_a_too_short_initial_state(mode):
    x0 = T.dvector("x0")
    out, _ = bptt.scan(lambda a, b: a - b, outputs_info=dict(initial=x0, taps=[-3, -1]),
                       n_steps=1, name="short")
    f = bptt.function([x0], out, mode=mode)
    np.testing.assert_allclose(f(np.array([1.0, 2.0, 5.0])), [-4.0])
    with pytest.raises(ValueError, match=r"scan 'short': the initial value of 'x0' \(mit_sot, "
                                         r"taps \[-3, -1\]\) has 2 rows along its first axis, "
                                         r"but its taps need 3"):
        f(np.array([1.0, 2.0]))


# -- run-time errors inside the step: the scan, the step and the expression -------------------
def _raised(exc_type, f, *args):
    with pytest.raises(exc_type) as info:
        f(*args)
    return str(info.value)


def test_step_shape_error_names_scan_step_and_variable(mode):
    x, h0, W, U = T.tensor3("x"), T.matrix("h0"), T.matrix("W"), T.matrix("U")
    hs, _ = bptt.scan(lambda x_t, h, W, U: T.tanh(T.dot(x_t, W) + T.dot(h, U)), sequences=x,
                      outputs_info=h0, non_sequences=[W, U], name="rnn")
    f = bptt.function([x, h0, W, U], hs, mode=mode)
    ok = f(np.ones((3, 1, 4)), np.zeros((1, 4)), np.eye(4), np.eye(4))
    assert ok.shape == (3, 1, 4)
    msg = _raised(ValueError, f, np.ones((3, 1, 4)), np.zeros((1, 4)), np.eye(4), np.ones((5, 4)))
    for part in ("scan 'rnn': at step 0", "(h0[t-1] dot U)", "not aligned",
                 "U of shape (5, 4)", "h0[t-1] of shape (1, 4)"):
        assert part in msg, (part, msg)


def test_step_error_names_a_later_step(mode):
    """The step number is the failing one; the expression reads the step's variables."""
    u, w = T.dvector("u"), T.dmatrix("w")

    k = T.lvector("k")

    def step(k, h, w):
        grown = T.ones((k,)) * h.sum()       # its size changes with k
        return T.dot(grown, w)

    hs, _ = bptt.scan(step, sequences=k, outputs_info=u, non_sequences=[w], name="grow")
    f = bptt.function([k, u, w], hs, mode=mode)
    msg = _raised(ValueError, f, np.array([2, 2, 3]), np.ones(2), np.eye(2))
    for part in ("scan 'grow': at step 2, ", "k[t+0]", "u[t-1]", "dot w)", "w of shape (2, 2)"):
        assert part in msg, (part, msg)


@pytest.mark.parametrize("bad", [7, -9])
def test_embedding_index_out_of_range_names_the_step(mode, bad):
    idx, E = T.lvector("idx"), T.dmatrix("E")
    es, _ = bptt.scan(lambda i, h, E: h + E[i], sequences=idx, outputs_info=T.zeros((3,)),
                      non_sequences=[E], name="embed")
    f = bptt.function([idx, E], es, mode=mode)
    table = np.arange(12.0).reshape(4, 3)
    np.testing.assert_allclose(f(np.array([0, -1, 2]), table)[-1], table[[0, 3, 2]].sum(0))
    msg = _raised(IndexError, f, np.array([0, 1, bad, 2]), table)
    for part in ("scan 'embed': at step 2, E[idx[t+0]] failed", f"index {bad}", "size 4",
                 "E of shape (4, 3)"):
        assert part in msg, (part, msg)


def test_nested_scan_error_names_both_scans(mode):
    x, W = T.tensor3("x"), T.dmatrix("W")

    def row(r, W):
        inner, _ = bptt.scan(lambda v, h, W: T.dot(h, W) + v, sequences=r,
                             outputs_info=T.zeros((2,)), non_sequences=[W], name="inner")
        return inner

    out, _ = bptt.scan(row, sequences=x, non_sequences=[W], name="outer")
    f = bptt.function([x, W], out, mode=mode)
    assert f(np.ones((2, 3, 2)), np.eye(2)).shape == (2, 3, 2)
    msg = _raised(ValueError, f, np.ones((2, 3, 2)), np.ones((3, 2)))
    assert msg.startswith("scan 'outer': at step 0, in scan 'inner': at step 0, "), msg
    assert "W of shape (3, 2)" in msg


def test_error_in_a_product_moved_out_of_the_loop_names_the_step_expression(mode):
    """``dot(x_t, W)`` is computed for all steps before the loop (scan_pushout_seqs): a W
    of the wrong number of rows still names the scan and the step's expression, not only
    'cannot reshape the array'."""
    x, h0, W = T.tensor3("x"), T.matrix("h0"), T.matrix("W")
    hs, _ = bptt.scan(lambda x_t, h, W: T.tanh(T.dot(x_t, W) + h), sequences=x,
                      outputs_info=h0, non_sequences=[W], name="rnn")
    f = bptt.function([x, h0, W], hs, mode=mode)
    assert f(np.ones((3, 1, 4)), np.zeros((1, 4)), np.eye(4)).shape == (3, 1, 4)
    msg = _raised(ValueError, f, np.ones((3, 1, 4)), np.zeros((1, 4)), np.ones((6, 4)))
    assert msg.startswith("scan 'rnn': (x[t+0] dot W) (computed for all steps before the "
                          "loop) failed: "), msg


def test_int32_least_n_steps_is_a_backward_count_too_long_for_the_sequence(mode):
    # -2**31 asks for 2**31 steps backwards: the error is the sequence's length, not a
    # refusal of negative n_steps (abs in int32 overflows to -2**31 itself).
    n, x = T.iscalar("n"), T.vector("x")
    out, _ = bptt.scan(lambda x_t: x_t * 2, sequences=[x], n_steps=n)
    f = bptt.function([n, x], out, mode=mode)
    np.testing.assert_array_equal(f(np.int32(-2), np.arange(4.0)), [6.0, 4.0])
    with pytest.raises(ValueError, match="2147483648") as info:
        f(np.int32(-2**31), np.arange(4.0))
    assert "must not be negative" not in str(info.value)
