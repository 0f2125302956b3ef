"""Scan rewrites on sequences whose rows are of rank 0, 1 or 2, mixed by broadcasting with
non-sequences of lower or higher rank.

A step of rank r computed from rows of rank 0 and non-sequences is stacked over the steps
with a new leading time axis on every operand, the row axes aligned on the right *under*
the time axis: ``u_t * w`` with u_t () and w (H,) is ``u[:, None] * w[None, :]``, not
``u * w[None, :]`` (NumPy's right alignment would pair the time axis with H).

Oracles: the same graph compiled with no rewrites at all (``config.rewrites`` off) in PY,
and, for the programs of Theano's tests, a NumPy loop written here. Each test asserts that
the rewrite under test fired, so it cannot pass by not applying. Hypothesis draws the
program (ranks, step expression, direction, which outputs are read) in PY, where a
compile costs rewriting only; NUMBA runs a few fixed programs over drawn sizes and values.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bptt
import bptt.tensor as T
from bptt.graph.rewriting import fired

from ..helpers import without_rewrites

# -- programs ---------------------------------------------------------------------------------
# A program is a tuple of hashable parts, so its compiled functions are built once:
#   (R, leaves, ops, backwards, read)
# R: rank of the state's row; leaves: ((kind, rank), ...); ops: the binary ops folding the
# leaves left to right (((l0 op0 l1) op1 l2) ...); read: "all" (every row of every output) or "last" (only [-1]).
#
# Row shapes by rank: 0 -> (), 1 -> (H,), 2 -> (B, H); K is the inner size of a product.
# Leaf kinds (the step's value, of the given rank):
#   seq      a sequence row
#   ns       a non-sequence
#   dot      seq row (K,) or (B, K) @ non-sequence (K, H)          (rank 1 or 2)
#   dotv     seq row (K,) . non-sequence (K,)                       (rank 0)
#   mdot     non-sequence (H, K) @ seq row (K,)                     (rank 1)
#   sdot     seq row of rank 0 * (seq row (K,) @ non-sequence (K, H)): a product of rows
#            of two ranks                                           (rank 1)

OPS = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "sub": lambda a, b: a - b}


def _row(rank):
    return ("B", "H")[2 - rank:]


class Program:
    """The symbolic graph of one program and its inputs' shapes by name of dimension."""

    def __init__(self, spec):
        self.spec = spec
        rank, leaves, ops, backwards, read = spec
        self.inputs, self.dims = [], []      # variables, and their shapes as dimension names
        seqs, non_seqs, terms = [], [], []
        for kind, r in leaves:
            terms.append(self._leaf(kind, r, seqs, non_seqs))
        x0 = self._var(_row(rank), "x0")
        n_seqs = len(seqs)

        def step(*args):
            rows, x_tm1, ns = args[:n_seqs], args[n_seqs], args[n_seqs + 1:]
            env = dict(zip(seqs, rows)) | dict(zip(non_seqs, ns))
            values = [t(env) for t in terms]
            y = values[0]
            for op, v in zip(ops, values[1:]):
                y = OPS[op](y, v)
            return x_tm1 + T.tanh(y), y

        (xs, ys), _ = bptt.scan(step, sequences=seqs, outputs_info=[x0, None],
                                non_sequences=non_seqs, go_backwards=backwards)
        self.outputs = [xs, ys] if read == "all" else [xs[-1], ys[-1]]
        self.cost = sum(T.sum(T.sin(o) * o) for o in self.outputs)

    def _var(self, dims, name):
        v = T.tensor("float64", (None,) * len(dims), name=name)
        self.inputs.append(v)
        self.dims.append(dims)
        return v

    def _leaf(self, kind, r, seqs, non_seqs):
        def seq(dims):
            s = self._var(("T",) + dims, f"s{len(seqs)}")
            seqs.append(s)
            return s

        def non_seq(dims):
            w = self._var(dims, f"w{len(non_seqs)}")
            non_seqs.append(w)
            return w

        if kind == "seq":
            s = seq(_row(r))
            return lambda env: env[s]
        if kind == "ns":
            w = non_seq(_row(r))
            return lambda env: env[w]
        if kind == "dot":
            s, w = seq(_row(r)[:-1] + ("K",)), non_seq(("K", "H"))
            return lambda env: T.dot(env[s], env[w])
        if kind == "dotv":
            s, w = seq(("K",)), non_seq(("K",))
            return lambda env: T.dot(env[s], env[w])
        if kind == "mdot":
            s, w = seq(("K",)), non_seq(("H", "K"))
            return lambda env: T.dot(env[w], env[s])
        if kind == "sdot":
            u, s, w = seq(()), seq(("K",)), non_seq(("K", "H"))
            return lambda env: env[u] * T.dot(env[s], env[w])
        raise ValueError(kind)

    def values(self, sizes, rng):
        return [rng.uniform(-1, 1, size=tuple(sizes[d] for d in dims)) for dims in self.dims]


