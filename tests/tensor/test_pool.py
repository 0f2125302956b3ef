"""pool_2d: values against a NumPy loop over Theano's windows, gradients, ties, errors."""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.tensor.pool import MODES, pool_2d

from ..strategies import assert_same, check_rop, run


def _count(n, k, s, ignore_border):
    if ignore_border:
        return (n - k) // s + 1
    return (n - 1) // s + 1 if s >= k else max(0, (n - 1 - k + s) // s) + 1


def numpy_pool(x, ws, ignore_border, stride, pad, mode):
    """Each window of the zero-padded image, cut at the padded image's end; 'max', 'sum'
    and 'average_exc_pad' see only the image positions, 'average_inc_pad' divides by
    the cut window's size."""
    stride = stride or ws
    h, w = x.shape[-2:]
    hp, wp = h + 2 * pad[0], w + 2 * pad[1]
    oh, ow = _count(hp, ws[0], stride[0], ignore_border), _count(wp, ws[1], stride[1],
                                                               ignore_border)
    out = np.zeros(x.shape[:-2] + (oh, ow), dtype=x.dtype)
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * stride[0], j * stride[1]
            r1, c1 = min(r0 + ws[0], hp), min(c0 + ws[1], wp)
            win = x[..., max(r0, pad[0]) - pad[0]:min(r1, h + pad[0]) - pad[0],
                    max(c0, pad[1]) - pad[1]:min(c1, w + pad[1]) - pad[1]]
            if mode == "max":
                out[..., i, j] = win.max(axis=(-2, -1))
            elif mode == "sum":
                out[..., i, j] = win.sum(axis=(-2, -1))
            elif mode == "average_exc_pad":
                out[..., i, j] = win.mean(axis=(-2, -1))
            else:
                out[..., i, j] = win.sum(axis=(-2, -1)) / ((r1 - r0) * (c1 - c0))
    return out


@st.composite
def pool_cases(draw):
    ws = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    ignore_border = draw(st.booleans())
    stride = draw(st.one_of(st.none(), st.tuples(st.integers(1, 3), st.integers(1, 3))))
    pad = (draw(st.integers(0, ws[0] - 1)), draw(st.integers(0, ws[1] - 1))) \
        if ignore_border else (0, 0)
    lead = draw(st.lists(st.integers(1, 3), min_size=0, max_size=2))
    side = [draw(st.integers(max(1, k - 2 * p), 7)) for k, p in zip(ws, pad)]
    return dict(shape=tuple(lead + side), ws=ws, ignore_border=ignore_border, stride=stride,
                pad=pad, mode=draw(st.sampled_from(MODES)))


def _pool(x, case):
    return pool_2d(x, case["ws"], case["ignore_border"], case["stride"], case["pad"],
                   case["mode"])


@given(case=pool_cases(), seed=st.integers(0, 3))
def test_pool_2d_matches_a_numpy_loop(case, seed):
    xv = np.random.default_rng(seed).standard_normal(case["shape"])
    x = T.tensor("float64", (None,) * len(case["shape"]))
    (got,) = run([x], [_pool(x, case)], [xv], "PY")
    assert_same(got, numpy_pool(xv, case["ws"], case["ignore_border"], case["stride"],
                                case["pad"], case["mode"]), scale=10)


GEOMETRIES = [
    dict(ws=(3, 3), ignore_border=True, stride=(2, 1), pad=(1, 2)),
    dict(ws=(3, 2), ignore_border=False, stride=(1, 1), pad=(0, 0)),
    dict(ws=(2, 2), ignore_border=False, stride=None, pad=(0, 0)),
]
# Each mode twice, each geometry twice: the modes share the windows op, the geometries
# its arguments.
CASES = [dict(GEOMETRIES[g], mode=m) for g, m in
         [(0, "max"), (0, "average_exc_pad"), (1, "sum"), (1, "average_inc_pad"),
          (2, "max"), (2, "average_exc_pad"), (0, "average_inc_pad"), (2, "sum")]]


def test_pool_2d_and_its_gradient_agree_in_both_modes():
    """Every mode and geometry in one function (one compilation)."""
    x = T.tensor4("x")
    xv = np.random.default_rng(0).standard_normal((2, 3, 7, 5))
    outputs = []
    for case in CASES:
        y = _pool(x, case)
        outputs += [y, bptt.grad(T.sum(y ** 2), x)]
    py, nb = (run([x], outputs, [xv], m) for m in ("PY", "NUMBA"))
    for k, case in enumerate(CASES):
        want = numpy_pool(xv, case["ws"], case["ignore_border"], case["stride"], case["pad"],
                          case["mode"])
        assert_same(py[2 * k], want, scale=10, what=f"{case} in PY")
        assert_same(nb[2 * k], py[2 * k], scale=10, what=f"{case}")
        assert_same(nb[2 * k + 1], py[2 * k + 1], scale=10, what=f"gradient of {case}")


