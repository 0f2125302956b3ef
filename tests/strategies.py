"""Reusable hypothesis strategies and oracles for bptt tests.

Strategies
----------
`shapes`, `broadcastable_shapes` (shapes of fixed ndims that broadcast
together, size-1 dimensions chosen at random), `elements` and `arrays`
(values of a dtype inside a named domain, see `DOMAINS`), `dtypes`.

Graphs in tests should have fixed ndims and dtypes but unknown static shapes
(``T.tensor(dtype, shape=(None,) * ndim)``): the generated numba code depends
only on dtypes and ndims, so one compilation serves every example hypothesis
draws, while run-time sizes (1 included, which then broadcasts) vary freely.

Oracles
-------
`assert_same` (value, dtype and shape, with a rounding tolerance for floats),
`run` (compile and call a graph), `check_rop` (forward mode against the
reverse mode: ``<Rop(v), u> == <v, Lop(u)>``).
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

FLOAT_DTYPES = ("float32", "float64")
INT_DTYPES = ("int8", "int16", "int32", "int64")
UINT_DTYPES = ("uint8", "uint16", "uint32", "uint64")
ALL_DTYPES = ("bool",) + INT_DTYPES + UINT_DTYPES + FLOAT_DTYPES

#: domain name -> (low, high) for floats; integers use the rounded bounds.
#: "grid" and "offgrid" are multiples of 1/4 (offgrid shifted by 1/8): values
#: from the two never tie, and ties within one are 1/4 apart or exact, far
#: beyond a finite-difference step (for max, maximum, abs, sort-like ops).
DOMAINS = {
    "real": (-3.0, 3.0),
    "positive": (0.1, 3.0),
    "nonneg": (0.0, 3.0),
    "nonzero": (0.2, 3.0),      # magnitude; the sign is drawn separately
    "unit": (-0.9, 0.9),
    "open_unit": (0.05, 0.95),
    "grid": (-3.0, 3.0),
    "offgrid": (-3.0, 3.0),
    "wide": (-1e6, 1e6),
}


def dtypes(kinds="biuf"):
    """Dtype names whose kind (b, i, u, f) is in `kinds`."""
    return st.sampled_from([d for d in ALL_DTYPES if np.dtype(d).kind in kinds])


def shapes(ndim=None, min_dims=0, max_dims=3, min_side=0, max_side=4):
    """Array shapes; exactly `ndim` dimensions if given."""
    if ndim is not None:
        min_dims = max_dims = ndim
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


@st.composite
def broadcastable_shapes(draw, ndims, min_side=1, max_side=4):
    """One shape per entry of `ndims` (their numbers of dimensions), aligned on the
    right and broadcasting together: every dimension is the common size or 1."""
    full = draw(shapes(ndim=max(ndims, default=0), min_side=min_side, max_side=max_side))
    out = []
    for nd in ndims:
        tail = full[len(full) - nd:] if nd else ()
        ones = draw(st.lists(st.booleans(), min_size=nd, max_size=nd))
        out.append(tuple(1 if one else s for s, one in zip(tail, ones)))
    return tuple(out)


def elements(dtype, domain="real"):
    """Scalars of `dtype` inside `domain` (see `DOMAINS`); booleans ignore the domain."""
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return st.booleans()
    lo, hi = DOMAINS[domain]
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if domain == "wide":
            return st.integers(int(info.min), int(info.max))
        ilo = max(int(np.ceil(lo)), int(info.min))
        if domain in ("positive", "nonzero"):
            ilo = max(ilo, 1)
        base = st.integers(ilo, min(int(np.floor(hi)), int(info.max)))
        if domain == "nonzero" and dt.kind == "i":
            return st.tuples(base, st.booleans()).map(lambda t: -t[0] if t[1] else t[0])
        return base
    width = 32 if dt == np.float32 else 64
    if domain in ("grid", "offgrid"):
        shift = 0.125 if domain == "offgrid" else 0.0
        return st.integers(int(lo * 4), int(hi * 4) - 1).map(lambda k: k / 4 + shift)
    if width == 32:     # bounds must be float32 values; rounding keeps them inside
        lo, hi = float(np.nextafter(np.float32(lo), np.float32(hi))), float(np.float32(hi))
        hi = hi if hi <= DOMAINS[domain][1] else float(np.nextafter(np.float32(hi), np.float32(lo)))
    mag = st.floats(lo, hi, width=width, allow_nan=False, allow_infinity=False)
    if domain == "nonzero":
        return st.tuples(mag, st.booleans()).map(lambda t: -t[0] if t[1] else t[0])
    return mag


def arrays(dtype, shape, domain="real", unique=False):
    """Arrays of `dtype` and `shape` (a shape or a strategy of shapes) inside `domain`."""
    return hnp.arrays(np.dtype(dtype), shape, elements=elements(dtype, domain), unique=unique)


# -- oracles ------------------------------------------------------------------

#: dtype -> relative tolerance between NumPy and a compiled result (rounding only:
#: numba's libm and summation order differ from NumPy's by a few ulps).
RTOL = {"float32": 2e-5, "float64": 1e-11}


def assert_same(actual, expected, scale=1.0, what="result"):
    """Same dtype and shape; same values (floats: within rounding, NaN equal to NaN).

    `scale` is the magnitude rounding errors are relative to (e.g. the sum of
    absolute values for a sum that cancels).
    """
    expected = np.asarray(expected)
    assert isinstance(actual, np.ndarray), f"{what}: expected an ndarray, got {type(actual)}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    if expected.dtype.kind == "f":
        tol = RTOL[expected.dtype.name]
        np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol * scale,
                                   equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


def run(inputs, outputs, values, mode, **kwargs):
    """Compile `outputs` of `inputs` in `mode` and call it on `values`."""
    import bptt

    f = bptt.function(inputs, outputs, mode=mode, on_unused_input="ignore", **kwargs)
    return f(*values)


def check_rop(fun, pt, mode, rng=None, rtol=None):
    """Check forward mode (`bptt.Rop`) against reverse mode at the point `pt`.

    For random tangents v (one per input) and cotangents u (one per output),
    ``sum(Rop(f, x, v) * u)`` must equal ``sum(v * Lop(f, x, u))``; `Lop` is
    itself checked against finite differences by `verify_grad`.
    """
    import bptt
    import bptt.tensor as T
    from bptt.grad import Lop, Rop

    rng = np.random.default_rng(0) if rng is None else rng
    pt = [np.asarray(p) for p in pt]
    xs = [T.tensor(p.dtype.name, (None,) * p.ndim) for p in pt]
    out = fun(*xs)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    vs = [x.type() for x in xs]
    us = [o.type() for o in outs]
    jvp = Rop(outs, xs, vs)
    vjp = Lop(outs, xs, us)
    lhs = sum(T.sum(j * u) for j, u in zip(jvp, us))
    rhs = sum(T.sum(v * g) for v, g in zip(vs, vjp))
    f = bptt.function(xs + vs + us, [lhs, rhs], mode=mode, on_unused_input="ignore")
    # Output shapes only: the reference interpreter needs no compilation.
    shapes_ = [np.shape(o) for o in bptt.function(xs, outs, mode="PY")(*pt)]
    v_vals = [rng.standard_normal(p.shape).astype(p.dtype) for p in pt]
    u_vals = [rng.standard_normal(s).astype(o.dtype) for s, o in zip(shapes_, outs)]
    left, right = f(*pt, *v_vals, *u_vals)
    tol = rtol or (1e-3 if any(p.dtype == np.float32 for p in pt) else 1e-9)
    scale = 1 + abs(float(left)) + abs(float(right))
    assert abs(float(left) - float(right)) <= tol * scale, \
        f"Rop and Lop disagree: <Rop(v), u> = {float(left)!r}, <v, Lop(u)> = {float(right)!r}"


def check_infer_shape(outputs, inputs, values, mode):
    """Each output's `infer_shape` (from its node's input shapes) equals its run-time shape."""
    import bptt.tensor as T
    from bptt.tensor.shape import shape_tuple

    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    inferred = []
    for out in outputs:
        node = out.owner
        in_shapes = [shape_tuple(v) if hasattr(v.type, "ndim") else None for v in node.inputs]
        sizes = node.op.infer_shape(None, node, in_shapes)[out.index]
        inferred.append([T.cast(T.as_tensor_variable(s), "int64") for s in sizes])
    got = run(inputs, outputs + [s for sizes in inferred for s in sizes], values, mode)
    k = len(outputs)
    for out, value, sizes in zip(outputs, got, inferred):
        want, k = tuple(int(s) for s in got[k:k + len(sizes)]), k + len(sizes)
        assert want == value.shape, \
            f"{out.owner.op}.infer_shape gave {want}, run time {value.shape}"
