"""The numba linker: generated modules, shared kernels, eager compilation, call glue."""
import sys

import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import bptt
import bptt.tensor as T
from bptt.graph.basic import Apply
from bptt.graph.op import Op
from bptt.link.numba.linker import ModuleBuilder, literal
from bptt.link.numba.registry import Kernel, numba_funcify
from bptt.link.numba.runtime import broadcast_into


@pytest.mark.parametrize("value, dtype, text", [
    (1.5, "float32", "np.float32(1.5)"), (np.nan, "float64", "np.float64(np.nan)"),
    (-np.inf, "float64", "np.float64(-np.inf)"), (3, "int8", "np.int8(3)"),
    (1, "bool", "True"), (0, "bool", "False")])
def test_literal(value, dtype, text):
    assert literal(value, dtype) == text


def test_self_contained_kernels_are_shared_between_graph_modules():
    w, m, v = T.matrix("w"), T.matrix("m"), T.vector("v")
    f = bptt.function([w], T.tanh(T.sum(w, axis=1)), mode="NUMBA")
    g = bptt.function([m, v], T.sum(m, axis=1) * 2 + v, mode="NUMBA")

    def kernels(h):
        return {n: getattr(h._fn.module, n) for n in dir(h._fn.module) if n.startswith("reduce")}

    kernels_f, kernels_g = kernels(f), kernels(g)
    assert kernels_f and set(map(id, kernels_f.values())) == set(map(id, kernels_g.values()))
    assert "def reduce" not in f._fn.source and "import reduce" in f._fn.source
    np.testing.assert_allclose(g(np.eye(2), np.ones(2)), [3.0, 3.0])


def test_kernels_naming_module_functions_stay_in_the_module():
    b = ModuleBuilder()
    helper = b.fresh("helper")
    local = b.add_kernel(Kernel(f"def {{name}}(x):\n    return {helper}(x) + 1\n", "uses_helper"))
    shared = b.add_kernel(Kernel("def {name}(x):\n    return x + 1\n", "plain"))
    src = b.source()
    assert f"def {local}(x):" in src and f"return {helper}(x) + 1" in src
    assert f"import plain as {shared}" in src and "def plain" not in src
    assert b.add_kernel(Kernel("def {name}(x):\n    return x + 1\n", "plain")) == shared


def test_main_is_compiled_by_function_for_c_contiguous_arrays():
    x, s = T.matrix("x"), T.iscalar("s")
    f = bptt.function([x, s], x * s, mode="NUMBA")
    sigs = f._fn.numba_function.signatures
    assert len(sigs) == 1
    assert [str(t) for t in sigs[0]] == ["array(float64, 2d, C)", "int32"]
    f(np.ones((2, 3)).T, 3)
    assert len(f._fn.numba_function.signatures) == 1


def test_a_graph_with_random_draws_is_compiled_by_function():
    """A random generator (a shared input) has one numba type for every bit generator, so
    its graph compiles in bptt.function too, not at its first call."""
    from bptt.tensor.random import RandomStreams

    rs = RandomStreams(5)
    x = T.matrix("x")
    hs, _ = bptt.scan(lambda x_t, h: T.tanh(h + x_t * rs.uniform(size=(3,))),
                      sequences=[x], outputs_info=[T.zeros(3)])
    f = bptt.function([x], hs[-1], mode="NUMBA")
    assert len(f._fn.numba_function.signatures) == 1
    got = f(np.ones((4, 3)))
    assert len(f._fn.numba_function.signatures) == 1 and np.all(np.abs(got) < 1)


def test_fresh_outputs_are_not_copied():
    x = T.vector("x")
    f = bptt.function([x], [x + 1, x], mode="NUMBA")
    fresh, same = f(np.ones(3))
    assert type(fresh.base).__name__ == "_MemInfo"  # handed over as numba allocated it
    assert same.base is None  # the argument itself came back: copied


def test_dump_source(monkeypatch, capsys):
    monkeypatch.setattr(bptt.config, "dump_source", True)
    x = T.vector("x")
    bptt.function([x], x * 3, mode="NUMBA")
    out = capsys.readouterr().out
    assert "def main(i0):" in out and "np.float64(3.0)" in out


class _Broken(Op):
    """An op whose lowering does not type-check in numba (for the error path)."""

    def make_node(self, x):
        return Apply(self, [x], [x.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = inputs[0].copy()


@numba_funcify.register(_Broken)
def _broken(op, node, ctx):
    return "({0} + 'not a number')"


def test_compile_errors_point_at_the_generated_module():
    x = T.vector("x")
    with pytest.raises(numba.core.errors.TypingError) as info:
        bptt.function([x], _Broken()(x), mode="NUMBA")
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "while compiling the generated numba module" in notes and ".py" in notes
    np.testing.assert_array_equal(bptt.function([x], _Broken()(x), mode="PY")([1.0]), [1.0])


@numba.njit
def _into(out, x):
    return broadcast_into(out, x)


@given(data=st.data(), ndim=st.integers(1, 3))
def test_broadcast_into_matches_numpy(data, ndim):
    shape = data.draw(st.tuples(*[st.integers(0, 3)] * ndim))
    xshape = tuple(data.draw(st.sampled_from([1, n])) for n in shape)
    x = data.draw(arrays("float64", xshape, elements=st.floats(-5, 5)))
    out = _into(np.empty(shape), x)
    np.testing.assert_array_equal(out, np.broadcast_to(x, shape))
    np.testing.assert_array_equal(_into(np.empty(shape), 2.5), np.full(shape, 2.5))


def test_generated_modules_are_importable_by_name():
    x = T.vector("x")
    f = bptt.function([x], x * 7, mode="NUMBA")
    assert sys.modules[f._fn.module.__name__] is f._fn.module