#: leaf kinds and the row ranks each can have
LEAVES = {"seq": (0, 1, 2), "ns": (0, 1, 2), "dot": (1, 2), "dotv": (0,), "mdot": (1,),
          "sdot": (1,)}
PRODUCTS = ("dot", "dotv", "mdot", "sdot")


@st.composite
def programs(draw, read=None):
    rank = draw(st.sampled_from((0, 1, 2)))
    leaf = st.sampled_from([(k, r) for k, rs in LEAVES.items() for r in rs if r <= rank])
    product = st.sampled_from([(k, r) for k in PRODUCTS for r in LEAVES[k] if r <= rank])
    leaves = [draw(product)] + draw(st.lists(leaf, min_size=1, max_size=3))
    leaves = draw(st.permutations(leaves))
    ops = tuple(draw(st.sampled_from(tuple(OPS))) for _ in leaves[1:])
    read = read or draw(st.sampled_from(("all", "last")))
    return rank, tuple(leaves), ops, draw(st.booleans()), read


sizes = st.fixed_dictionaries({d: st.integers(1, 3) for d in "BHK"} | {"T": st.integers(1, 4)})

# -- compiled functions, shared between examples ----------------------------------------------
_compiled = {}


def compiled(spec, mode, grad=False, rewrites=True):
    key = (spec, mode, grad, rewrites)
    if key not in _compiled:
        prog = Program(spec)
        outs = prog.outputs + (bptt.grad(prog.cost, prog.inputs) if grad else [])
        if rewrites:
            f = bptt.function(prog.inputs, outs, mode=mode, on_unused_input="ignore")
        else:
            with without_rewrites():
                f = bptt.function(prog.inputs, outs, mode=mode, on_unused_input="ignore")
        _compiled[key] = prog, f
    return _compiled[key]


def check_against_no_rewrites(spec, mode, sizes, seed, grad=False, passes=()):
    """The program's outputs (and gradients) in `mode` equal those of the rewrite-free graph;
    returns how often each rewrite fired, after asserting those of `passes` did."""
    prog, f = compiled(spec, mode, grad)
    _, ref = compiled(spec, "PY", grad, rewrites=False)
    counts = fired(f.fgraph)
    for p in passes:
        assert counts[p], f"{p} did not fire on {spec}"
    values = prog.values(sizes, np.random.default_rng(seed))
    want = ref(*values)
    got = f(*values)
    names = [f"output {k}" for k in range(len(prog.outputs))] + \
        [f"gradient wrt {v.name}" for v in prog.inputs]
    for name, a, b in zip(names, got, want):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10,
                                   err_msg=f"{name} of {spec} at {sizes}")
    return counts


def _fires(spec, name, grad=False):
    _, f = compiled(spec, "PY", grad)
    return fired(f.fgraph)[name] > 0


seeds = st.integers(0, 2 ** 16)

# -- the sequence push-out ----------------------------------------------------------------------
#: The step of issue 20: dot(u1_t, W) + u2_t * w2 + x_tm1 with u2's rows of rank 0.
ISSUE = (1, (("seq", 0), ("ns", 1), ("dot", 1)), ("mul", "add"), False, "all")
#: Rows of rank 0 and 2 and a non-sequence of rank 2 around one product, backwards.
MIXED = (2, (("seq", 0), ("dot", 2), ("ns", 2), ("seq", 1)), ("mul", "add", "mul"), True, "all")


