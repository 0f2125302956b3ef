"""Evaluate a `Program` every way and report where the ways disagree.

1. `interpret` (NumPy, Theano's rules) gives the outputs and the shared value;
2. bptt in PY mode with no rewrite at all (`tests.helpers.without_rewrites`)
   must equal it, and is the reference for the gradients (of a scalar cost of
   the returned outputs with respect to every float input) and, on request,
   for a Hessian-vector product (the gradient of ``<grad wrt the first
   input, v>``);
3. bptt in PY and in NUMBA mode with every rewrite must equal the reference:
   outputs, shared value, gradients and second order, all from one compiled
   function per mode.

On request the gradient is also checked against finite differences
(`bptt.verify_grad`) where the program is smooth (`Program.smooth`).
`check_program` returns a list of `Mismatch` (empty: all agree); an exception
in any evaluation is a mismatch too, named by the stage that raised.
"""
from __future__ import annotations

import dataclasses
import traceback
from dataclasses import dataclass

import numpy as np

import bptt
import bptt.tensor as T

from ...helpers import without_rewrites
from .build import build, input_values, make_values
from .interpret import interpret


@dataclass
class Mismatch:
    stage: str        # "interpret", "build", "grad", "reference", "PY", "NUMBA", "fd"
    what: str         # which value, or the exception
    detail: str = ""

    def __str__(self):
        return f"[{self.stage}] {self.what}" + (f"\n{self.detail}" if self.detail else "")


def _tolerance(prog):
    return (1e-5, 1e-6) if "cast32" in prog.ops() else (1e-8, 1e-10)


def _close(got, want, rtol, atol):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    scale = 1.0 + (float(np.max(np.abs(want))) if want.size else 0.0)
    return bool(np.allclose(got, want, rtol=rtol, atol=atol * scale, equal_nan=True))


def agree(got, ref, prog):
    """True when two `_run` results (values, shared value) of `prog` are equal within its
    tolerance."""
    tol = _tolerance(prog)
    (vals, shared), (ref_vals, ref_shared) = got, ref
    if any(not _close(g, r, *tol) for g, r in zip(vals, ref_vals)):
        return False
    return ref_shared is None or _close(shared, ref_shared, *tol)


def _error(stage, exc):
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-4))
    return Mismatch(stage, f"{type(exc).__name__}: {str(exc)[:400]}", tb)


def expected_values(prog, values):
    """What the function returns according to the interpreter: returned outputs, shared."""
    res = interpret(prog, values)
    outs = [y if o.use == "all" else y[-1]
            for o, y in zip(prog.outs, res["outs"]) if o.use not in ("none", "cost")]
    if res["twin"] is not None:
        outs.append(res["twin"])
    outs.append(_numpy_cost(prog, res))
    return outs, res


def _numpy_cost(prog, res):
    """`build`'s cost, in NumPy: one term per output read (see `build._cost_term`)."""
    total = 0.0
    for j, (o, y) in enumerate(zip(prog.outs, res["outs"])):
        if o.use == "none":
            continue
        r = y[-1] if o.use == "last" else y
        if prog.cost == "half_sq":
            total += 0.5 * np.sum(r * r)
        elif prog.cost == "cube":
            total += 0.4 * np.sum(r * r * r)
        else:
            total += (0.3 + 0.2 * j) * np.sum(r) + (0.1 + 0.05 * j) * np.sum(r * r)
    if res["twin"] is not None:
        total += 0.25 * np.sum(res["twin"] ** 2)
    return np.float64(total)


def _graph(prog, values, grads, second):
    """The built program, and the list of (label, variable) the function computes."""
    b = build(prog, values)
    labels = [f"out{j}" for j, o in enumerate(prog.outs) if o.use not in ("none", "cost")]
    named = list(zip(labels + ["twin"], b.returned)) + [("cost", b.cost)]
    if grads:
        gs = bptt.grad(b.cost, b.wrt, disconnected_inputs="ignore")
        named += [(f"grad {v.name}", g) for v, g in zip(b.wrt, gs)]
        if second and b.wrt:
            rng = np.random.default_rng(prog.seed + 1)
            first = input_values(prog, values)[b.wrt_values[0]]
            v = T.constant(rng.uniform(-1, 1, np.shape(first)))
            hv = bptt.grad(T.sum(gs[0] * v), b.wrt, disconnected_inputs="ignore")
            named += [(f"hv {w.name}", h) for w, h in zip(b.wrt, hv)]
    return b, named


