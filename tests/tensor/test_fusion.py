"""Elementwise fusion: the graph after `fuse_elemwise`, the `Composite` scalar op, and the
loop kernels every Elemwise lowers to.

Oracles: NumPy (values and dtypes) on hypothesis-drawn elementwise programs with
broadcasting patterns and dtypes, in PY and NUMBA; the graph before fusion;
`verify_grad` through a fused node (its gradient comes from `Composite.partials`).
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.compile.passes import pm, run_passes
from bptt.graph.fg import FunctionGraph
from bptt.graph.verify import verify
from bptt.link.numba.dispatch.elemwise import loop_source
from bptt.link.numba.linker import with_kernel_modules
from bptt.tensor.composite import Composite
from bptt.tensor.elemwise import Elemwise
from bptt.tensor.rewriting import merge
from bptt.tensor.rewriting.fusion import fuse_elemwise

from ..strategies import arrays, assert_same

RNG = np.random.default_rng(0)


def _fused(inputs, outputs):
    fg = FunctionGraph(inputs, outputs)
    fuse_elemwise.apply(fg)
    verify(fg)
    return fg


def _elemwise_ops(fg):
    return [n.op.scalar_op for n in fg.toposort() if isinstance(n.op, Elemwise)]


def _names(fg):
    return [str(n.op) for n in fg.toposort()]


# -- structure -------------------------------------------------------------------------

def test_a_chain_becomes_one_composite(mode):
    a, b, c = T.matrix("a"), T.matrix("b"), T.vector("c")
    out = T.tanh(a * b + c) * 2.0
    fg = _fused([a, b, c], [out])
    assert _names(fg) == ["composite{mul(tanh(add(mul(i0, i1), i2)), i3)}"]
    assert fg.toposort()[0].inputs[:3] == fg.inputs
    f = bptt.function([a, b, c], out, mode=mode)
    assert _names(f.fgraph) == _names(fg)
    A, B, C = _data(3, 4), _data(1, 4), _data(4)
    assert_same(f(A, B, C), np.tanh(A * B + C) * 2.0)


def test_whole_pipeline_fuses_before_dead_code_removal():
    names = pm.names()
    assert names.index("fuse_elemwise") > names.index("canonicalize")
    assert names.index("fuse_elemwise") < names.index("remove_dead_code")


def test_a_value_read_outside_the_group_is_computed_once():
    a, b = T.matrix("a"), T.matrix("b")
    t = a * b
    fg = _fused([a, b], [T.tanh(t + 1.0), t])           # t is also an output
    assert _names(fg) == ["mul", "composite{tanh(add(i0, i1))}"]
    u = T.exp(a)
    fg = _fused([a, b], [T.tanh(u) * b, T.sin(u) + b])    # u read by two groups
    assert sorted(_names(fg)) == ["composite{add(sin(i0), i1)}",
                                  "composite{mul(tanh(i0), i1)}", "exp"]


def test_a_value_read_twice_inside_the_group_is_fused_once():
    a = T.matrix("a")
    t = T.exp(a)
    fg = _fused([a], [T.tanh(t) * t])
    (comp,) = _elemwise_ops(fg)
    assert comp.name == "composite{mul(tanh(exp(i0)), exp(i0))}"
    assert [op.name for op, *_ in comp.nodes] == ["exp", "tanh", "mul"]


def test_lower_dimensional_and_0d_work_is_not_repeated_per_element():
    m, v, s = T.matrix("m"), T.vector("v"), T.scalar("s")
    r = T.tensor("float64", (1, None))
    fg = _fused([m, v, s, r], [T.tanh(m * T.exp(v) + T.exp(s)), m * T.exp(r)])
    assert sorted(_names(fg)) == ["composite{tanh(add(mul(i0, i1), i2))}", "exp", "exp",
                                  "exp", "mul"]
    fg = _fused([s], [T.tanh(s * 2.0)])                    # 0-d graphs stay as they are
    assert _names(fg) == ["mul", "tanh"]


def test_sums_fuse_like_any_chain():
    a, b, c = T.matrix("a"), T.matrix("b"), T.matrix("c")
    fg = _fused([a, b, c], [(a + b) + c])
    (comp,) = _elemwise_ops(fg)
    assert comp.name == "composite{add(add(i0, i1), i2)}"


def test_fusion_goes_through_non_elemwise_nodes_only_as_inputs():
    x, w = T.matrix("x"), T.matrix("w")
    h = T.tanh(T.dot(x, w) + 1.0)
    fg = _fused([x, w], [T.sum(h * h)])
    (comp,) = _elemwise_ops(fg)
    assert comp.name == "composite{mul(tanh(add(i0, i1)), tanh(add(i0, i1)))}"


def test_equal_composites_are_equal_and_merge():
    def chain(a, b):
        return T.tanh(a * b) - b

    a, b = T.matrix("a"), T.matrix("b")
    c1 = Composite.from_graph([a, b], chain(a, b))
    c2 = Composite.from_graph([a, b], chain(a, b))
    assert c1 == c2 and hash(c1) == hash(c2) and Elemwise(c1) == Elemwise(c2)
    assert c1 != Composite.from_graph([a, b], T.tanh(a * b) + b)
    fa, fb = T.fmatrix(), T.fmatrix()
    assert c1 != Composite.from_graph([fa, fb], chain(fa, fb))
    fg = FunctionGraph([a, b], [Elemwise(c1)(a, b) + Elemwise(c2)(a, b)])
    merge.apply(fg)
    assert len(fg.toposort()) == 2


def test_composites_inline_inner_composites():
    a, b = T.vector("a"), T.vector("b")
    inner = Elemwise(Composite.from_graph([a, b], T.exp(a) * b))(a, b)
    comp = Composite.from_graph([a, b], T.tanh(inner) + a)
    assert comp == Composite.from_graph([a, b], T.tanh(T.exp(a) * b) + a)


def test_composite_signature_checks_dtypes():
    a = T.vector("a")
    op = Elemwise(Composite.from_graph([a], T.exp(a) * a))
    assert op(a).dtype == "float64"
    with pytest.raises(TypeError, match="input 0 must be float64"):
        op(T.fvector())


# -- dtypes -------------------------------------------------------------------------------

def test_dtypes_and_casts_inside_a_composite(mode):
    i8, u8, f32 = T.tensor("int8", (None,)), T.tensor("uint8", (None,)), T.fvector()
    outs = [(i8 * i8 + i8) * 3,                           # wraps in int8
            T.cast(i8, "float32") * f32 + u8,             # float32 * float32 + uint8 -> float32
            T.switch(i8 > u8, f32, -f32) * 2.0,            # bool condition, float32 result
            T.cast(T.cast(f32 * 300.0, "uint16") + u8, "int16"),
            (i8 > 0) & (u8 < 7) | (f32 == f32)]             # bool throughout
    fg = FunctionGraph([i8, u8, f32], outs)
    run_passes(fg)
    assert all(isinstance(op, Composite) for op in _elemwise_ops(fg))
    assert [o.dtype for o in fg.outputs] == ["int8", "float32", "float32", "int16", "bool"]
    f = bptt.function([i8, u8, f32], outs, mode=mode)
    x8 = np.array([-128, 127, 5, -3, 0], "int8")
    y8 = np.array([255, 0, 7, 3, 200], "uint8")
    z = np.array([1.5, -2.25, 200.0, 0.125, -7.0], "float32")
    want = [(x8 * x8 + x8) * np.int8(3), x8.astype("float32") * z + y8,
            np.where(x8 > y8, z, -z) * 2.0,
            ((z * np.float32(300.0)).astype("int32").astype("uint16") + y8).astype("int16"),
            (x8 > 0) & (y8 < 7) | (z == z)]
    for got, exp in zip(f(x8, y8, z), want):
        assert_same(got, exp)


# -- broadcasting and layouts -----------------------------------------------------------

def test_runtime_broadcasting_and_strided_inputs(mode):
    a, b, c = T.matrix("a"), T.matrix("b"), T.tensor("float64", (1, None))
    d = T.vector("d")
    out = T.tanh(a.T * b + c) - d            # a.T is a strided view in the kernel
    f = bptt.function([a, b, c, d], out, mode=mode)
    assert sum(isinstance(op, Composite) for op in _elemwise_ops(f.fgraph)) == 1
    for sa, sb, sd in [((4, 3), (3, 4), (4,)), ((1, 3), (3, 4), (1,)), ((4, 3), (1, 1), (4,)),
                       ((4, 1), (3, 4), (4,)), ((0, 3), (3, 1), (1,)), ((1, 1), (1, 1), (1,))]:
        A, B, D = _data(*sa), _data(*sb), _data(*sd)
        C = _data(1, max(sa[0], sb[1], sd[0]) if 0 not in sa else 0)
        assert_same(f(A, B, C, D), np.tanh(A.T * B + C) - D)


@pytest.mark.parametrize("shapes", [((2, 3), (3, 3), (3,)), ((2, 3), (2, 3), (2,)),
                                    ((0, 3), (2, 3), (3,)), ((2, 3), (2, 3), (0,))])
def test_shapes_that_do_not_broadcast_raise(mode, shapes):
    a, b, c = T.matrix("a"), T.matrix("b"), T.vector("c")
    f = bptt.function([a, b, c], T.tanh(a * b + c), mode=mode)
    with pytest.raises(ValueError, match="broadcast"):
        f(*[np.zeros(s) for s in shapes])


def test_loop_reads_arrays_through_flat_views_with_element_strides():
    a, r = T.matrix("a"), T.tensor("float32", (1, None))
    node = (a * r).owner
    src = loop_source(node.op, node)
    assert "d0, d1, = broadcast_shape(((i0.shape[0], i0.shape[1], ), (-1, i1.shape[1], ), ))" \
        in src and "np.broadcast" not in src
    # a size-1 dimension has element stride 0 (no multiplier); r's static 1 is not read
    assert "x0 = f0[np.uint64(o0 + j0 * e0[0] + j1 * e0[1])]" in src
    assert "x1 = f1[np.uint64(o1 + j1 * e1[1])]" in src
    assert "fout[np.uint64(oout + j0 * eout[0] + j1 * eout[1])] =" in src
    node = (T.tensor("float64", (1, 1)) * T.scalar()).owner
    src = loop_source(node.op, node)
    assert "i0[0, 0]" in src and "elem_view(i0)" not in src


def test_the_loops_of_main_are_shared_kernels():
    a, b = T.matrix("a"), T.matrix("b")
    f = bptt.function([a, b], [T.tanh(a * b) - a, T.exp(b), T.exp(a)], mode="NUMBA")
    graph = f._fn.source
    # main runs once per call, so a call costs nothing that counts and a kernel is compiled
    # once for every graph: the fused loop one kernel, the exp loop one kernel called twice
    assert graph.count("@jit") == 1 and graph.count("= separately(") == 2
    assert graph.count("_call(") == 3 and "for ew_j1" not in graph
    assert "for j1 in range(d1):" in with_kernel_modules(graph)   # the kernels' own loops
    # another graph with the same loop imports the same kernel module
    g = bptt.function([a, b], [T.exp(a), T.exp(b)], mode="NUMBA")
    kernel = [line for line in g._fn.source.split("\n") if line.startswith("from bptt_generated")]
    assert len(kernel) == 1 and kernel[0].split(" as ")[0] in graph
    for x, y in [(np.ones((2, 3)), np.full((2, 3), 0.5)), (np.ones((0, 1)), np.ones((0, 4)))]:
        for got, want in zip(f(x, y), [np.tanh(x * y) - x, np.exp(y), np.exp(x)]):
            np.testing.assert_allclose(got, want, rtol=1e-12)
        for got, want in zip(g(x, y), [np.exp(x), np.exp(y)]):
            np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_loop_in_a_step_is_inline_once_and_a_shared_kernel_when_repeated():
    a0, b0 = T.matrix("a0"), T.matrix("b0")

    def step(a, b):
        return T.tanh(a * b) - a, T.exp(b) * 0.5, T.exp(a) * 0.5

    (_, bs, cs), _ = bptt.scan(step, outputs_info=[a0, b0, None], n_steps=3)
    f = bptt.function([a0, b0], [bs, cs], mode="NUMBA")
    step_src = f._fn.source.split("def scan_step")[1].split("@jit")[0]
    # a step runs at every step, where a call costs: the loop met once is written inline,
    # the one met twice is one kernel called twice
    assert step_src.count("for ew_j1 in range(ew_d1):") == 1, step_src
    assert step_src.count("_call(") == 2, step_src
    x, y = np.full((2, 3), 0.3), np.full((2, 3), -0.2)
    want_b, want_c, a, b = [], [], x, y
    for _ in range(3):
        a, b, c = np.tanh(a * b) - a, np.exp(b) * 0.5, np.exp(a) * 0.5
        want_b.append(b)
        want_c.append(c)
    got_b, got_c = f(x, y)
    np.testing.assert_allclose(got_b, want_b, rtol=1e-12)
    np.testing.assert_allclose(got_c, want_c, rtol=1e-12)


def test_a_loop_in_a_scan_step_and_in_main_is_one_kernel():
    x, h0 = T.vector("x"), T.vector("h0")
    h, _ = bptt.scan(lambda h: T.exp(h), outputs_info=[h0], n_steps=3)
    f = bptt.function([x, h0], [h, T.exp(x)], mode="NUMBA")
    src = f._fn.source
    assert src.count("= separately(ew") == 1 and "for ew_j0" not in src
    x_val, h_val = np.array([0.5, -1.0]), np.array([0.1, 0.2])
    want = [np.exp(h_val)]
    for _ in range(2):
        want.append(np.exp(want[-1]))
    got_h, got_x = f(x_val, h_val)
    np.testing.assert_allclose(got_h, np.stack(want), rtol=1e-12)
    np.testing.assert_allclose(got_x, np.exp(x_val), rtol=1e-12)


def test_0d_outputs_stay_inline_scalars():
    s, t = T.scalar("s"), T.scalar("t")
    f = bptt.function([s, t], T.tanh(s * t) ** 2, mode="NUMBA")
    assert "for " not in f._fn.source and "alloc_empty" not in f._fn.source
    assert np.isclose(f(0.5, 3.0), np.tanh(1.5) ** 2)
    # a composite applied to scalars lowers to one nested scalar expression
    comp = Composite.from_graph([s, t], T.tanh(s * t) + s)
    f = bptt.function([s, t], Elemwise(comp)(s, t), mode="NUMBA")
    assert np.isclose(f(0.5, 3.0), np.tanh(1.5) + 0.5) and f(0.5, 3.0).dtype == "float64"


# -- gradients --------------------------------------------------------------------------

def test_gradient_through_a_fused_node(mode):
    def fun(a, b, c):
        fg = FunctionGraph([a, b, c], [T.tanh(a * b + T.exp(c)) * b - a / (1 + b * b)],
                           clone=False)
        fuse_elemwise.apply(fg)
        (out,) = fg.outputs
        assert isinstance(out.owner.op.scalar_op, Composite)
        return out

    bptt.verify_grad(fun, [_data(3, 2), _data(3, 2), _data(2)], mode=mode)


def test_partials_of_integer_and_boolean_paths_are_disconnected():
    a, i = T.vector("a"), T.ivector("i")
    fi = T.cast(i, "float64")
    comp = Composite.from_graph([a, i], T.switch(a > fi, a, fi) * a)
    out = Elemwise(comp)(a, i)
    da, di = comp.partials([a, i], out)
    assert di is None and da is not None


# -- hypothesis: random elementwise programs against NumPy ------------------------------

DTYPES = ["bool", "int8", "int32", "uint8", "float32", "float64"]

#: name -> (bptt function, NumPy function, kinds it accepts)
UNARY = {
    "neg": (T.neg, np.negative, "iuf"),
    "abs": (T.abs, np.abs, "biuf"),
    "sqr": (T.sqr, np.square, "iuf"),
    "tanh": (T.tanh, np.tanh, "f"),
    "exp": (T.exp, np.exp, "f"),
    "not": (T.invert, np.invert, "b"),
}
BINARY = {
    "add": (T.add, np.add), "mul": (T.mul, np.multiply), "sub": (T.sub, np.subtract),
    "maximum": (T.maximum, np.maximum), "gt": (T.gt, np.greater),
    "switch": (lambda a, b: T.switch(T.lt(a, b), a, b), lambda a, b: np.where(a < b, a, b)),
}


@st.composite
def programs(draw, max_inputs=4, max_steps=6):
    """(input specs, steps): an input is (dtype, static shape of None/1 entries); a step is
    ('u', name, i) | ('b', name, i, j) | ('cast', dtype, i) on earlier values."""
    n_in = draw(st.integers(1, max_inputs))
    specs = []
    for _ in range(n_in):
        nd = draw(st.integers(0, 2))
        static = tuple(draw(st.sampled_from([None, None, 1])) for _ in range(nd))
        specs.append((draw(st.sampled_from(DTYPES)), static))
    dts = [d for d, _ in specs]
    steps = []
    for _ in range(draw(st.integers(1, max_steps))):
        # reading the latest value half the time makes chains, which is what fuses
        i = draw(st.one_of(st.just(len(dts) - 1), st.integers(0, len(dts) - 1)))
        kind = np.dtype(dts[i]).kind
        what = draw(st.sampled_from(["u", "b", "b", "cast"]))
        unary = [k for k, (_, _, kinds) in UNARY.items() if kind in kinds]
        if what == "u" and unary:
            name = draw(st.sampled_from(unary))
            steps.append(("u", name, i))
            dts.append(np.result_type(UNARY[name][1](np.zeros(1, dts[i]))).name)
        elif what == "cast" and kind != "f":
            to = draw(st.sampled_from(DTYPES))
            steps.append(("cast", to, i))
            dts.append(to)
        else:
            j = draw(st.integers(0, len(dts) - 1))
            name = draw(st.sampled_from(sorted(BINARY)))
            if name == "sub" and "bool" in (dts[i], dts[j]):
                name = "add"
            steps.append(("b", name, i, j))
            dts.append(BINARY[name][1](np.zeros(1, dts[i]), np.zeros(1, dts[j])).dtype.name)
    return specs, steps


def _run_program(steps, values, lib):
    vals = list(values)
    for step in steps:
        if step[0] == "u":
            fn = UNARY[step[1]][0 if lib == "bptt" else 1]
            vals.append(fn(vals[step[2]]))
        elif step[0] == "b":
            fn = BINARY[step[1]][0 if lib == "bptt" else 1]
            vals.append(fn(vals[step[2]], vals[step[3]]))
        else:
            x = vals[step[2]]
            vals.append(T.cast(x, step[1]) if lib == "bptt" else np.asarray(x).astype(step[1]))
    return vals[len(values):]


@st.composite
def _point(draw, specs):
    full = draw(st.tuples(st.integers(0, 3), st.integers(1, 3)))
    shapes = []
    for _, static in specs:
        tail = full[2 - len(static):] if static else ()
        shapes.append(tuple(1 if s == 1 else draw(st.sampled_from([n, 1]))
                            for s, n in zip(static, tail)))
    return [draw(arrays(dt, sh, domain="unit")) for (dt, _), sh in zip(specs, shapes)]


def _sinks(n_in, steps):
    """Positions (among step values) of the steps no later step reads: the outputs."""
    read = {i for step in steps for i in step[2:]}
    return [k for k in range(len(steps)) if n_in + k not in read]


def _check_program(specs, steps, data, mode):
    xs = [T.tensor(dt, static) for dt, static in specs]
    sinks = _sinks(len(xs), steps)
    outs = [_run_program(steps, xs, "bptt")[k] for k in sinks]
    fg = FunctionGraph(xs, outs)
    run_passes(fg)
    _assert_maximal(fg)
    f = bptt.function(xs, outs, mode=mode, on_unused_input="ignore")
    for _ in range(3):
        pt = data.draw(_point(specs))
        with np.errstate(all="ignore"):
            want = [_run_program(steps, pt, "numpy")[k] for k in sinks]
        # rounding (numba's libm against NumPy's) is relative to the largest finite value
        floats = [np.abs(w[np.isfinite(w)]) for w in map(np.asarray, want) if w.dtype.kind == "f"]
        scale = 1 + max((float(w.max(initial=0)) for w in floats), default=0)
        for k, (got, exp) in enumerate(zip(f(*pt), want)):
            assert_same(got, np.asarray(exp), scale=scale, what=f"step {k} of {steps}")


def _assert_maximal(fg):
    """No Elemwise node could still absorb a producer by the rules of `fusion_group`."""
    for node in fg.toposort():
        if not isinstance(node.op, Elemwise) or node.outputs[0].ndim == 0:
            continue
        for v in node.inputs:
            p = v.owner
            if (p is None or not isinstance(p.op, Elemwise) or v in fg.outputs
                    or [c for c, _ in fg.clients[v]] != [node]
                    or tuple(s == 1 for s in v.type.shape) !=
                    tuple(s == 1 for s in node.outputs[0].type.shape)):
                continue
            raise AssertionError(f"{p.op} could have been fused into {node.op}")


@settings(max_examples=60)
@given(program=programs(), data=st.data())
def test_random_elementwise_programs_match_numpy_py(program, data):
    _check_program(*program, data, "PY")


# Every program is a numba compilation (a few tenths of a second each).
@settings(max_examples=10)
@given(program=programs(max_steps=5), data=st.data())
def test_random_elementwise_programs_match_numpy_numba(program, data):
    _check_program(*program, data, "NUMBA")


def _data(*shape):
    return RNG.standard_normal(shape)