@given(spec=programs(read="all"), sizes=sizes, seed=seeds)
def test_pushout_seqs_stacks_rows_of_every_rank_with_their_axes_aligned(spec, sizes, seed):
    if not _fires(spec, "scan_pushout_seqs"):
        return          # the step's product is not a function of rows and invariants alone
    check_against_no_rewrites(spec, "PY", sizes, seed, passes=("scan_pushout_seqs",))


@pytest.mark.parametrize("spec", [ISSUE, MIXED], ids=["issue", "mixed"])
@settings(max_examples=4)
@given(sizes=sizes, seed=seeds)
def test_pushout_seqs_in_both_modes(spec, mode, sizes, seed):
    check_against_no_rewrites(spec, mode, sizes, seed, passes=("scan_pushout_seqs",))


def test_issue_program_against_a_numpy_loop(mode):
    """Issue 20's program at T=2 (a wrong row 1) and T=3 (a broadcast error), H=2."""
    prog, f = compiled(ISSUE, mode)
    rng = np.random.default_rng(1)
    for n in (2, 3):
        values = prog.values(dict(T=n, B=1, H=2, K=3), rng)
        s0, w0, s1, w1, x0 = values     # u2, w2, u1, W_in1, x0
        x, want = x0, []
        for t in range(n):
            y = s0[t] * w0 + s1[t] @ w1
            x = x + np.tanh(y)
            want.append(x)
        np.testing.assert_allclose(f(*values)[0], want, rtol=1e-12)


def check_function(make, mode, values, passes):
    """`make()` -> (inputs, outputs), compiled in `mode` and without rewrites: equal values,
    and each rewrite of `passes` fired."""
    inputs, outputs = make()
    f = bptt.function(inputs, outputs, mode=mode, on_unused_input="ignore")
    counts = fired(f.fgraph)
    for p in passes:
        assert counts[p], f"{p} did not fire"
    inputs, outputs = make()
    with without_rewrites():
        ref = bptt.function(inputs, outputs, mode="PY", on_unused_input="ignore")
    for k, (a, b) in enumerate(zip(f(*values), ref(*values))):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10, err_msg=f"output {k}")


# -- merged outputs: a step SumTo that sums leading axes of a stored value ------------------------
def _broadcast_rows_grads(row, u_rank):
    """Gradients of a scan over rows v_t of static shape `row` plus rows u_t of rank
    `u_rank` (broadcast against them) and rows c_t of rank 0. The backward step stores
    dpre_t for v and returns SumTo(dpre_t, u_t's shape) and SumTo(dpre_t, ()) for u and c:
    merged into one nit_sot, their rows are summed from dpre's under the time axis."""
    v = T.tensor("float64", (None,) + row, name="v")
    u = T.tensor("float64", (None,) + row[len(row) - u_rank:], name="u")
    c, h0 = T.vector("c"), T.tensor("float64", row, name="h0")
    hs, _ = bptt.scan(lambda v_t, u_t, c_t, h: T.tanh(v_t + u_t + c_t + h),
                      sequences=[v, u, c], outputs_info=h0)
    inputs = [v, u, c, h0]
    return inputs, bptt.grad((hs ** 2).sum(), inputs)


@pytest.mark.parametrize("row, u_rank", [((3, 3), 1), ((2, 3), 1), ((3,), 0)])
@settings(max_examples=5)
@given(steps=st.integers(1, 4), seed=seeds)
def test_merge_outputs_sums_each_row_to_its_shape(row, u_rank, steps, seed):
    rng = np.random.default_rng(seed)
    u_row = row[len(row) - u_rank:]
    values = [rng.uniform(-1, 1, (steps,) + row), rng.uniform(-1, 1, (steps,) + u_row),
              rng.uniform(-1, 1, steps), rng.uniform(-1, 1, row)]
    check_function(lambda: _broadcast_rows_grads(row, u_rank), "PY", values,
                   ("scan_merge_outputs",))


def test_merge_outputs_in_numba():
    rng = np.random.default_rng(2)
    values = [rng.uniform(-1, 1, (3, 3, 3)), rng.uniform(-1, 1, (3, 3)), rng.uniform(-1, 1, 3),
              rng.uniform(-1, 1, (3, 3))]
    check_function(lambda: _broadcast_rows_grads((3, 3), 1), "NUMBA", values,
                   ("scan_merge_outputs",))
