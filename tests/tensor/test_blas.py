"""`Gemm`, the rewrites that make it (`gemm_from_add`, `gemm_inplace`) and the Dot lowering."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.graph.fg import FunctionGraph
from bptt.graph.traversal import toposort
from bptt.scan.op import Scan
from bptt.tensor.blas import Gemm, gemm
from bptt.tensor.math import Dot
from bptt.tensor.rewriting.blas import gemm_inplace_pass, gemm_pass
from tests.helpers import excluding, without_rewrites
from tests.strategies import assert_same, check_infer_shape

DTYPES = ["float64", "float32"]


def rewritten(inputs, outputs):
    fg = FunctionGraph(inputs, outputs, clone=True)
    gemm_pass.apply(fg)
    gemm_inplace_pass.apply(fg)
    return fg


def ops(fg):
    return [type(n.op).__name__ + ("+inplace" if getattr(n.op, "inplace", False) else "")
            for n in fg.toposort()]


# -- Dot lowering: every operand layout a graph produces, PY against NUMBA ---------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_dot_of_views_matches_numpy(mode, dtype):
    A, B, v = T.matrix("A", dtype=dtype), T.matrix("B", dtype=dtype), T.vector("v", dtype=dtype)
    outs = [T.dot(A, B), T.dot(A.T, B), T.dot(A, B.T), T.dot(A[::2], B), T.dot(A[:, 1:], B[1:]),
            T.dot(A[::-1], B), T.dot(A, v), T.dot(v, B), T.dot(v, v), T.dot(A.T, v)]
    f = bptt.function([A, B, v], outs, mode=mode)
    rng = np.random.default_rng(0)
    for n in (1, 4, 13):
        a, b = rng.standard_normal((n, n)).astype(dtype), rng.standard_normal((n, n)).astype(dtype)
        w = rng.standard_normal(n).astype(dtype)
        want = [a @ b, a.T @ b, a @ b.T, a[::2] @ b, a[:, 1:] @ b[1:], a[::-1] @ b, a @ w,
                w @ b, w @ w, a.T @ w]
        for got, exp in zip(f(a, b, w), want):
            assert_same(got, exp, scale=n)


# -- the op -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@given(m=st.integers(0, 6), k=st.integers(0, 6), n=st.integers(0, 6),
       zshape=st.sampled_from(["full", "row", "vector", "scalar"]),
       alpha=st.sampled_from([1.0, -1.0, 0.5, 0.0]), beta=st.sampled_from([1.0, 0.0, 2.0]),
       seed=st.integers(0, 2 ** 16))
def test_gemm_values_numpy(mode, dtype, m, k, n, zshape, alpha, beta, seed):
    rng = np.random.default_rng(seed)
    zv = {"full": (m, n), "row": (1, n), "vector": (n,), "scalar": ()}[zshape]
    z = T.tensor(dtype, (None,) * len(zv))
    x, y = T.matrix(dtype=dtype), T.matrix(dtype=dtype)
    a, b = T.scalar(dtype=dtype), T.scalar(dtype=dtype)
    f = bptt.function([z, a, x, y, b], gemm(z, a, x, y, b), mode=mode)
    vals = [rng.standard_normal(zv).astype(dtype), np.asarray(alpha, dtype),
            rng.standard_normal((m, k)).astype(dtype), rng.standard_normal((k, n)).astype(dtype),
            np.asarray(beta, dtype)]
    want = (vals[4] * vals[0] + vals[1] * (vals[2] @ vals[3])).astype(dtype)
    assert_same(f(*vals), np.broadcast_to(want, (m, n)), scale=1 + k)


def test_gemm_checks_types_and_infers_shape(mode):
    with pytest.raises(TypeError, match="one float dtype"):
        gemm(T.matrix(), 1.0, T.imatrix(), T.imatrix(), 1.0)
    with pytest.raises(TypeError, match="matrices"):
        Gemm()(T.matrix(), T.scalar(), T.vector(), T.matrix(), T.scalar())
    z, x, y = T.matrix(), T.matrix(), T.matrix()
    rng = np.random.default_rng(0)
    check_infer_shape([gemm(z, 2.0, x, y, 1.0)], [z, x, y],
                      [rng.standard_normal((1, 4)), rng.standard_normal((3, 2)),
                       rng.standard_normal((2, 4))], mode)


def test_gemm_gradient(mode):
    bptt.verify_grad(lambda z, a, x, y, b: gemm(z, a, x, y, b),
                     [np.random.default_rng(1).standard_normal(s) for s in
                      [(3, 4), (), (3, 2), (2, 4), ()]], mode=mode)


# -- gemm_from_add: structure, then equal values before/after --------------------------

def test_rewrite_structure():
    z, x, y, a = T.matrix("z"), T.matrix("x"), T.matrix("y"), T.scalar("a")
    b = T.vector("b")
    outs = [z + T.dot(x, y), z - T.dot(x, y), T.exp(z) + a * T.dot(x, y),
            T.dot(x, y) + b, T.dot(x, y) * a]
    fg = rewritten([z, x, y, a, b], outs)
    kinds = [o.owner.op for o in fg.outputs]
    assert kinds[:4] == [Gemm(False), Gemm(False), Gemm(True), Gemm(False)]
    assert not isinstance(kinds[4], Gemm)
    alphas = [float(o.owner.inputs[1].data) for o in fg.outputs[:2]]
    assert alphas == [1.0, -1.0]
    assert fg.outputs[2].owner.inputs[1] is fg.inputs[3]          # alpha = a


def test_rewrite_skips_shared_products_and_other_dtypes():
    z, x, y = T.matrix("z"), T.matrix("x"), T.matrix("y")
    p = T.dot(x, y)
    fg = rewritten([z, x, y], [z + p, p])                          # the product is read twice
    assert "Gemm" not in ops(fg)
    zi, xi, yi = T.imatrix("zi"), T.imatrix("xi"), T.imatrix("yi")
    assert "Gemm" not in ops(rewritten([zi, xi, yi], [zi + T.dot(xi, yi)]))
    zv, v = T.vector("zv"), T.vector("v")
    assert "Gemm" not in ops(rewritten([zv, x, v], [zv + T.dot(x, v)]))


@pytest.mark.parametrize("dtype", DTYPES)
@given(seed=st.integers(0, 2 ** 16), m=st.integers(1, 5), k=st.integers(0, 5),
       n=st.integers(1, 5))
def test_rewritten_graph_equal_values_py_numba(dtype, seed, m, k, n):
    z, x, y, a = (T.matrix("z", dtype=dtype), T.matrix("x", dtype=dtype),
                  T.matrix("y", dtype=dtype), T.scalar("a", dtype=dtype))
    b = T.vector("b", dtype=dtype)
    # (the last output's add is the graph's: a Gemm out of place; the tanh of the fourth
    # adds b in its loop, test_no_gemm_that_would_copy_z_for_an_elementwise_reader)
    outs = [z + T.dot(x, y), z - T.dot(x.T.T, y), T.exp(z) + a * T.dot(x, y),
            T.tanh(T.dot(x, y) + b), T.dot(x, y) + T.dot(T.exp(x), y)]
    rng = np.random.default_rng(seed)
    vals = [rng.standard_normal(s).astype(dtype) for s in [(m, n), (m, k), (k, n), (), (n,)]]
    fn = {md: bptt.function([z, x, y, a, b], outs, mode=md) for md in ("PY", "NUMBA")}
    with excluding(("gemm", "gemm_inplace", "scan_inner_gemm")):
        plain = bptt.function([z, x, y, a, b], outs, mode="NUMBA")
    assert "Gemm" not in ops(plain.fgraph) and "Gemm" in ops(fn["NUMBA"].fgraph)
    got = {md: f(*vals) for md, f in fn.items()}
    for r_py, r_nb, r_plain in zip(got["PY"], got["NUMBA"], plain(*vals)):
        assert_same(r_nb, r_py, scale=1 + k)
        assert_same(r_plain, r_py, scale=1 + k)


def test_no_gemm_that_would_copy_z_for_an_elementwise_reader():
    """``tanh(z + dot(x, y))`` with z an input stays dot + add, and the add joins the tanh
    loop (a Gemm would copy z first); with z computed here and read once, or the sum of the
    add's other terms (a new buffer), it is a Gemm in place; with no elementwise reader (an
    output) it is a Gemm whatever z is."""
    z, x, y, b = T.matrix("z"), T.matrix("x"), T.matrix("y"), T.vector("b")
    from bptt.tensor.math import add
    cases = {"input z, tanh reader": ([T.tanh(z + T.dot(x, y))], []),
             "two inputs, tanh reader": ([T.tanh(add(z, b, T.dot(x, y)))], [Gemm(True)]),
             "row z, tanh reader": ([T.tanh(T.dot(x, y) + b)], []),
             "z read twice, tanh reader": ([T.tanh(T.exp(z) + T.dot(x, y)), T.exp(z)], []),
             "fresh z, tanh reader": ([T.tanh(T.exp(z) + T.dot(x, y))], [Gemm(True)]),
             "input z, an output": ([z + T.dot(x, y)], [Gemm(False)])}
    for what, (outs, gemms) in cases.items():
        f = bptt.function([z, x, y, b], outs, mode="PY", on_unused_input="ignore")
        found = [n.op for n in f.fgraph.toposort() if isinstance(n.op, Gemm)]
        assert found == gemms, what
        if not gemms:
            dot = next(n for n in f.fgraph.toposort() if isinstance(n.op, Dot))
            (reader, _), = f.fgraph.clients[dot.outputs[0]]
            assert reader.outputs[0] is f.fgraph.outputs[0], what    # fused: one loop


@pytest.mark.parametrize("dtype", DTYPES)
@given(seed=st.integers(0, 2 ** 16), m=st.integers(1, 4), k=st.integers(0, 4),
       n=st.integers(1, 4), z_rows=st.sampled_from([1, None]))
def test_dot_added_in_the_elementwise_loop_matches_numpy(dtype, seed, m, k, n, z_rows):
    z, x, y = T.matrix("z", dtype=dtype), T.matrix("x", dtype=dtype), T.matrix("y", dtype=dtype)
    out = T.tanh(z + T.dot(x, y)) * 2
    rng = np.random.default_rng(seed)
    vals = [rng.standard_normal(s).astype(dtype) for s in [(z_rows or m, n), (m, k), (k, n)]]
    want = np.tanh(vals[0] + vals[1] @ vals[2]) * 2
    for mode in ("PY", "NUMBA"):
        f = bptt.function([z, x, y], out, mode=mode)
        assert not [nd for nd in f.fgraph.toposort() if isinstance(nd.op, Gemm)]
        assert_same(f(*vals), want.astype(dtype), scale=1 + k)


def test_compiled_graph_uses_gemm_in_place():
    z, x, y, b = T.matrix("z"), T.matrix("x"), T.matrix("y"), T.vector("b")
    f = bptt.function([z, x, y, b], T.exp(z) + T.dot(x, y) + T.dot(z, y) + b, mode="NUMBA")
    found = [n.op for n in f.fgraph.toposort() if isinstance(n.op, Gemm)]
    assert found and any(op.inplace for op in found)


# -- in place only when nothing else can see z -------------------------------------------

def test_inplace_never_on_inputs_or_values_with_other_readers():
    z, x, y = T.matrix("z"), T.matrix("x"), T.matrix("y")
    e = T.exp(z)
    s = bptt.shared(np.ones((2, 2)))     # an input of the compiled graph
    alloc = T.alloc(0.5, x.shape[0], y.shape[1])
    cases = {
        "input": [z + T.dot(x, y)],
        "other client": [e + T.dot(x, y), T.sum(e)],
        "graph output": [e + T.dot(x, y), e],
        "view of an input": [z.T + T.dot(x, y)],
        "constant": [T.constant(np.ones((2, 2))) + T.dot(x, y)],
        "fresh, one reader": [e + T.dot(x, y)],
        "alloc, one reader": [T.alloc(0.5, x.shape[0], y.shape[1]) + T.dot(x, y)],
        "alloc, other client": [alloc + T.dot(x, y), T.sum(alloc)],
        "shared": [s + T.dot(x, y)],
        # PY mode's one-input add returns its input itself: z, not a buffer of its own
        "input passed through": [T.add(z) + T.dot(x, y)],
        "join, one reader": [T.join(0, z, e) + T.dot(x, y)],
    }
    for what, outs in cases.items():
        fg = rewritten([z, x, y, s], outs)
        gemms = [n.op for n in fg.toposort() if isinstance(n.op, Gemm)]
        assert gemms, what
        assert any(op.inplace for op in gemms) == (what.endswith("one reader")), what


def test_inplace_other_reader_sees_the_old_z():
    z, x, y = T.matrix("z"), T.matrix("x"), T.matrix("y")
    e = T.exp(z)
    outs = [e + T.dot(x, y), e * 1.5, z + T.dot(y, x)]
    f = bptt.function([z, x, y], outs, mode="NUMBA")
    rng = np.random.default_rng(5)
    zv, xv, yv = (rng.standard_normal((3, 3)) for _ in range(3))
    zc = zv.copy()
    r = f(zv, xv, yv)
    assert_same(zv, zc)                                             # the input untouched
    assert_same(r[0], np.exp(zc) + xv @ yv, scale=3)
    assert_same(r[1], np.exp(zc) * 1.5)                             # the old exp(z)
    assert_same(r[2], zc + yv @ xv, scale=3)


def test_inplace_with_a_zero_scale_keeps_numpy_values(mode):
    # An in-place Gemm whose alpha is 0 at run time must not skip the product (BLAS
    # would not read x @ y): NaN in x still reaches the result, as in NumPy.
    z, x, y, a = T.matrix("z"), T.matrix("x"), T.matrix("y"), T.scalar("a")
    f = bptt.function([z, x, y, a], T.exp(z) + a * T.dot(x, y), mode=mode)
    assert [n.op.inplace for n in f.fgraph.toposort() if isinstance(n.op, Gemm)] == [True]
    rng = np.random.default_rng(3)
    zv, xv, yv = (rng.standard_normal(s) for s in [(2, 3), (2, 4), (4, 3)])
    xv[1, 2] = np.nan
    for av in (0.0, 2.0):
        with np.errstate(invalid="ignore"):
            expected = np.exp(zv) + av * (xv @ yv)
        assert_same(f(zv, xv, yv, np.asarray(av)), expected, scale=4)
    assert np.isnan(expected[1]).all()


def test_inplace_into_an_alloc_matches_numpy(mode):
    # z's shape, not provably the product's, keeps the allocs (a weight gradient's zeros are
    # W's shape). The second alloc is also returned: its gemm is not in place.
    x, y, w, z = T.matrix("x"), T.matrix("y"), T.matrix("w"), T.matrix("z")
    fill = T.alloc(0.5, z.shape[0], z.shape[1])
    f = bptt.function([x, y, w, z], [T.alloc(1.5, z.shape[0], z.shape[1]) + T.dot(x, y),
                                     fill + T.dot(x, w), fill], mode=mode)
    gemms = [n.op.inplace for n in f.fgraph.toposort() if isinstance(n.op, Gemm)]
    assert sorted(gemms) == [False, True]
    rng = np.random.default_rng(2)
    xv, yv, wv, zv = (rng.standard_normal(s) for s in [(3, 2), (2, 4), (2, 4), (3, 4)])
    r = f(xv, yv, wv, zv)
    assert_same(r[0], 1.5 + xv @ yv, scale=2)
    assert_same(r[1], 0.5 + xv @ wv, scale=2)
    assert_same(r[2], np.full((3, 4), 0.5))
    # z of one row: the allocs broadcast, so the in-place Gemm falls back to a fresh array
    r = f(xv, yv, wv, zv[:1])
    assert_same(r[0], 1.5 + xv @ yv, scale=2)
    assert_same(r[1], 0.5 + xv @ wv, scale=2)
    assert_same(r[2], np.full((1, 4), 0.5))


# -- gradients through graphs that get rewritten -----------------------------------------

def test_verify_grad_through_rewritten_graphs(mode):
    def fun(z, x, y, b):
        h = T.tanh(T.dot(x, y) + b)
        return T.exp(z) - T.dot(h, h.T) + 0.5 * T.dot(z, h.T)

    rng = np.random.default_rng(3)
    bptt.verify_grad(fun, [rng.standard_normal(s) for s in [(3, 3), (3, 2), (2, 3), (3,)]],
                     mode=mode)


def test_rnn_scan_gradient_with_gemm_in_steps():
    X, h0, W, U = T.tensor3("X"), T.matrix("h0"), T.matrix("W"), T.matrix("U")
    H, _ = bptt.scan(lambda x, h, U, W: T.tanh(T.dot(x, U) + T.dot(h, W)), sequences=X,
                     outputs_info=h0, non_sequences=[U, W])
    loss = 0.5 * T.sum(H ** 2)
    outs = [loss] + bptt.grad(loss, [U, W, h0])
    rng = np.random.default_rng(7)
    vals = [rng.standard_normal((5, 2, 3)), 0.1 * rng.standard_normal((2, 4)),
            rng.standard_normal((4, 4)) / 2, rng.standard_normal((3, 4)) / 2]
    ref = bptt.function([X, h0, W, U], outs, mode="PY")(*vals)
    f = bptt.function([X, h0, W, U], outs, mode="NUMBA")
    for got, want in zip(f(*vals), ref):
        assert_same(got, want, scale=10)
    # Each step multiplies by W through one Dot. The forward step's x @ U row is a sequence
    # row it cannot overwrite: a Gemm would copy it, so the tanh loop adds it instead (no
    # Gemm). The backward step's carried cotangent is dpre @ W.T alone (save-mem's pre-add
    # form: the loss row is added to it in the next step's elementwise loop). The products by
    # U run outside the steps (ProductRows, chunked sums), so the check is per step.
    scans = [n.op for n in f.fgraph.toposort() if isinstance(n.op, Scan)]
    assert len(scans) == 2
    for op in scans:
        inner = toposort(op.inner_outputs, blockers=op.inner_inputs)
        products = [n.op for n in inner if isinstance(n.op, (Gemm, Dot))]
        assert len(products) == 1 and isinstance(products[0], Dot), op.info.label
    forward = toposort(scans[0].inner_outputs, blockers=scans[0].inner_inputs)
    assert len(forward) == 2     # the Dot, and one elementwise loop: tanh(x_t @ U + h @ W)


# -- transpose_of_product: dot(x, y).T -> dot(y.T, x.T) ------------------------------------

def _transposes_of_products(f):
    return [n for n in f.fgraph.toposort() if type(n.op).__name__ == "DimShuffle"
            and n.inputs[0].owner is not None and isinstance(n.inputs[0].owner.op, Dot)]


def test_a_transposed_product_is_a_product_of_transposes():
    x, y, m = T.matrix("x"), T.matrix("y"), T.matrix("m")
    g = T.dot(x.T, y).T                     # the gradient of W in x @ W.T
    f = bptt.function([x, y, m], [m * 0.9 + g * 0.1], mode="PY")
    assert not _transposes_of_products(f)
    (product,) = [n for n in f.fgraph.toposort() if isinstance(n.op, (Dot, Gemm))]
    assert "x" in [v.name for v in product.inputs]   # dot(y.T, x) (in a Gemm): x as it is
    # read elsewhere too, the product is computed anyway and its transpose is a view
    kept = bptt.function([x, y], [T.dot(x, y).T, T.dot(x, y)], mode="PY")
    assert len(_transposes_of_products(kept)) == 1


@given(seed=st.integers(0, 2 ** 16), m=st.integers(0, 5), k=st.integers(0, 5),
       n=st.integers(0, 5))
@pytest.mark.parametrize("dtype", DTYPES)
def test_transposed_products_equal_the_graph_without_rewrites(mode, dtype, seed, m, k, n):
    x, y = T.matrix("x", dtype=dtype), T.matrix("y", dtype=dtype)
    v = T.vector("v", dtype=dtype)
    outs = [T.dot(x, y).T, T.dot(x, y).T * 2 + 1, T.dot(y.T, x.T).T, T.dot(T.dot(x, y).T, v)]
    key = ("transposed", mode, dtype)
    if key not in _COMPILED:
        with without_rewrites():
            reference = bptt.function([x, y, v], outs, mode="PY")
        _COMPILED[key] = reference, bptt.function([x, y, v], outs, mode=mode)
    reference, f = _COMPILED[key]
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(s).astype(dtype) for s in ((m, k), (k, n), (m,))]
    for got, want in zip(f(*args), reference(*args)):
        assert_same(got, want, scale=k + 1)
        assert got.flags.c_contiguous or got.ndim < 2 or 0 in got.shape or mode == "PY"


_COMPILED = {}
