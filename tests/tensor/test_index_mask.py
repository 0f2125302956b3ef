"""Boolean-mask indexing: ``x[mask]``, ``set_subtensor(x[mask], y)`` and
``inc_subtensor(x[mask], y)`` against NumPy in both modes, for masks that are
tensors or NumPy arrays, alone or mixed with slices, integers, None and ``...``;
their gradients by finite differences; masks of the wrong shape.
"""
import functools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.tensor.subtensor import AdvancedSubtensor
from tests.conftest import MODES
from tests.strategies import assert_same, shapes

each_mode = pytest.mark.parametrize("mode", MODES)

# An index template for a 3-d x: "M<k>" is a k-d boolean mask (a function input),
# every other entry is taken as it is.
TEMPLATES = [
    ("M3",),                       # the full shape: a flat vector
    ("M1",),
    (slice(None), "M2"),
    ("M2", slice(1, None)),
    (Ellipsis, "M1"),
    ("M1", None, slice(None, None, -1)),
    (0, "M2"),                     # an integer next to a mask broadcasts with its vectors
    ("M1", slice(None), "M1"),     # two masks apart: their vectors go first
]


def _mask_axes(template):
    """The axes of a 3-d x each mask of `template` indexes."""
    width = [int(e[1]) if isinstance(e, str) else 0 if e is None or e is Ellipsis else 1
             for e in template]
    out, axis = [], 0
    for i, e in enumerate(template):
        if e is Ellipsis:
            axis = 3 - sum(width[i + 1:])
        if isinstance(e, str):
            out.append(tuple(range(axis, axis + width[i])))
        axis += width[i]
    return out


def _numpy_index(template, masks):
    it = iter(masks)
    return tuple(next(it) if isinstance(e, str) else e for e in template)


@functools.lru_cache(maxsize=None)
def _compiled(which, mode, region_ndim):
    template = TEMPLATES[which]    # slices are not hashable, so the cache keys on the position
    x, y = T.tensor("float64", (None,) * 3, name="x"), T.tensor("float64", (None,) * region_ndim)
    masks = [T.tensor("bool", (None,) * int(e[1])) for e in template if isinstance(e, str)]
    region = x[_numpy_index(template, masks)]
    assert isinstance(region.owner.op, AdvancedSubtensor)
    outs = [region, T.set_subtensor(region, y), T.inc_subtensor(region, y),
            T.set_subtensor(region, 0.5)]
    return bptt.function([x, y, *masks], outs, mode=mode)


@st.composite
def _mask(draw, shape):
    kind = draw(st.sampled_from(["any", "all", "none"]))
    if kind != "any":
        return np.full(shape, kind == "all")
    flat = draw(st.lists(st.booleans(), min_size=int(np.prod(shape)),
                         max_size=int(np.prod(shape))))
    return np.array(flat, bool).reshape(shape)


def _keep_first(mask, k):
    """`mask` with only its first `k` True entries."""
    out = mask.copy()
    out.flat[np.flatnonzero(mask)[k:]] = False
    return out


@each_mode
@pytest.mark.parametrize("template", TEMPLATES, ids=str)
@given(data=st.data())
def test_get_set_inc_with_masks_are_numpy_s(mode, template, data):
    # the integer 0 needs a first axis; the two masks must select as many entries
    x_shape = data.draw(shapes(ndim=3, min_side=1 if template[0] == 0 else 0))
    masks = [data.draw(_mask(tuple(x_shape[a] for a in axes))) for axes in _mask_axes(template)]
    if len(masks) == 2:
        k = min(m.sum() for m in masks)
        masks = [_keep_first(m, k) for m in masks]
    x = np.arange(np.prod(x_shape), dtype="float64").reshape(x_shape) - 3.0
    index = _numpy_index(template, masks)
    want = x[index]
    y = np.linspace(-1, 1, want.size).reshape(want.shape)
    got = _compiled(TEMPLATES.index(template), mode, want.ndim)(x, y, *masks)
    set_, inc, set_half = x.copy(), x.copy(), x.copy()
    set_[index], set_half[index] = y, 0.5
    inc[index] += y
    for g, w, what in zip(got, [want, set_, inc, set_half], ["get", "set", "inc", "set 0.5"]):
        assert_same(g, w, what=f"{what} {template}")


