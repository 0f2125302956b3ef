"""`verify_grad`: it passes correct gradients and catches wrong ones, saying where."""
import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.graph.basic import Apply
from bptt.graph.op import Op
from bptt.link.numba.registry import numba_funcify


class _Square(Op):
    """x**2 whose L_op is off: by the factor `scale`, and by `bump` * g where x == 3."""

    __props__ = ("scale", "bump")

    def __init__(self, scale=1.0, bump=0.0):
        self.scale, self.bump = scale, bump

    def make_node(self, x):
        x = T.as_tensor_variable(x)
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0] * inputs[0]

    def L_op(self, inputs, outputs, output_grads):
        (x,), (g,) = inputs, output_grads
        right = g * 2.0 * x
        if self.scale != 1.0:
            right = right * self.scale
        if self.bump:
            right = right + T.switch(T.eq(x, 3.0), g * self.bump, 0.0)
        return [right]


@numba_funcify.register(_Square)
def _square_numba(op, node, ctx):
    return "({0} * {0})"


square = _Square()


def test_passes_on_correct_gradients_of_several_inputs_and_outputs(mode):
    rng = np.random.default_rng(0)
    bptt.verify_grad(lambda x, W: [T.tanh(T.dot(W, x)) * square(x).sum(), T.exp(W) * 0.5],
                     [rng.standard_normal(3), rng.standard_normal((2, 3))], mode=mode)


def test_wrong_gradient_names_input_errors_and_location(mode):
    pt = [np.array([1.0, 2.0]), np.array([0.5, 3.0, -1.0])]
    with pytest.raises(bptt.GradientError) as info:
        bptt.verify_grad(lambda a, b: [a * 2.0, _Square(bump=1.0)(b) + a.sum()], pt, mode=mode)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.input_index == 1 and err.where == (1,)
    assert err.abs_err > 1e-3 and err.rel_err > 1e-3
    msg = str(err)
    assert "input 1" in msg and "(1,)" in msg
    assert "max absolute error" in msg and "max relative error" in msg


def test_wrong_scalar_input_is_caught(mode):
    with pytest.raises(bptt.GradientError, match="input 0") as info:
        bptt.verify_grad(lambda x: _Square(scale=2.0)(x), [np.array(1.5)], mode=mode)
    assert info.value.where == ()


def test_tolerances_depend_on_dtype(mode):
    """A gradient 0.1% off fails float64's tolerances and passes float32's."""
    slightly_off = _Square(scale=1.001)
    x = np.array([0.5, -1.5, 2.0])
    with pytest.raises(bptt.GradientError):
        bptt.verify_grad(slightly_off, [x], mode=mode)
    bptt.verify_grad(slightly_off, [x.astype("float32")], mode=mode)
    bptt.verify_grad(slightly_off, [x], mode=mode, abs_tol=1e-2, rel_tol=1e-2)


def test_float32_correct_gradient_passes(mode):
    x = np.array([[0.5, -1.5], [2.0, 0.1]], dtype="float32")
    bptt.verify_grad(lambda x: T.tanh(x) * square(x), [x], mode=mode)


@pytest.mark.parametrize("rng", [np.random.RandomState(3), np.random.default_rng(3)],
                         ids=["RandomState", "Generator"])
def test_rng_kinds_accepted(rng):
    pt = [np.array([0.2, 0.4])]
    bptt.verify_grad(lambda x: T.sin(x) * x, pt, rng=rng, mode="PY", n_tests=3)
    with pytest.raises(bptt.GradientError):
        bptt.verify_grad(_Square(scale=0.5), pt, rng=rng, mode="PY")


def test_point_must_be_a_list_of_float_arrays():
    with pytest.raises(TypeError, match="list"):
        bptt.verify_grad(T.exp, np.ones(2), mode="PY")
    with pytest.raises(TypeError, match="int64"):
        bptt.verify_grad(T.exp, [np.arange(2)], mode="PY")


def test_a_compiled_mode_compiles_one_function(monkeypatch):
    # Cost and gradients come from one compiled function (shapes from a PY probe):
    # one numba compilation per verify_grad instead of three.
    from bptt.link.numba import linker

    made = []
    real = linker.make_numba_callable

    def counting(*args, **kwargs):
        made.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(linker, "make_numba_callable", counting)
    bptt.verify_grad(lambda x: T.tanh(x) * square(x), [np.linspace(-1.0, 1.0, 4)], mode="NUMBA")
    assert len(made) == 1
    with pytest.raises(bptt.GradientError):
        bptt.verify_grad(lambda x: _Square(scale=2.0)(x), [np.array(1.5)], mode="NUMBA")
    assert len(made) == 2