def _run(b, named, args, mode, values):
    f = bptt.function(b.inputs, [v for _, v in named], updates=b.updates, mode=mode,
                      on_unused_input="ignore")
    if b.shared is not None:
        b.shared.set_value(np.array(values["shared"]))
    got = f(*args)
    return got, (None if b.shared is None else b.shared.get_value())


class Evaluation:
    """`prog` built once with its gradients (no second order), run on request: the
    reference (no rewrites) and the rewritten function, in PY mode by default."""

    def __init__(self, prog):
        self.prog, self.values = prog, make_values(prog)
        self.built, self.named = _graph(prog, self.values, grads=True, second=False)
        self.args = input_values(prog, self.values)

    def run(self, mode="PY"):
        return _run(self.built, self.named, self.args, mode, self.values)

    def reference(self):
        with without_rewrites():
            return self.run()


def check_program(prog, modes=("PY", "NUMBA"), grads=True, second=False, fd=False):
    """Every disagreement between the evaluations of `prog` (see the module docstring)."""
    values = make_values(prog)
    rtol, atol = _tolerance(prog)
    try:
        want, res = expected_values(prog, values)
    except Exception as exc:  # noqa: BLE001 - the oracle itself: a bug in the test
        return [_error("interpret", exc)]
    args = input_values(prog, values)
    try:
        b, named = _graph(prog, values, grads, second)
    except Exception as exc:  # noqa: BLE001
        return [_error("build" if not grads else "grad", exc)]
    found = []
    try:
        with without_rewrites():
            ref, ref_shared = _run(b, named, args, "PY", values)
    except Exception as exc:  # noqa: BLE001
        return [_error("reference", exc)]
    for (label, _), got, exp in zip(named, ref, want):
        if not _close(got, exp, rtol, atol):
            found.append(Mismatch("reference", f"{label} differs from the NumPy interpreter",
                                  f"bptt (no rewrites): {np.asarray(got)!r}\nNumPy: {exp!r}"))
    if res["shared"] is not None and not _close(ref_shared, res["shared"], rtol, atol):
        found.append(Mismatch("reference", "shared value differs from the NumPy interpreter",
                              f"bptt: {ref_shared!r}\nNumPy: {res['shared']!r}"))
    for mode in modes:
        try:
            got, got_shared = _run(b, named, args, mode, values)
        except Exception as exc:  # noqa: BLE001
            found.append(_error(mode, exc))
            continue
        for (label, _), g, r in zip(named, got, ref):
            if not _close(g, r, rtol, atol):
                found.append(Mismatch(mode, f"{label} differs from the rewrite-free PY run",
                                      f"{mode}: {np.asarray(g)!r}\nreference: {np.asarray(r)!r}"))
        if ref_shared is not None and not _close(got_shared, ref_shared, rtol, atol):
            found.append(Mismatch(mode, "shared value differs from the rewrite-free PY run"))
    if fd and grads and prog.smooth():
        found += check_fd(prog, values)
    return found


def check_fd(prog, values):
    """The cost's gradient against finite differences (a symbolic n_steps made constant)."""
    if prog.n_steps is not None and prog.n_steps[0] == "sym":
        prog = dataclasses.replace(prog, n_steps=("const", prog.n_steps[1]))
    pt = input_values(prog, values)
    if not pt:
        return []
    try:
        bptt.verify_grad(lambda *xs: build(prog, values, inputs=list(xs)).cost, pt,
                         rng=np.random.default_rng(prog.seed), mode="PY")
    except Exception as exc:  # noqa: BLE001
        return [_error("fd", exc)]
    return []


def reproducer(prog):
    """Python a developer can paste to re-run one program."""
    return ("from tests.scan.oracle.program import *\n"
            "from tests.scan.oracle.check import check_program\n"
            f"prog = {prog!r}\n"
            "for m in check_program(prog): print(m)\n")