@each_mode
def test_numpy_and_python_masks_are_constant_index_vectors(mode):
    x = T.dmatrix("x")
    xv = np.arange(6.0).reshape(2, 3)
    col = np.array([True, False, True])
    outs = [x[:, col], x[[False, True]], x[np.ones((2, 3), bool)],
            x[:, T.as_tensor_variable(col)]]
    # the result's length is the mask's count, known when the graph is built
    assert [o.type.shape for o in outs] == [(None, 2), (1, None), (6,), (None, 2)]
    got = bptt.function([x], outs, mode=mode)(xv)
    for g, w in zip(got, [xv[:, col], xv[[False, True]], xv.ravel(), xv[:, col]]):
        assert_same(g, w)


def test_a_mask_of_the_full_shape_gives_a_flat_vector():
    x = T.tensor("float64", (None, None, None))
    assert (x > 0).ndim == 3 and x[x > 0].ndim == 1


@each_mode
def test_gradients_go_to_the_masked_entries(mode):
    rng = np.random.default_rng(0)
    m2, m1 = rng.random((3, 4)) > 0.5, np.array([True, False, True, True])

    def fun(x, y):
        mask = T.as_tensor_variable(np.where(m2, 1.0, -1.0)) > 0   # a symbolic mask
        return [x[mask] ** 2, x[:, m1] * 3, T.set_subtensor(x[mask], y[: int(m2.sum())]),
                T.inc_subtensor(x[1:, m1], y[:6].reshape((2, 3))) ** 2]

    pt = [rng.normal(size=(3, 4)), rng.normal(size=12)]
    bptt.verify_grad(fun, pt, mode=mode, rng=np.random.default_rng(1))


@each_mode
def test_gradient_of_a_masked_sum_is_the_mask(mode):
    x = T.dvector("x")
    g = bptt.function([x], bptt.grad(T.sum(x[x > 0] * 2), x), mode=mode)
    assert_same(g(np.array([1.0, -1.0, 0.0, 3.0])), np.array([2.0, 0.0, 0.0, 2.0]))


# -- masks of the wrong shape -----------------------------------------------------------

def test_a_mask_known_not_to_fit_fails_when_building():
    x = T.tensor("float64", (3, None))
    with pytest.raises(IndexError, match=r"boolean mask of shape \(2,\) does not match the "
                                         r"dimension 0 it indexes, of shape \(3,\)"):
        x[np.array([True, False])]
    with pytest.raises(IndexError, match=r"shape \(4, None\) does not match the dimensions "
                                         r"0, 1 it indexes, of shape \(3, None\)"):
        x[T.tensor("bool", (4, None))]
    with pytest.raises(IndexError, match="too many indices"):
        x[T.tensor("bool", (None,) * 3)]


@each_mode
def test_a_mask_of_the_wrong_shape_fails_when_run(mode):
    x, m = T.dtensor3("x"), T.tensor("bool", (None, None))
    f = bptt.function([x, m], [x[..., m], T.inc_subtensor(x[:, m], 1.0)], mode=mode)
    xv = np.zeros((2, 3, 4))
    assert [r.shape for r in f(xv, np.ones((3, 4), bool))] == [(2, 12), (2, 3, 4)]
    with pytest.raises(IndexError, match=r"boolean mask of shape \(3, 3\) does not match the "
                                         r"dimensions 1, 2 it indexes, of shape \(3, 4\)"):
        f(xv, np.ones((3, 3), bool))


@each_mode
def test_a_constant_mask_is_checked_against_x_when_run(mode):
    v = T.dvector("v")
    f = bptt.function([v], v[np.array([True, False, True])], mode=mode)
    assert_same(f(np.array([1.0, 2.0, 3.0])), np.array([1.0, 3.0]))
    with pytest.raises(IndexError, match=r"mask of shape \(3,\) does not match the dimension 0"
                                         r" it indexes, of shape \(4,\)"):
        f(np.zeros(4))


def test_a_boolean_scalar_is_refused_with_what_to_write():
    x = T.dmatrix("x")
    for index in [True, np.bool_(False), T.as_tensor_variable(np.bool_(True))]:
        with pytest.raises(IndexError, match=r"boolean scalar.*x\[None\]"):
            x[index]
