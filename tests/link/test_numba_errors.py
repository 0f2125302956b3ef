"""Run-time errors raised in compiled code read exactly as in PY mode."""
import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.link.numba.errors import reformat, template


def _message(f, *args):
    with pytest.raises(ValueError) as info:
        f(*args)
    return str(info.value)


def _both(inputs, outputs, *args):
    return [_message(bptt.function(inputs, outputs, mode=m), *args) for m in ("PY", "NUMBA")]


def test_sequence_too_short_same_message():
    x, k = T.matrix("x"), T.iscalar("k")
    hs, _ = bptt.scan(lambda a: a * 2, sequences=x, n_steps=k, name="double")
    py, nb = _both([x, k], hs, np.ones((3, 2)), 5)
    assert py == nb
    assert "sequence 'x'" in py and "3 rows" in py and "5 steps" in py


def test_step_shape_mismatch_same_message():
    x0 = T.vector("x0")
    out, _ = bptt.scan(lambda v: T.concatenate([v, v])[:3], outputs_info=x0, n_steps=3,
                       name="grow")
    py, nb = _both([x0], out, np.ones(2))
    assert py == nb
    assert "at step 0" in py and "(3,)" in py and "(2,)" in py


def test_reformat_builds_message_and_keeps_type():
    err = reformat(IndexError("index {} out of {{bounds}} for size {}", 7, 3))
    assert type(err) is IndexError and str(err) == "index 7 out of {bounds} for size 3"
    plain = ValueError("no template", 3)
    assert reformat(plain) is plain
    assert template("Scan{a}") == "Scan{{a}}"


def test_broadcast_error_shows_the_operands_own_shapes():
    # The loop aligns a vector of 3 with a matrix as (-2, 3): the message must say (3,).
    x, m = T.vector("x"), T.matrix("m")
    s = T.tensor("float64", (None, 1))          # a dimension of static size 1 (-1)
    py, nb = _both([x, m, s], T.exp(x) * m + s, np.ones(3), np.ones((2, 4)), np.ones((2, 1)))
    assert py == nb   # PY mode says it as the compiled loop does (not NumPy's bare message)
    assert "could not be broadcast together with shapes (3,) (2,4) (2,1)" in nb
    assert "the last dimension has sizes 3 and 4" in nb and "reshape, slice or dimshuffle" in nb
    assert "-1" not in nb and "-2" not in nb


def test_py_mode_broadcast_error_names_the_op_and_its_inputs():
    x, m = T.tensor3("x"), T.matrix("m")
    f = bptt.function([x, m], T.tanh(x) + m, mode="PY")
    with pytest.raises(ValueError) as info:
        f(np.ones((2, 3, 4)), np.ones((5, 4)))
    assert str(info.value).startswith(
        "operands could not be broadcast together with shapes (2,3,4) (5,4): dimension -2 "
        "(counting from the right) has sizes 3 and 5")
    note = "\n".join(info.value.__notes__)
    assert "while computing" in note and "'m'" in note and "tanh" in note


def test_broadcast_message_names_the_dimension_that_differs():
    msg = str(reformat(ValueError("operands could not be broadcast together with shapes {}",
                                  ((-2, -2, 5), (2, 3, -1), (-2, 4, 5)))))
    assert "shapes (5,) (2,3,1) (4,5):" in msg
    assert "dimension -2 (counting from the right) has sizes 3 and 4" in msg


def test_error_inside_a_step_same_message():
    """An op failing inside a loop: the compiled call is restated as PY mode words it
    (the scan, the step, the expression and its inputs' shapes)."""
    idx, E = T.lvector("idx"), T.matrix("E")
    es, _ = bptt.scan(lambda i, E: E[i] * 2, sequences=idx, non_sequences=[E], name="embed")
    with pytest.raises(IndexError) as py:
        bptt.function([idx, E], es, mode="PY")(np.array([1, 5]), np.ones((3, 2)))
    with pytest.raises(IndexError) as nb:
        bptt.function([idx, E], es, mode="NUMBA")(np.array([1, 5]), np.ones((3, 2)))
    assert str(py.value) == str(nb.value)
    assert str(nb.value).startswith("scan 'embed': at step 1, ")


def test_wording_a_step_error_is_time_bounded(monkeypatch):
    """Past its time budget the re-run gives up: the compiled code's error, with a note."""
    from bptt.link.numba.linker import _Diagnosis

    monkeypatch.setattr(_Diagnosis, "BUDGET", 0.0)
    idx, E = T.lvector("idx"), T.matrix("E")
    es, _ = bptt.scan(lambda i, E: E[i] * 2, sequences=idx, non_sequences=[E], name="embed")
    with pytest.raises(IndexError) as nb:
        bptt.function([idx, E], es, mode="NUMBA")(np.array([1, 5]), np.ones((3, 2)))
    assert str(nb.value) == "index out of bounds for axis 0"
    assert any("mode='PY'" in note for note in nb.value.__notes__)



def _failing_graph(case):
    """(inputs, output, arguments, error type, the input the note must name)."""
    x, v, i = T.matrix("x"), T.vector("v"), T.ivector("i")
    W = bptt.shared(np.ones((3, 2)), name="W")
    if case == "dot":
        return [x], T.tanh(T.dot(x, W)), (np.ones((4, 5)),), ValueError, "'W'"
    if case == "index":
        return [v, i], v[i] * 2, (np.ones(3), np.array([0, 3], "int32")), IndexError, "'i'"
    return [v], v.reshape((2, 2)) + 1, (np.ones(3),), ValueError, "'v'"


@pytest.mark.parametrize("case", ["dot", "index", "reshape"])
def test_an_error_outside_loops_names_the_op_and_the_inputs_as_in_py(case):
    # Compiled code says "gemm: shapes (4, 5) @ (3, 2) into (4, 2) not aligned" without naming
    # x or W; the call is restated by the reference evaluator, as for a failing scan step.
    inputs, output, args, error, culprit = _failing_graph(case)
    raised = {}
    for m in ("PY", "NUMBA"):
        with pytest.raises(error) as info:
            bptt.function(inputs, output, mode=m)(*args)
        raised[m] = info.value
    assert str(raised["NUMBA"]) == str(raised["PY"])
    note = "\n".join(raised["NUMBA"].__notes__)
    assert "while computing" in note and culprit in note, note
    assert "np.int64" not in str(raised["NUMBA"])