@pytest.mark.parametrize("mode_name", MODES)
def test_pool_2d_gradient_matches_finite_differences(mode_name):
    xv = np.random.default_rng(1).standard_normal((2, 2, 7, 5))
    for geometry in GEOMETRIES[:2]:
        bptt.verify_grad(lambda x: _pool(x, dict(geometry, mode=mode_name)), [xv], mode="PY",
                         rng=np.random.default_rng(2))


def test_pool_2d_gradient_matches_finite_differences_in_numba():
    xv = np.random.default_rng(1).standard_normal((2, 2, 7, 5))
    case = dict(GEOMETRIES[0], mode="average_exc_pad")
    bptt.verify_grad(lambda x: _pool(x, case), [xv], mode="NUMBA", rng=np.random.default_rng(2))


def test_pool_2d_forward_mode_agrees_with_reverse_mode():
    xv = np.random.default_rng(4).standard_normal((2, 2, 7, 5))
    check_rop(lambda x: [_pool(x, dict(GEOMETRIES[0], mode=m)) for m in MODES], [xv], "PY")


def test_max_pool_gradient_goes_to_every_tied_maximum(mode):
    """Theano's rule: each position equal to its window's max gets the window's gradient
    (overlapping windows add)."""
    x = T.matrix("x")
    xv = np.array([[1.0, 3.0, 3.0],
                   [3.0, 0.0, 2.0],
                   [0.0, 0.0, 2.0]])
    # Windows of 2 x 2 every step: maxima 3 (twice tied), 3 (tied), 3, and 2 (tied).
    y = pool_2d(x, (2, 2), ignore_border=True, stride=(1, 1))
    (g,) = run([x], [bptt.grad(T.sum(y * np.array([[1.0, 10.0], [100.0, 1000.0]])), x)],
               [xv], mode)
    assert_same(g, np.array([[0.0, 11.0, 10.0],
                             [101.0, 0.0, 1000.0],
                             [0.0, 0.0, 1000.0]]))


def test_pool_2d_static_shapes_and_leading_axes():
    y = pool_2d(T.tensor("float64", (5, 20, 24, 24)), (2, 2), ignore_border=True)
    assert y.type.shape == (5, 20, 12, 12)
    v = pool_2d(T.tensor("float32", (None, 7)), (2, 3), ignore_border=False)
    assert v.type.shape == (None, 3) and v.dtype == "float32"


def test_pool_2d_errors():
    x = T.tensor4("x")
    with pytest.raises(TypeError, match="at least 2 dimensions"):
        pool_2d(T.vector(), (2, 2), ignore_border=True)
    with pytest.raises(ValueError, match="mode must be one of"):
        pool_2d(x, (2, 2), ignore_border=True, mode="average")
    with pytest.raises(ValueError, match=r"padding \(1, 0\) needs ignore_border=True"):
        pool_2d(x, (2, 2), ignore_border=False, pad=(1, 0))
    with pytest.raises(ValueError, match=r"padding \(2, 0\) must be smaller than the window"):
        pool_2d(x, (2, 2), ignore_border=True, pad=(2, 0))
    with pytest.raises(ValueError, match="give ws= only"):
        pool_2d(x, ws=(2, 2), ds=(3, 3), ignore_border=True)
    with pytest.raises(ValueError, match="window size ws=.* is required"):
        pool_2d(x, ignore_border=True)
    with pytest.raises(ValueError, match="ws must be two ints >= 1"):
        pool_2d(x, (0, 2), ignore_border=True)
    with pytest.raises(ValueError, match="ws must be numbers known when the graph is built"):
        pool_2d(x, T.ivector(), ignore_border=True)   # Theano took symbolic sizes
    with pytest.raises(ValueError, match="stride must be numbers known when the graph is"):
        pool_2d(x, (2, 2), stride=(T.iscalar(), 2), ignore_border=True)
    with pytest.raises(ValueError, match="larger than the padded image: 1 x 4"):
        pool_2d(T.tensor("float64", (1, 1, 1, 4)), (2, 2), ignore_border=True)
    with pytest.warns(UserWarning, match="ignore_border not given"):
        pool_2d(x, (2, 2))


def test_theano_pool_names():
    import bptt.compat.theano as theano
    from bptt.compat.theano.tensor.signal import downsample, pool

    x = theano.tensor.tensor4("x")
    xv = np.random.default_rng(3).standard_normal((2, 2, 5, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tutorial = pool.pool_2d(input=x, ds=(2, 2), ignore_border=True)
        old = downsample.max_pool_2d(x, (2, 2), ignore_border=False, st=(1, 2))
    got = run([x], [tutorial, old], [xv], "PY")
    assert_same(got[0], numpy_pool(xv, (2, 2), True, None, (0, 0), "max"))
    assert_same(got[1], numpy_pool(xv, (2, 2), False, (1, 2), (0, 0), "max"))
    assert theano.tensor.signal.pool is pool
