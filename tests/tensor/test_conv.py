"""T.nnet.conv2d: values against a direct NumPy loop, gradients, shapes, errors, compat.

NUMBA compiles a kernel per window geometry, so the NUMBA tests put several
geometries into one function; hypothesis draws geometries in PY mode.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.graph.traversal import toposort
from bptt.tensor.conv import conv2d
from bptt.tensor.patches import Patches

from ..strategies import assert_same, check_infer_shape, check_rop, run


def numpy_conv(x, w, pad, stride, dilation, flip):
    """out[b, o, i, j] = sum over c, p, q of w[o, c, p, q] * xpad[b, c, i*S + p*D, j*S + q*D]."""
    if flip:
        w = w[:, :, ::-1, ::-1]
    top, bottom, left, right = pad
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    (n_o, n_c, kh, kw), (sh, sw), (dh, dw) = w.shape, stride, dilation
    oh = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((x.shape[0], n_o, oh, ow), dtype=x.dtype)
    for b in range(x.shape[0]):
        for o in range(n_o):
            for i in range(oh):
                for j in range(ow):
                    acc = 0.0
                    for c in range(n_c):
                        for p in range(kh):
                            for q in range(kw):
                                acc += w[o, c, p, q] * xp[b, c, i * sh + p * dh, j * sw + q * dw]
                    out[b, o, i, j] = acc
    return out


def pads_of(border_mode, w_shape, dilation):
    spans = [d * (k - 1) + 1 for k, d in zip(w_shape[2:], dilation)]
    if border_mode == "valid":
        return (0, 0, 0, 0)
    if border_mode == "full":
        return (spans[0] - 1,) * 2 + (spans[1] - 1,) * 2
    if border_mode == "half":
        return (spans[0] // 2,) * 2 + (spans[1] // 2,) * 2
    if isinstance(border_mode, int):
        return (border_mode,) * 4
    return (border_mode[0],) * 2 + (border_mode[1],) * 2


@st.composite
def conv_cases(draw):
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    border = draw(st.sampled_from(["valid", "full", "half", 0, 1, 2, (0, 1), (2, 0)]))
    w_shape = (draw(st.integers(1, 3)), draw(st.integers(1, 3)), kh, kw)
    top, bottom, left, right = pads_of(border, w_shape, dilation)
    least = [max(1, d * (k - 1) + 1 - p) for k, d, p in zip((kh, kw), dilation,
                                                             (top + bottom, left + right))]
    x_shape = (draw(st.integers(1, 2)), w_shape[1],
               draw(st.integers(least[0], least[0] + 4)), draw(st.integers(least[1], least[1] + 4)))
    return dict(x_shape=x_shape, w_shape=w_shape, border_mode=border, subsample=stride,
                filter_dilation=dilation, filter_flip=draw(st.booleans()))


def _values(case, seed=0, dtype="float64"):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(case["x_shape"]).astype(dtype),
            rng.standard_normal(case["w_shape"]).astype(dtype))


def _expected(case, xv, wv):
    return numpy_conv(xv, wv, pads_of(case["border_mode"], case["w_shape"],
                                      case["filter_dilation"]),
                      case["subsample"], case["filter_dilation"], case["filter_flip"])


def _conv(x, w, case):
    return conv2d(x, w, filter_shape=case["w_shape"], border_mode=case["border_mode"],
                  subsample=case["subsample"], filter_flip=case["filter_flip"],
                  filter_dilation=case["filter_dilation"])


@given(case=conv_cases())
def test_conv2d_matches_a_numpy_loop(case):
    xv, wv = _values(case)
    x, w = T.tensor4("x"), T.tensor4("w")
    (got,) = run([x, w], [_conv(x, w, case)], [xv, wv], "PY")
    assert_same(got, _expected(case, xv, wv), scale=10)


NUMBA_CASES = [
    dict(x_shape=(2, 3, 7, 6), w_shape=(4, 3, 3, 2), border_mode=(1, 2), subsample=(2, 1),
         filter_dilation=(1, 2), filter_flip=True),
    dict(x_shape=(1, 2, 5, 5), w_shape=(3, 2, 2, 3), border_mode="full", subsample=(1, 1),
         filter_dilation=(1, 1), filter_flip=False),
    dict(x_shape=(2, 1, 6, 4), w_shape=(2, 1, 3, 3), border_mode="half", subsample=(1, 2),
         filter_dilation=(2, 1), filter_flip=True),
]


def test_conv2d_and_its_gradients_agree_in_both_modes():
    """Several geometries in one function (one compilation): values against NumPy,
    gradients PY against NUMBA."""
    inputs, outputs, values, want = [], [], [], []
    for k, case in enumerate(NUMBA_CASES):
        x, w = T.tensor4(), T.tensor4()
        xv, wv = _values(case, seed=k)
        y = _conv(x, w, case)
        inputs += [x, w]
        outputs += [y, *bptt.grad(T.sum(y ** 2), [x, w])]
        values += [xv, wv]
        want.append(_expected(case, xv, wv))
    py, nb = (run(inputs, outputs, values, m) for m in ("PY", "NUMBA"))
    for k in range(len(NUMBA_CASES)):
        assert_same(py[3 * k], want[k], scale=10, what=f"case {k} in PY")
        for j in range(3):
            assert_same(nb[3 * k + j], py[3 * k + j], scale=100, what=f"case {k} output {j}")


def test_conv2d_keeps_float32():
    case = NUMBA_CASES[1]
    x, w = T.tensor("float32", (None,) * 4), T.tensor("float32", (None,) * 4)
    xv, wv = _values(case, dtype="float32")
    y = _conv(x, w, case)
    assert y.dtype == "float32"
    got, g_w = run([x, w], [y, bptt.grad(T.sum(y), w)], [xv, wv], "PY")
    assert g_w.dtype == "float32"
    assert_same(got, _expected(case, xv.astype("float64"), wv.astype("float64"))
                .astype("float32"), scale=10)


@pytest.mark.parametrize("case", NUMBA_CASES[:2])
def test_conv2d_gradients_match_finite_differences(case):
    bptt.verify_grad(lambda x, w: _conv(x, w, case), list(_values(case)), mode="PY",
                     rng=np.random.default_rng(1))


def test_conv2d_gradients_match_finite_differences_in_numba():
    case = NUMBA_CASES[2]
    bptt.verify_grad(lambda x, w: _conv(x, w, case), list(_values(case)), mode="NUMBA",
                     rng=np.random.default_rng(1))


def test_conv2d_second_order_gradients():
    """The input gradient is PatchesAdjoint of a product: its own gradient is checked."""
    case = NUMBA_CASES[0]

    def g_x(x, w):
        y = _conv(x, w, case)
        return bptt.grad(T.sum(y ** 2), x)

    bptt.verify_grad(g_x, list(_values(case)), mode="PY", rng=np.random.default_rng(2))


def test_conv2d_forward_mode_agrees_with_reverse_mode():
    """Rop through Patches, and through PatchesAdjoint (in the input gradient)."""
    case = NUMBA_CASES[0]

    def both(x, w):
        y = _conv(x, w, case)
        return y, bptt.grad(T.sum(y ** 2), x)

    check_rop(both, list(_values(case)), "PY")


def test_conv2d_static_and_inferred_shapes():
    x = T.tensor("float64", (2, 3, 9, None))
    w = bptt.shared(np.zeros((4, 3, 3, 2)))
    y = conv2d(x, w, border_mode=(1, 0), subsample=(2, 1), filter_dilation=(1, 2))
    assert y.type.shape == (2, None, 5, None)
    assert conv2d(T.tensor("float64", (5, 1, 28, 28)), T.tensor4(),
                  filter_shape=(20, 1, 5, 5)).type.shape == (5, 20, 24, 24)
    (patches,) = [n for n in toposort([y]) if isinstance(n.op, Patches)]
    xv = np.ones((2, 3, 9, 7))
    assert run([x], [y], [xv], "PY")[0].shape == (2, 4, 5, 5)
    check_infer_shape(patches.outputs, [x], [xv], "PY")
    adjoint = bptt.grad(T.sum(patches.outputs[0]), x).owner
    check_infer_shape(adjoint.outputs, [x], [xv], "PY")


def test_conv2d_errors():
    x, w = T.tensor4("x"), T.tensor4("w")
    with pytest.raises(TypeError, match="input must be a 4-d tensor"):
        conv2d(T.matrix(), w, filter_shape=(1, 1, 2, 2))
    with pytest.raises(TypeError, match="filter must be a 4-d tensor"):
        conv2d(x, T.tensor3(), filter_shape=(1, 1, 2))
    with pytest.raises(ValueError, match=r"input has 3 channels \(shape \(2, 3, 5, 5\)\).*"
                                         r"filters expect 2 \(shape \(4, 2, 3, 3\)\)"):
        conv2d(x, w, input_shape=(2, 3, 5, 5), filter_shape=(4, 2, 3, 3))
    with pytest.raises(ValueError, match=r"window spans \(5, 5\).* larger than the padded image: 4 x 5"):
        conv2d(x, w, input_shape=(1, 1, 4, 5), filter_shape=(1, 1, 5, 5))
    with pytest.raises(TypeError, match="filter rows and cols must be known.*filter_shape="):
        conv2d(x, w)
    with pytest.raises(ValueError, match="border_mode must be 'valid', 'full'"):
        conv2d(x, w, filter_shape=(1, 1, 2, 2), border_mode="same")
    with pytest.raises(ValueError, match="subsample must be two positive ints"):
        conv2d(x, w, filter_shape=(1, 1, 2, 2), subsample=(0, 1))
    with pytest.raises(ValueError, match="filter_shape=.* does not match"):
        conv2d(x, T.tensor("float64", (3, 1, 2, 2)), filter_shape=(4, 1, 2, 2))


def test_conv2d_filter_larger_than_input_at_run_time(mode):
    x, w = T.tensor4("x"), T.tensor4("w")
    f = bptt.function([x, w], conv2d(x, w, filter_shape=(1, 1, 3, 3)), mode=mode)
    assert f(np.ones((1, 1, 3, 3)), np.ones((1, 1, 3, 3))).shape == (1, 1, 1, 1)
    with pytest.raises(ValueError, match="larger than the padded image"):
        f(np.ones((1, 1, 2, 5)), np.ones((1, 1, 3, 3)))


def test_conv2d_checks_shapes_at_run_time(mode):
    """What the types do not prove (the shape hints, the channels) is checked."""
    x, w = T.tensor4("x"), T.tensor4("w")
    y = conv2d(x, w, input_shape=(None, 2, 5, None), filter_shape=(3, None, 2, 2))
    assert y.type.shape == (None, 3, 4, None)
    f = bptt.function([x, w], y, mode=mode)
    assert f(np.ones((1, 2, 5, 4)), np.ones((3, 2, 2, 2))).shape == (1, 3, 4, 3)
    with pytest.raises(ValueError, match=r"^conv2d's input has shape \(1, 2, 6, 4\); its type "
                                         r"needs \(\?, 2, 5, \?\)"):
        f(np.ones((1, 2, 6, 4)), np.ones((3, 2, 2, 2)))
    g = bptt.function([x, w], conv2d(x, w, filter_shape=(3, None, 2, 2)), mode=mode)
    with pytest.raises(ValueError, match="input has 2 channels but the filters expect 1"):
        g(np.ones((1, 2, 5, 4)), np.ones((3, 1, 2, 2)))


def test_theano_conv2d_signatures():
    import bptt.compat.theano as theano

    x, w = theano.tensor.tensor4("x"), theano.tensor.tensor4("w")
    xv, wv = _values(dict(x_shape=(2, 2, 6, 5), w_shape=(3, 2, 3, 2)))
    new = theano.tensor.nnet.conv2d(x, w, image_shape=(2, 2, 6, 5), filter_shape=(3, 2, 3, 2))
    old = theano.tensor.nnet.conv.conv2d(x, w, image_shape=(2, 2, 6, 5),
                                         filter_shape=(3, 2, 3, 2), border_mode="full")
    got = run([x, w], [new, old], [xv, wv], "PY")
    assert_same(got[0], numpy_conv(xv, wv, (0,) * 4, (1, 1), (1, 1), True), scale=10)
    assert_same(got[1], numpy_conv(xv, wv, (2, 2, 1, 1), (1, 1), (1, 1), True), scale=10)
    with pytest.raises(ValueError, match="'valid' or 'full'"):
        theano.tensor.nnet.conv.conv2d(x, w, filter_shape=(3, 2, 3, 2), border_mode="half")
    with pytest.raises(NotImplementedError, match="num_groups=2"):
        theano.tensor.nnet.conv2d(x, w, filter_shape=(3, 2, 3, 2), num_groups=2)
