"""Indexing: getitem, set_subtensor, inc_subtensor against NumPy, their gradients and errors.

Index *structures* (which entries are ints, slices, arrays, None, ...) are
fixed per test case, and every index value is a function input, so one
compilation per structure and mode serves every example hypothesis draws
(shapes, index values, repeats, negative indices and steps).
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.grad import Rop
from bptt.graph.op import Op
import bptt.link.numba.dispatch  # noqa: F401  (registers the lowerings the tests look up)
from bptt.link.numba.linker import ModuleBuilder
from bptt.link.numba.registry import Kernel, numba_funcify
from bptt.tensor.shape import DimShuffle, shape as shape_of, shape_tuple
from bptt.tensor.subtensor import (AdvancedIncSubtensor, AdvancedSubtensor, IncSubtensor,
                                   InvalidIndexError, Subtensor)
from tests.conftest import MODES
from tests.strategies import assert_same, broadcastable_shapes, check_rop

#: hypothesis tests take the mode as a parameter (a fixture would be shared by examples)
each_mode = pytest.mark.parametrize("mode", MODES)

# -- index templates -----------------------------------------------------------------
#
# A template is a tuple of tokens; each token is one entry of the index:
#   "i"    a symbolic int32 scalar            "s"   slice(a, b, c), all symbolic
#   "s:"   slice(a, b)                         "sN"  slice(a, None, c)
#   "Ns"   slice(None, b, c)                   ":"   slice(None)
#   "::-1" slice(None, None, -1)               "A1"  a symbolic int64 vector
#   "A2"   a symbolic int32 matrix             "..." Ellipsis, None: np.newaxis

PARTS = {"i": ("idx",), "s": ("bound", "bound", "step"), "s:": ("bound", "bound"),
         "sN": ("bound", "step"), "Ns": ("bound", "step"), "A1": ("arr1",), "A2": ("arr2",)}


def compose(tokens, parts):
    """The Python index for `tokens`, taking its parts (symbols or values) from `parts`."""
    it = iter(parts)
    fixed = {":": slice(None), "::-1": slice(None, None, -1), "...": Ellipsis, None: None}
    out = []
    for t in tokens:
        if t in fixed:
            out.append(fixed[t])
        elif t in ("i", "A1", "A2"):
            out.append(next(it))
        elif t == "s":
            out.append(slice(next(it), next(it), next(it)))
        elif t == "s:":
            out.append(slice(next(it), next(it)))
        elif t == "sN":
            out.append(slice(next(it), None, next(it)))
        else:
            out.append(slice(None, next(it), next(it)))
    return tuple(out)


def part_kinds(tokens):
    return [k for t in tokens for k in PARTS.get(t, ())]


def symbols(tokens):
    make = {"idx": T.iscalar, "bound": T.lscalar, "step": T.lscalar, "arr1": T.lvector,
            "arr2": T.imatrix}
    return [make[k](f"{k}{n}") for n, k in enumerate(part_kinds(tokens))]


def dims_of(tokens, ndim):
    """For each token, the dimension of x it indexes (None for None and '...')."""
    consuming = [t for t in tokens if t not in (None, "...")]
    out, d = [], 0
    for t in tokens:
        if t is None:
            out.append(None)
        elif t == "...":
            out.append(None)
            d = ndim - (len(consuming) - sum(1 for o in out if o is not None))
        else:
            out.append(d)
            d += 1
    return out


@st.composite
def index_values(draw, tokens, ndim):
    """(x shape, index part values) for `tokens`: indices in bounds, arrays broadcastable."""
    dims = dims_of(tokens, ndim)
    needs_one = {d for t, d in zip(tokens, dims) if t in ("i", "A1", "A2")}
    shape = tuple(draw(st.integers(1 if d in needs_one else 0, 5)) for d in range(ndim))
    arr_ndims = [1 if t == "A1" else 2 for t in tokens if t in ("A1", "A2")]
    arr_shapes = iter(draw(broadcastable_shapes(arr_ndims, min_side=0, max_side=3)))
    values = []
    for t, d in zip(tokens, dims):
        n = shape[d] if d is not None else 0
        for kind in PARTS.get(t, ()):
            if kind == "idx":
                values.append(np.int32(draw(st.integers(-n, n - 1))))
            elif kind == "bound":
                values.append(np.int64(draw(st.integers(-n - 2, n + 2))))
            elif kind == "step":
                values.append(np.int64(draw(st.sampled_from([-3, -2, -1, 1, 2, 3]))))
            else:
                s = next(arr_shapes)
                flat = draw(st.lists(st.integers(-n, n - 1), min_size=int(np.prod(s)),
                                     max_size=int(np.prod(s))))
                values.append(np.asarray(flat, dtype="int64" if kind == "arr1" else "int32")
                              .reshape(s))
    return shape, values


def x_value(shape, dtype="float64"):
    """Distinct values, so that reading a wrong element is always visible."""
    return (np.arange(int(np.prod(shape))).reshape(shape) * 1.5 - 7).astype(dtype)


_compiled = {}


def compiled(key, mode, build):
    """`build()` -> (inputs, outputs), compiled once per key and mode."""
    if (key, mode) not in _compiled:
        inputs, outputs = build()
        _compiled[key, mode] = bptt.function(inputs, outputs, mode=mode, on_unused_input="ignore")
    return _compiled[key, mode]


BASIC = [
    (1, ("i",)), (1, ("s",)), (1, ("sN",)), (1, ("Ns",)), (1, ("::-1",)),
    (2, ("i", "s")), (2, ("s", "i")), (2, ("s", "s:")), (2, (None, "s", None)),
    (2, ("...", "i")), (3, ("s", "...", "sN")), (3, ("i", None, ":", "Ns")),
]
ADVANCED = [
    (1, ("A1",)), (2, ("A1",)), (2, (":", "A1")), (2, ("A1", "A1")), (2, ("A2", None)),
    (3, ("A1", ":", "A2")),          # separated by a slice: broadcast dimensions go first
    (3, (":", "A2", "A1")),          # adjacent: they stay in place
    (2, ("i", "A1")),                # an integer counts as an advanced index
    (3, ("A1", "s", "i")),
    (3, (None, "A1", "...", "A1")),
]


def _ids(cases):
    return [f"{nd}d[{','.join(map(str, toks))}]" for nd, toks in cases]


# -- reading -----------------------------------------------------------------------------

@each_mode
@pytest.mark.parametrize("ndim, tokens", BASIC + ADVANCED, ids=_ids(BASIC + ADVANCED))
@given(data=st.data())
def test_getitem_matches_numpy(mode, ndim, tokens, data):
    def build():
        x = T.tensor("float64", (None,) * ndim, name="x")
        syms = symbols(tokens)
        return [x, *syms], x[compose(tokens, syms)]

    f = compiled(("get", ndim, tokens), mode, build)
    shape, values = data.draw(index_values(tokens, ndim))
    x = x_value(shape)
    assert_same(f(x, *values), x[compose(tokens, values)])


@each_mode
@given(data=st.data())
def test_getitem_of_int_tensor_keeps_dtype(mode, data):
    def build():
        x, i, v = T.tensor("int16", (None, None), name="x"), T.bscalar("i"), T.bvector("v")
        return [x, i, v], [x[i, ::-1], x[i, v], x[i, 0]]

    f = compiled("int16", mode, build)
    shape, (i, v) = data.draw(index_values(("i", "A1"), 2))
    x = x_value(shape, "int16")
    i, v = np.int8(i), v.astype("int8")
    for got, want in zip(f(x, i, v), [x[i, ::-1], x[i, v], x[i, 0]]):
        assert_same(got, want)


@each_mode
def test_constant_indices(mode):
    """Indices known when the graph is built are baked into the op."""
    x = T.dmatrix("x")
    xv = x_value((4, 3))
    cases = [(1,), (-1,), (slice(1, None),), (slice(None, None, -1), 0), (Ellipsis, -2),
             (slice(None), None, slice(-2, None)), ([0, -1, 0],), (slice(None), [2, 2]),
             (np.array([[1], [3]]), np.array([0, 2])), ()]
    f = bptt.function([x], [x[c] for c in cases], mode=mode)
    for got, c in zip(f(xv), cases):
        assert_same(got, xv[c], what=repr(c))


@each_mode
def test_a_list_holding_a_slice_indexes_as_its_tuple(mode):
    """Theano's (and NumPy < 1.23's) reading, which Lasagne's cropping relies on; a list
    of integers stays an integer-array index."""
    x, k = T.dmatrix("x"), T.lscalar("k")
    xv = x_value((4, 3))
    outs = [x[[slice(None), slice(-2, None)]], x[[slice(1, k), 0]], x[[0, -1, 0]]]
    got = bptt.function([x, k], outs, mode=mode)(xv, 3)
    for g, want in zip(got, [xv[:, -2:], xv[1:3, 0], xv[[0, -1, 0]]]):
        assert_same(g, want)


@each_mode
def test_scan_style_symbolic_slices(mode):
    u, k, n = T.dmatrix("u"), T.lscalar("k"), T.lscalar("n")
    f = bptt.function([u, k, n], [u[4:], u[k:n + k], u[-1], u[k:n + k][::-1], u[::-1][k]],
                      mode=mode)
    uv = x_value((7, 2))
    for kv, nv in [(0, 3), (2, 5), (6, 1), (3, 0)]:
        want = [uv[4:], uv[kv:nv + kv], uv[-1], uv[kv:nv + kv][::-1], uv[::-1][kv]]
        for got, w in zip(f(uv, kv, nv), want):
            assert_same(got, w)


# -- writing -----------------------------------------------------------------------------

WRITES = [(1, ("i",)), (2, ("s", "i")), (2, (None, "s")), (3, ("sN", "...", "Ns")),
          (1, ("A1",)), (2, (":", "A1")), (2, ("A1", "A1")), (3, ("A1", ":", "A2")),
          (2, ("i", "A1")), (2, ("A2", None))]


def _values_shape(draw, region, ndim):
    """A shape of `ndim` dims that broadcasts to the trailing dims of `region`."""
    tail = region[len(region) - ndim:] if ndim else ()
    return tuple(1 if draw(st.booleans()) else s for s in tail)


def _numpy_write(x, idx, y, kind):
    out = x.copy()
    if kind == "set":
        out[idx] = y
    else:
        np.add.at(out, idx, y)
    return out


def _region_ndim(ndim, tokens):
    x = T.tensor("float64", (None,) * ndim)
    return x[compose(tokens, symbols(tokens))].ndim


@each_mode
@pytest.mark.parametrize("ndim, tokens", WRITES, ids=_ids(WRITES))
@given(data=st.data())
def test_set_inc_match_numpy(mode, ndim, tokens, data):
    """y broadcast into the region; repeated indices: inc accumulates, set keeps the last.

    ``set`` gets values with the region's dimensions, ``inc`` one dimension fewer.
    """
    region_ndim = _region_ndim(ndim, tokens)
    y_ndims = {"set": region_ndim, "inc": max(region_ndim - 1, 0)}

    def build():
        x = T.tensor("float64", (None,) * ndim, name="x")
        ys = [T.tensor("float64", (None,) * y_ndims[k], name=f"y_{k}") for k in ("set", "inc")]
        syms = symbols(tokens)
        region = x[compose(tokens, syms)]
        return [x, *ys, *syms], [T.set_subtensor(region, ys[0]), T.inc_subtensor(region, ys[1])]

    f = compiled(("write", ndim, tokens), mode, build)
    shape, values = data.draw(index_values(tokens, ndim))
    x = x_value(shape)
    idx = compose(tokens, values)
    rng = np.random.default_rng(len(values))
    ys = {k: rng.standard_normal(_values_shape(data.draw, x[idx].shape, n)).round(2)
          for k, n in y_ndims.items()}
    got_set, got_inc = f(x, ys["set"], ys["inc"], *values)
    assert_same(got_set, _numpy_write(x, idx, ys["set"], "set"), what="set")
    assert_same(got_inc, _numpy_write(x, idx, ys["inc"], "inc"), what="inc")


@each_mode
def test_writes_do_not_modify_their_input(mode):
    x, i, v = T.dvector("x"), T.lscalar("i"), T.lvector("v")
    outs = [T.set_subtensor(x[i], 5.0), T.inc_subtensor(x[v], 1.0), x[i:], x * 1]
    f = bptt.function([x, i, v], outs, mode=mode)
    xv = np.arange(4.0)
    got = f(xv, 1, np.array([0, 0]))
    np.testing.assert_array_equal(xv, np.arange(4.0))
    assert_same(got[0], [0.0, 5.0, 2.0, 3.0])
    assert_same(got[1], [2.0, 1.0, 2.0, 3.0])
    assert_same(got[3], np.arange(4.0))


@each_mode
def test_write_casts_values_that_lose_nothing(mode):
    x = T.fvector("x")
    y8, yi = T.tensor("int8", (None,)), T.iscalar("yi")
    f = bptt.function([x, y8, yi], [T.set_subtensor(x[:2], y8), T.inc_subtensor(x[1], 2),
                                    T.inc_subtensor(x[0], yi.astype("int16"))], mode=mode)
    got = f(np.ones(3, "float32"), np.array([4, 5], "int8"), 3)
    assert_same(got[0], np.array([4, 5, 1], "float32"))
    assert_same(got[1], np.array([1, 3, 1], "float32"))
    assert_same(got[2], np.array([4, 1, 1], "float32"))


@each_mode
def test_write_through_new_axes(mode):
    x, y = T.dmatrix("x"), T.dmatrix("y")
    f = bptt.function([x, y], [T.set_subtensor(x[None, 1:], y),
                               T.inc_subtensor(x[:, None, 0], y[:, :1])], mode=mode)
    xv, yv = x_value((3, 2)), np.array([[10.0, 20.0]])
    got = f(xv, yv)
    want0 = xv.copy()
    want0[None, 1:] = yv
    want1 = xv.copy()
    want1[:, None, 0] += yv[:, :1]
    assert_same(got[0], want0)
    assert_same(got[1], want1)


# -- gradients ---------------------------------------------------------------------------

def _sum_to(g, shape):
    g = g.sum(axis=tuple(range(g.ndim - len(shape))))
    axes = tuple(i for i, s in enumerate(shape) if s == 1 and g.shape[i] != 1)
    return g.sum(axis=axes, keepdims=True) if axes else g


def _kept(x, idx, region_shape):
    """NumPy: which elements of a `set` region were written last (survive)."""
    ids = np.arange(int(np.prod(region_shape))).reshape(region_shape)
    board = np.full(x.shape, -1)
    board[idx] = ids
    return board[idx] == ids


GRADS = [(2, ("s", "i")), (3, ("A1", ":", "A2")), (2, (None, "s:"))]


@each_mode
@pytest.mark.parametrize("ndim, tokens", GRADS, ids=_ids(GRADS))
@given(data=st.data())
def test_gradients_match_numpy(mode, ndim, tokens, data):
    """d sum(w * out) for getitem, set and inc, with respect to x and y."""
    def build():
        x = T.tensor("float64", (None,) * ndim, name="x")
        syms = symbols(tokens)
        region = x[compose(tokens, syms)]
        y = T.tensor("float64", (None,) * region.ndim, name="y")
        ws = [T.tensor("float64", (None,) * n) for n in (region.ndim, ndim, ndim)]
        outs = [region, T.set_subtensor(region, y), T.inc_subtensor(region, y)]
        costs = [(o * w).sum() for o, w in zip(outs, ws)]
        grads = [bptt.grad(costs[0], x)] + bptt.grad(costs[1], [x, y]) \
            + bptt.grad(costs[2], [x, y])
        return [x, y, *ws, *syms], grads

    f = compiled(("grad", ndim, tokens), mode, build)
    shape, values = data.draw(index_values(tokens, ndim))
    x = x_value(shape)
    idx = compose(tokens, values)
    region = x[idx].shape
    y = np.ones(_values_shape(data.draw, region, len(region)))
    rng = np.random.default_rng(0)
    w_get, w_set, w_inc = (rng.standard_normal(s).round(2) for s in (region, shape, shape))
    g_get = np.zeros(shape)
    np.add.at(g_get, idx, w_get)
    gx_set = w_set.copy()
    gx_set[idx] = 0
    gy_set = _sum_to(w_set[idx] * _kept(x, idx, region), y.shape)
    want = [g_get, gx_set, gy_set, w_inc, _sum_to(w_inc[idx], y.shape)]
    for k, (got, w) in enumerate(zip(f(x, y, w_get, w_set, w_inc, *values), want)):
        assert_same(got, w, scale=10, what=f"gradient {k}")


def _reads(x):
    return [x[1:, ::-1] * x[0], x[[0, 2, 0, -1]] ** 2, x[:, [1, 1, -1]], x[None, -1]]


def _writes(x, y):
    """`y` is (3, 2); `x` is (4, 2)."""
    return [T.set_subtensor(x[[0, 0, 2]], y) ** 2,             # repeats: the last write wins
            T.inc_subtensor(x[[0, 0, -1], 1], y[:, 0]) ** 2,    # repeats accumulate
            T.set_subtensor(x[1:3, 0], y[0, :1]) * x,           # y broadcasts
            T.inc_subtensor(x[::2], y[1]) ** 2]


WRITE_POINT = [x_value((4, 2)) / 7, np.arange(6.0).reshape(3, 2) / 5 - 0.4]


def _reads_and_writes(x, y):
    return _reads(x) + _writes(x, y)


@each_mode
def test_verify_grad(mode):
    bptt.verify_grad(_reads_and_writes, WRITE_POINT, mode=mode, rng=np.random.default_rng(1))


@each_mode
def test_rop_agrees_with_lop(mode):
    check_rop(_reads_and_writes, WRITE_POINT, mode)


def test_rop_of_getitem_is_getitem_of_tangent():
    x, v, ev = T.dmatrix("x"), T.lvector("v"), T.dmatrix("ev")
    out = Rop(x[v, ::-1], x, ev)
    f = bptt.function([x, v, ev], out, mode="PY", on_unused_input="ignore")
    evv = x_value((3, 2))
    assert_same(f(np.zeros((3, 2)), np.array([2, 0, 2]), evv), evv[[2, 0, 2], ::-1])


def test_index_inputs_get_no_gradient():
    x, i = T.dvector("x"), T.lscalar("i")
    node = x[i].owner
    assert node.op.connection_pattern(node) == [[True], [False]]
    node = T.inc_subtensor(x[i:], 1.0).owner
    assert node.op.connection_pattern(node) == [[True], [True], [False]]


# -- shapes ------------------------------------------------------------------------------

def test_static_shapes():
    x = T.tensor("float64", (5, 3))
    i, v = T.lscalar(), T.tensor("int64", (4,))
    assert x[1:4].type.shape == (3, 3)
    assert x[::-2].type.shape == (3, 3)
    assert x[-10:].type.shape == (5, 3)
    assert x[0].type.shape == (3,)
    assert x[i].type.shape == (3,)
    assert x[i:].type.shape == (None, 3)
    assert x[None, :, None].type.shape == (1, 5, 1, 3)
    assert x[v].type.shape == (4, 3)
    assert x[:, v].type.shape == (5, 4)
    assert x[[[0], [1]], [0, 1, 2]].type.shape == (2, 3)
    assert x[v, None, 0].type.shape == (4, 1)
    assert T.set_subtensor(x[v], 0.0).type.shape == (5, 3)


@each_mode
@pytest.mark.parametrize("ndim, tokens", [(1, ("s",)), (2, ("Ns", "sN")), (3, ("A1", "s", "i")),
                                          (2, (None, "A2", "::-1")), (2, ("s:", "::-1"))])
@given(data=st.data())
def test_infer_shape(mode, ndim, tokens, data):
    def build():
        x = T.tensor("float64", (None,) * ndim, name="x")
        syms = symbols(tokens)
        out = x[compose(tokens, syms)]
        node = out.owner.inputs[0].owner if isinstance(out.owner.op, DimShuffle) else out.owner
        shape = node.op.infer_shape(None, node, [shape_tuple(v) for v in node.inputs])[0]
        return [x, *syms], [shape_of(node.outputs[0]), T.stack(list(shape))]

    f = compiled(("shape", ndim, tokens), mode, build)
    shape, values = data.draw(index_values(tokens, ndim))
    actual, inferred = f(x_value(shape), *values)
    assert_same(inferred, actual)


def test_unit_step_slice_lengths_need_no_division():
    # x[a:b] and x[b:a:-1]: the length is max(stop - start, 0) of the clipped bounds; the
    # general (stop - start + step - 1) // step costs every compiled shape program its ops
    from bptt.graph.traversal import ancestors
    from bptt.tensor.elemwise import Elemwise
    from bptt.tensor.scalar_ops import IntDiv

    x, a, b = T.matrix("x"), T.lscalar("a"), T.lscalar("b")
    for out in (x[a:b], x[b:a:-1], x[::-1]):
        node = out.owner
        shape = node.op.infer_shape(None, node, [shape_tuple(v) for v in node.inputs])[0]
        nodes = {v.owner for v in ancestors(list(shape)) if v.owner is not None}
        assert not any(isinstance(n.op, Elemwise) and isinstance(n.op.scalar_op, IntDiv)
                       for n in nodes)



@each_mode
@pytest.mark.parametrize("dtype", ["int32", "uint8", "bool", "float32"])
def test_writes_of_every_dtype(mode, dtype):
    """Strided, reversed, broadcast and scalar values written into 3-d integer, bool and
    float tensors (NumPy's bool += is a logical or)."""
    x, y = T.tensor(dtype, (None,) * 3, name="x"), T.tensor(dtype, (None, 1), name="y")
    s = T.tensor(dtype, (), name="s")
    f = bptt.function([x, y, s], [T.inc_subtensor(x[1, ::-2], y), T.set_subtensor(x[1, 2:4, 1:], y),
                                  T.inc_subtensor(x[::2, :0], s), T.inc_subtensor(x[:, -1], s),
                                  T.set_subtensor(x[0, 1, 2], s)], mode=mode)
    xv = (np.arange(60).reshape(3, 4, 5) % 3).astype(dtype)
    yv, sv = np.array([[1], [0]], dtype), np.array(1, dtype)
    want = [xv.copy() for _ in range(5)]
    want[0][1, ::-2] += yv
    want[1][1, 2:4, 1:] = yv
    want[2][::2, :0] += sv
    want[3][:, -1] += sv
    want[4][0, 1, 2] = sv
    for got, w in zip(f(xv, yv, sv), want):
        assert_same(got, w)

# -- lowering ----------------------------------------------------------------------------

def test_basic_indexing_lowers_to_an_inline_view():
    x, i, n = T.dmatrix("x"), T.lscalar("i"), T.lscalar("n")
    ctx = ModuleBuilder()
    for out in (x[1:n:-1], x[i, ::2], x[-1]):
        low = numba_funcify(out.owner.op, out.owner, ctx)
        assert isinstance(low, str) and low.startswith("{0}["), low
    out = x[:, [0, 1]]
    assert isinstance(numba_funcify(out.owner.op, out.owner, ctx), Kernel)


def test_rows_indexing_lowers_to_a_runtime_call():
    """``x[idx]`` and its writes call region_runtime.py's row helpers; other advanced
    indices (two arrays, an array on another axis) keep a kernel."""
    x, y, idx, v = T.dtensor3("x"), T.dmatrix("y"), T.lvector("idx"), T.dvector("v")
    ctx = ModuleBuilder()
    for out, call in ((x[idx], "take_rows_call("), (x[idx, :], "take_rows_call("),
                      (T.inc_subtensor(x[idx], y), "write_rows_call("),
                      (T.set_subtensor(x[idx], 1.0), "write_rows_call("),
                      (T.inc_subtensor(v[idx], 1.0), "write_rows_call("),
                      (x[T.lmatrix("m")], "take_rows_call("),
                      (T.inc_subtensor(v[T.lmatrix("m")], y), "write_rows_call(")):
        low = numba_funcify(out.owner.op, out.owner, ctx)
        assert isinstance(low, str) and call in low, low
    for out in (x[:, idx], x[idx, idx], T.inc_subtensor(x[:, idx], y)):
        assert isinstance(numba_funcify(out.owner.op, out.owner, ctx), Kernel)


def test_basic_writes_lower_to_a_view_and_a_runtime_call():
    """Not a kernel per op: each one is a numba compilation (benchmarks/notes.md)."""
    x, y, i = T.dmatrix("x"), T.dmatrix("y"), T.lscalar("i")
    ctx = ModuleBuilder()
    for out, call in ((T.set_subtensor(x[1:i], y), "copy_into_call("),
                      (T.inc_subtensor(x[::-1], y[0]), "add_into_call("),
                      (T.inc_subtensor(x[i], 1.0), "add_into("),
                      (T.set_subtensor(x[0, i], 1.0), "] = {1}")):
        low = numba_funcify(out.owner.op, out.owner, ctx)
        assert isinstance(low, str) and call in low, low


@pytest.mark.parametrize("cls", [Subtensor, AdvancedSubtensor, IncSubtensor,
                                 AdvancedIncSubtensor])
def test_every_op_has_perform_and_lowering(cls):
    assert cls.perform is not Op.perform
    assert numba_funcify.lookup(cls((0,))) is not None


def test_ops_print_their_index():
    x, i, v = T.dmatrix("x"), T.lscalar("i"), T.lvector("v")
    assert str(x[i, 1::-1].owner.op) == "Subtensor{?, 1::-1}"
    assert str(x[v, ..., None].owner.op) == "AdvancedSubtensor{[?], ..., None}"
    assert str(T.set_subtensor(x[v], 0.0).owner.op) == "AdvancedSetSubtensor{[?]}"
    assert str(T.inc_subtensor(x[:i], 0.0).owner.op) == "IncSubtensor{:?}"


# -- errors ------------------------------------------------------------------------------

@pytest.mark.parametrize("index, match", [
    (1.0, "valid indices"), (np.float32(2), "valid indices"), (slice(0.5, 2), "valid indices"),
    (np.array([1.0, 2.0]), "dtype float64"), ("a", "valid indices"),
    (True, "boolean scalar"), (np.bool_(False), "boolean scalar"),
    ((0, 0, 0), "too many indices"), ((Ellipsis, 0, Ellipsis), "single ellipsis"),
])
def test_invalid_index_is_rejected_when_building(index, match):
    x = T.dmatrix("x")
    with pytest.raises(InvalidIndexError, match=match) as info:
        x[index]
    assert isinstance(info.value, IndexError) and isinstance(info.value, TypeError)


def test_invalid_symbolic_indices_are_rejected():
    x = T.dmatrix("x")
    with pytest.raises(IndexError, match="dtype float64"):
        x[T.dscalar()]
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        x[::0]


def test_constant_out_of_bounds_with_static_shape_fails_early():
    x = T.tensor("float64", (3, 2))
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        x[3]
    with pytest.raises(IndexError, match="index -3 is out of bounds for axis 1 with size 2"):
        x[:, -3]


def test_bad_writes_are_rejected_when_building():
    x = T.dmatrix("x")
    with pytest.raises(TypeError, match="must be the result of indexing"):
        T.set_subtensor(x, 1.0)
    with pytest.raises(ValueError, match="more than the 1 of the indexed region"):
        T.inc_subtensor(x[0], T.dmatrix())
    with pytest.raises(TypeError, match="losing information"):
        T.set_subtensor(T.imatrix()[0], T.dvector())
    with pytest.raises(ValueError, match="cannot be broadcast"):
        T.set_subtensor(T.tensor("float64", (3, 4))[0], T.tensor("float64", (3,)))


#: name -> (build(x, i, v), (i, v) that fail, exception, message). Every case reads its
#: own inputs in one compiled function; the other cases get values that work (i=0, v=[0]).
RUNTIME_ERRORS = {
    "int": (lambda x, i, v: x[i], (7, [0]), IndexError, "out of bounds for axis 0"),
    "negative": (lambda x, i, v: x[i], (-4, [0]), IndexError, "out of bounds for axis 0"),
    "second_axis": (lambda x, i, v: x[1, i], (-3, [0]), IndexError, "out of bounds for axis 1"),
    "array": (lambda x, i, v: x[v], (0, [0, 3]), IndexError, "out of bounds for axis 0"),
    "array_column": (lambda x, i, v: x[:, v], (0, [-3]), IndexError, "out of bounds for axis 1"),
    "set": (lambda x, i, v: T.set_subtensor(x[i], 1.0), (3, [0]), IndexError,
            "out of bounds for axis 0"),
    "inc_array": (lambda x, i, v: T.inc_subtensor(x[i, v], 1.0), (0, [2]), IndexError,
                  "out of bounds for axis 1"),
    "step_zero": (lambda x, i, v: x[::i + 1], (-1, [0]), ValueError,
                  "slice step cannot be zero"),
    "broadcast": (lambda x, i, v: x[v, v[:i + 1]], (1, [0, 1, 2]), IndexError,
                  "shape mismatch"),
    "values_shape": (lambda x, i, v: T.set_subtensor(x[0], x[v, 0]), (0, [0, 1, 2]),
                     ValueError, "shape mismatch"),
    "values_shape_inc": (lambda x, i, v: T.inc_subtensor(x[v], x[:i + 1]), (1, [0, 1, 2]),
                         ValueError, "shape mismatch"),
}
ERROR_CASES = sorted(RUNTIME_ERRORS)


def _all_errors():
    x = T.dmatrix("x")
    inputs, outputs = [x], []
    for case in ERROR_CASES:
        i, v = T.lscalar(f"i_{case}"), T.lvector(f"v_{case}")
        inputs += [i, v]
        outputs.append(RUNTIME_ERRORS[case][0](x, i, v))
    return inputs, outputs


@each_mode
@pytest.mark.parametrize("case", ERROR_CASES)
def test_runtime_index_errors(mode, case):
    """Both modes raise (numba never reads or writes out of bounds)."""
    f = compiled("errors", mode, _all_errors)
    values = []
    for other in ERROR_CASES:
        i, v = RUNTIME_ERRORS[other][1] if other == case else (0, [0])
        values += [i, np.array(v)]
    _, _, exc, match = RUNTIME_ERRORS[case]
    with pytest.raises(exc, match=match):
        f(x_value((3, 2)), *values)


def test_runtime_error_cases_work_with_good_values():
    f = compiled("errors", "PY", _all_errors)
    f(x_value((3, 2)), *[np.array(v) for _ in ERROR_CASES for v in (0, [0])])
