"""`verify_grad`: compare symbolic gradients with central finite differences.

Every output is projected onto a random direction (``cost = sum_k
sum(out_k * r_k)``), so one scalar covers all outputs; the gradient of that
cost with respect to every input is then compared, element by element, with
``(cost(x + eps e_j) - cost(x - eps e_j)) / (2 eps)``. Each test draws new
directions. An element passes when its absolute error is within `abs_tol`
or its relative error within `rel_tol` (the criterion of Theano's
verify_grad); defaults depend on the input dtype.
"""
from __future__ import annotations

import numpy as np

from ..errors import GradientError

#: dtype -> (eps, abs_tol, rel_tol)
DEFAULTS = {"float64": (1e-6, 1e-5, 1e-5), "float32": (1e-3, 5e-3, 5e-3)}


def _rng(rng):
    if rng is None:
        return np.random.default_rng(42)
    if isinstance(rng, np.random.RandomState):
        return np.random.default_rng(rng.randint(2**31))
    return rng


def _standardize(pt):
    from ..config import config

    out = []
    for i, p in enumerate(pt):
        a = np.array(p, dtype=config.floatX if isinstance(p, (float, int)) else None, copy=True)
        if a.dtype.name not in DEFAULTS:
            raise TypeError(f"verify_grad: point {i} has dtype {a.dtype}; only float32 and "
                            "float64 inputs can be checked")
        out.append(a)
    return out


def _tolerances(pt, eps, abs_tol, rel_tol):
    worst = "float32" if any(p.dtype == np.float32 for p in pt) else "float64"
    d_eps, d_abs, d_rel = DEFAULTS[worst]
    return (d_eps if eps is None else eps, d_abs if abs_tol is None else abs_tol,
            d_rel if rel_tol is None else rel_tol)


def _build(fun, pt, mode):
    """(output shapes, cost function, gradient function) of `fun` at `pt`.

    The output shapes (to draw directions) come from a PY evaluation, whatever
    the mode. In PY the cost and the gradients are two functions: finite
    differences call the cost alone many times. In a compiled mode one
    function returns both: compiling is what costs there (seconds per graph,
    against microseconds per call), and this is one compilation instead of three.
    """
    from ..compile.function import function
    from ..compile.mode import resolve_mode
    from ..tensor.type import tensor
    from .reverse import grad

    inputs = [tensor(p.dtype, (None,) * p.ndim, name=f"verify_grad input {i}")
              for i, p in enumerate(pt)]
    outs = fun(*inputs)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    outs = [o for o in outs if o.dtype in ("float32", "float64")]
    if not outs:
        raise TypeError("verify_grad: the function has no float output to differentiate")
    probe = function(inputs, outs, mode="PY", on_unused_input="ignore")
    shapes = [np.shape(v) for v in probe(*pt)]
    dirs = [tensor("float64", (None,) * o.ndim, name=f"direction {k}") for k, o in enumerate(outs)]
    cost = sum(((o * r).sum() for o, r in zip(outs, dirs)), start=0.0)
    grads = grad(cost, inputs, disconnected_inputs="ignore")
    if resolve_mode(mode) == "PY":
        f_cost = function(inputs + dirs, cost, mode=mode, on_unused_input="ignore")
        f_grad = function(inputs + dirs, grads, mode=mode, on_unused_input="ignore")
        return shapes, f_cost, f_grad
    both = function(inputs + dirs, [cost] + grads, mode=mode, on_unused_input="ignore")
    return shapes, (lambda *args: both(*args)[0]), (lambda *args: both(*args)[1:])


def _numeric(f_cost, pt, dirs, i, eps):
    x = pt[i]
    flat = x.reshape(-1)
    out = np.empty(flat.size, dtype="float64")
    for j in range(flat.size):
        old = flat[j]
        flat[j] = old + eps
        hi = float(f_cost(*pt, *dirs))
        flat[j] = old - eps
        lo = float(f_cost(*pt, *dirs))
        flat[j] = old
        out[j] = (hi - lo) / (2 * eps)
    return out.reshape(x.shape)


def verify_grad(fun, pt, n_tests=2, rng=None, eps=None, abs_tol=None, rel_tol=None, mode=None):
    """Check the gradient of `fun` at `pt` against finite differences.

    Parameters
    ----------
    fun : callable
        Takes one symbolic variable per entry of `pt` and returns a variable
        or a list of them (integer outputs are ignored).
    pt : list of array_like
        The point; float32 or float64 arrays.
    n_tests : int
        How many random projections of the outputs to check.
    rng : numpy Generator or RandomState, optional
    eps, abs_tol, rel_tol : float, optional
        Step and tolerances; defaults depend on the least precise input dtype
        (see ``DEFAULTS``).
    mode : {'NUMBA', 'PY'}, optional

    Raises
    ------
    GradientError
        Naming the input, the largest absolute and relative errors and the
        index where they occur.
    """
    if not isinstance(pt, (list, tuple)):
        raise TypeError("verify_grad: pt must be a list of arrays, one per input")
    pt = _standardize(pt)
    rng = _rng(rng)
    eps, abs_tol, rel_tol = _tolerances(pt, eps, abs_tol, rel_tol)
    shapes, f_cost, f_grad = _build(fun, pt, mode)
    for _ in range(n_tests):
        dirs = [rng.standard_normal(s) if s else np.asarray(rng.standard_normal())
                for s in shapes]
        symbolic = f_grad(*pt, *dirs)
        for i, sym in enumerate(symbolic):
            num = _numeric(f_cost, pt, dirs, i, eps)
            _compare(i, np.asarray(sym, dtype="float64"), num, abs_tol, rel_tol, eps)


def _compare(i, sym, num, abs_tol, rel_tol, eps):
    if sym.shape != num.shape:
        raise GradientError(f"verify_grad: the symbolic gradient of input {i} has shape "
                            f"{sym.shape}, the input has {num.shape}", input_index=i)
    abs_err = np.abs(sym - num)
    rel_err = abs_err / np.maximum(np.abs(sym) + np.abs(num), 1e-300)
    bad = (abs_err > abs_tol) & (rel_err > rel_tol) | ~np.isfinite(sym)
    if not bad.any():
        return
    k = np.unravel_index(np.argmax(np.where(bad, abs_err, -1)), sym.shape) if sym.ndim else ()
    raise GradientError(
        f"verify_grad: gradient of input {i} is wrong: max absolute error "
        f"{abs_err.max():.3g} and max relative error {rel_err[bad].max():.3g} "
        f"(tolerances {abs_tol:g}, {rel_tol:g}; eps {eps:g}); worst at index {tuple(map(int, k))}: "
        f"symbolic {sym[k]:.8g}, numeric {num[k]:.8g}",
        input_index=i, abs_err=float(abs_err.max()), rel_err=float(rel_err[bad].max()),
        where=tuple(map(int, k)))
