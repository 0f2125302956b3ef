"""The loops of link/numba/patches_runtime.py, geometry as an argument, against the ops'
NumPy `perform` (bptt/tensor/patches.py): one compilation serves every geometry drawn."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bptt.link.numba.patches_runtime import patches, patches_adjoint
from bptt.tensor.patches import Patches, PatchesAdjoint, fill_value


@st.composite
def geometries(draw):
    window = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    pad = tuple(draw(st.integers(0, 2)) for _ in range(4))
    partial = draw(st.booleans())
    spans = [d * (k - 1) + 1 for k, d in zip(window, dilation)]
    h = draw(st.integers(max(1, spans[0] - pad[0] - pad[1]), 7))
    w = draw(st.integers(max(1, spans[1] - pad[2] - pad[3]), 7))
    return dict(window=window, stride=stride, dilation=dilation, pad=pad, partial=partial), h, w


def _as_argument(g):
    return tuple(np.int64(v) for v in g["window"] + g["stride"] + g["dilation"] + g["pad"]
                 + (int(g["partial"]),))


def _perform(op, *inputs):
    out = [[None]]
    op.perform(None, list(inputs), out)
    return out[0][0]


@given(case=geometries(), fill=st.sampled_from(["zero", "lowest"]), seed=st.integers(0, 3))
def test_patches_and_adjoint_match_perform(case, fill, seed):
    g, h, w = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 3, h, w))
    want = _perform(Patches(**g, fill=fill), x)
    got = patches(x, _as_argument(g), np.float64(fill_value(fill, "float64")))
    np.testing.assert_array_equal(got, want)
    windows = rng.standard_normal(want.shape)
    np.testing.assert_allclose(patches_adjoint(windows, h, w, _as_argument(g)),
                               _perform(PatchesAdjoint(**g), windows, h, w), rtol=1e-12)


def test_a_window_larger_than_the_image_raises():
    g = dict(window=(3, 3), stride=(1, 1), dilation=(1, 1), pad=(0, 0, 0, 0), partial=False)
    with pytest.raises(ValueError, match="larger than the padded image"):
        patches(np.ones((1, 1, 2, 5)), _as_argument(g), 0.0)
    with pytest.raises(ValueError, match="do not fit the image size"):
        patches_adjoint(np.ones((1, 2, 2, 1, 3, 3)), 3, 3, _as_argument(g))
