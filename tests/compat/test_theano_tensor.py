"""theano.tensor's own signatures and names (compat/theano/tensor/basic.py): NumPy's
values and dtypes in both modes."""
import numpy as np
import pytest

import bptt
import bptt.compat.theano.tensor as T

RNG = np.random.default_rng(0)
XV = RNG.standard_normal((3, 4))
HALVES = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49])

CASES = [  # (name, graph of x (matrix) and v (vector), NumPy's value of XV and HALVES)
    ("sum with dtype third", lambda x, v: T.sum(x, 0, "float32"),
     lambda x, v: x.sum(0).astype("float32")),
    ("sum acc_dtype keepdims", lambda x, v: T.sum(x, axis=1, keepdims=True, acc_dtype="float64"),
     lambda x, v: x.sum(1, keepdims=True)),
    ("mean dtype", lambda x, v: T.mean(x, dtype="float32"), lambda x, v: np.float32(x.mean())),
    ("prod no_zeros_in_input", lambda x, v: T.prod(x, axis=0, no_zeros_in_input=True),
     lambda x, v: x.prod(0)),
    ("round half away from zero", lambda x, v: T.round(v, mode="half_away_from_zero"),
     lambda x, v: np.sign(v) * np.floor(np.abs(v) + 0.5)),
    ("round half to even", lambda x, v: T.round(v), lambda x, v: np.round(v)),
    ("iround", lambda x, v: T.iround(v), lambda x, v: np.round(v).astype("int64")),
    ("largest", lambda x, v: T.largest(x, -x, x * 0.5),
     lambda x, v: np.maximum(np.maximum(x, -x), x * 0.5)),
    ("smallest", lambda x, v: T.smallest(x, -x), lambda x, v: np.minimum(x, -x)),
    ("horizontal_stack", lambda x, v: T.horizontal_stack(x, x), lambda x, v: np.hstack([x, x])),
    ("vertical_stack", lambda x, v: T.vertical_stack(x, x), lambda x, v: np.vstack([x, x])),
    ("swapaxes", lambda x, v: T.swapaxes(x, 0, 1), lambda x, v: x.swapaxes(0, 1)),
    ("eye", lambda x, v: T.eye(3, 4, 1) + 0 * x[0, 0], lambda x, v: np.eye(3, 4, 1)),
    ("identity_like", lambda x, v: T.identity_like(x), lambda x, v: np.eye(3, 4)),
    ("tril", lambda x, v: T.tril(x, 1), lambda x, v: np.tril(x, 1)),
    ("triu", lambda x, v: T.triu(x, -1), lambda x, v: np.triu(x, -1)),
    ("isclose", lambda x, v: T.isclose(x, x + 1e-9), lambda x, v: np.isclose(x, x + 1e-9)),
    ("allclose", lambda x, v: T.allclose(x, x * 1.1), lambda x, v: np.allclose(x, x * 1.1)),
    ("stacklists", lambda x, v: T.stacklists([[v, v], [v * 2, v]]),
     lambda x, v: np.array([[v, v], [v * 2, v]])),
    ("inv", lambda x, v: T.inv(x), lambda x, v: 1 / x),
    ("floor_div", lambda x, v: T.floor_div(x, 0.3), lambda x, v: x // 0.3),
]


@pytest.mark.parametrize("name, graph, want", CASES, ids=[c[0] for c in CASES])
def test_theano_function_matches_numpy(name, graph, want, mode):
    x, v = T.dmatrix("x"), T.dvector("v")
    got = bptt.function([x, v], graph(x, v), mode=mode, on_unused_input="ignore")(XV, HALVES)
    expected = want(XV, HALVES)
    np.testing.assert_allclose(got, expected, rtol=1e-6 if got.dtype == np.float32 else 1e-12)
    assert np.asarray(got).dtype == np.asarray(expected).dtype


def test_gradients_of_the_composed_functions(mode):
    for fn in (lambda x: T.tril(x, 1) * x, lambda x: T.largest(x, -x, 0.3) ** 2,
               lambda x: T.horizontal_stack(x, x ** 2), lambda x: T.mean(x, dtype="float64")):
        bptt.verify_grad(fn, [XV], rng=np.random.default_rng(1), mode=mode)


def test_round_refuses_an_unknown_mode():
    with pytest.raises(ValueError, match="half_away_from_zero"):
        T.round(T.dvector(), mode="up")
