"""The scan oracle in CI: random programs, every evaluation must agree (tests/scan/oracle).

PY draws a few hundred derandomized programs (outputs and gradients against the
rewrite-free PY run and the NumPy interpreter; finite differences and a
Hessian-vector product on a subset). NUMBA compiles one function per program
(outputs and gradients together), so it runs on a smaller draw.
"""
from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings

from .oracle import mutate
from .oracle.check import check_program, reproducer
from .oracle.program import E, NonSeq, Out, Program, Seq
from .oracle.strategy import programs

#: Restrictions away from a known bug while its fix is not merged (names of
#: oracle.strategy.RESTRICTIONS, comma-separated in BPTT_ORACLE_KNOWN_BUGS); CI draws the
#: full space.
KNOWN_BUGS = tuple(n for n in os.environ.get("BPTT_ORACLE_KNOWN_BUGS", "").split(",") if n)

_SETTINGS = dict(derandomize=True, deadline=None, database=None, print_blob=True,
                 suppress_health_check=list(HealthCheck))


def _assert_agree(prog, **kwargs):
    found = check_program(prog, **kwargs)
    assert not found, (f"{len(found)} mismatch(es):\n" + "\n".join(map(str, found))
                       + "\n" + prog.describe() + "\nreproducer:\n" + reproducer(prog))


@settings(max_examples=300, **_SETTINGS)
@given(programs(restrict=KNOWN_BUGS))
def test_programs_py(prog):
    """Outputs and gradients: NumPy interpreter == rewrite-free PY == PY with rewrites."""
    _assert_agree(prog, modes=("PY",), fd=prog.seed % 8 == 0, second=prog.seed % 8 == 1)


@settings(max_examples=6, **_SETTINGS)
@given(programs(restrict=KNOWN_BUGS, max_depth=2))
def test_programs_numba(prog):
    """NUMBA with every rewrite == rewrite-free PY, outputs and gradients in one function."""
    _assert_agree(prog, modes=("NUMBA",))


def _leaf(name, shape):
    return E("leaf", (), name, shape)


#: issue 20's section 1 program: dot(u1_t, W_in1) + u2_t * w2 + x_tm1, u2 of 0-d rows, T=3, H=2
ISSUE_PUSHOUT = Program(
    seqs=(Seq(("K",), (0,)), Seq((), (0,))), non_seqs=(NonSeq(("K", "H")), NonSeq(("H",))),
    outs=(Out("sit_sot", (-1,), ("H",), E("add", (
        E("add", (E("dot", (_leaf("s0@0", ("K",)), _leaf("n0", ("K", "H"))), None, ("H",)),
                  E("mul", (_leaf("s1@0", ()), _leaf("n1", ("H",))), None, ("H",))),
          None, ("H",)), _leaf("o0@-1", ("H",))), None, ("H",))),),
    steps=3, sizes=(2, 2), seed=3)

#: issue 20's section 2 rule: taps [-1, 0, 1] backwards read (13, 14, 15) first
ISSUE_TAPS = Program(
    seqs=(Seq((), (-1, 0, 1)),), outs=(Out("nit_sot", (), (), E("add", (
        E("scale", (_leaf("s0@-1", ()),), 100.0, ()),
        E("add", (E("scale", (_leaf("s0@0", ()),), 10.0, ()), _leaf("s0@1", ())), None, ()),
    ), None, ())),), steps=4, go_backwards=True, sizes=(1, 1))


def test_issue_pushout_program_agrees():
    _assert_agree(ISSUE_PUSHOUT, modes=("PY",))


def test_oracle_finds_the_pushout_rank_bug():
    """Bug (b): with scan_pushout_seqs as it was before its fix, the oracle sees a mismatch."""
    with mutate.pushout_seqs_rank_bug():
        found = check_program(ISSUE_PUSHOUT, modes=("PY",))
    assert any(m.stage == "PY" for m in found), found


def test_issue_tap_program_agrees():
    _assert_agree(ISSUE_TAPS, modes=("PY",), grads=False)


#: found by the soak (seed 101, program 3060): in a Hessian-vector product's step the size
#: facts named a dimension by ``switch(n == 1, n, n)`` computed from that dimension's own
#: Shape_i, and shape_i_from_source made a cycle
SOAK_SHAPE_CYCLE = Program(
    seqs=(Seq(shape=("K",), taps=(2,)),),
    outs=(
        Out(
            kind="nit_sot",
            taps=(),
            shape=("H", "H"),
            expr=E(
                "transpose",
                (E("reverse", (_leaf("o2@-1", ("H", "H")),), None, ("H", "H")),),
                None,
                ("H", "H")
            )
        ),
        Out(
            kind="mit_sot",
            taps=(-3, -1),
            shape=("H", "K"),
            expr=E(
                "tanh",
                (
                    E(
                        "dot",
                        (
                            E(
                                "sub",
                                (
                                    E(
                                        "incsub",
                                        (
                                            _leaf("o2@-1", ("H", "H")),
                                            E("sum", (_leaf("o2@-1", ("H", "H")),), 1, ("H",))
                                        ),
                                        0,
                                        ("H", "H")
                                    ),
                                    E(
                                        "add",
                                        (
                                            E("sum", (_leaf("o1@-3", ("H", "K")),), None, ()),
                                            E("sum", (_leaf("o1@-1", ("H", "K")),), 1, ("H",))
                                        ),
                                        None,
                                        ("H",)
                                    )
                                ),
                                None,
                                ("H", "H")
                            ),
                            E(
                                "splice",
                                (
                                    _leaf("o1@-1", ("H", "K")),
                                    E("reverse", (_leaf("o1@-3", ("H", "K")),), None, ("H", "K"))
                                ),
                                None,
                                ("H", "K")
                            )
                        ),
                        None,
                        ("H", "K")
                    ),
                ),
                None,
                ("H", "K")
            )
        ),
        Out(
            kind="mit_sot",
            taps=(-3, -1),
            shape=("H", "H"),
            expr=E(
                "tanh",
                (
                    E(
                        "add",
                        (
                            E(
                                "sub",
                                (_leaf("o2@-1", ("H", "H")), _leaf("o2@-3", ("H", "H"))),
                                None,
                                ("H", "H")
                            ),
                            _leaf("o2@-1", ("H", "H"))
                        ),
                        None,
                        ("H", "H")
                    ),
                ),
                None,
                ("H", "H")
            )
        )
    ),
    steps=1,
    shared=(
        (),
        E(
            "add",
            (
                E("scale", (_leaf("sh", ()),), 0.5, ()),
                E("sin", (E("sin", (_leaf("sh", ()),), None, ()),), None, ())
            ),
            None,
            ()
        )
    ),
    cost="cube",
    wrt=(2,),
    sizes=(1, 1)
)


def test_soak_shape_cycle_program_agrees():
    _assert_agree(SOAK_SHAPE_CYCLE, modes=("PY",), second=True)


#: program 49 of test_programs_py's draw with scan_reuse_forward on: the rebuilt forward loop's
#: outputs had a more precise static shape (a constant n_steps) than the old ones, and the
#: pass replaced them with FunctionGraph.replace, which demands equal types
REUSE_STATIC_SHAPE = Program(
    seqs=(Seq(shape=('H', 'H'), taps=(-3,)),),
    outs=(
        Out(
            kind='nit_sot',
            taps=(),
            shape=('H', 'H'),
            expr=E(
                'sub',
                (E('leaf', (), 'o1@-1', ('H',)), E('leaf', (), 's0@-3', ('H', 'H'))),
                None,
                ('H', 'H'),
            ),
            use='last',
        ),
        Out(
            kind='mit_sot',
            taps=(-3, -1),
            shape=('H',),
            expr=E(
                'tanh',
                (
                    E(
                        'add',
                        (
                            E(
                                'reverse',
                                (
                                    E(
                                        'incsub',
                                        (
                                            E('leaf', (), 'o1@-1', ('H',)),
                                            E(
                                                'sum',
                                                (E('leaf', (), 's0@-3', ('H', 'H')),),
                                                None,
                                                (),
                                            ),
                                        ),
                                        -1,
                                        ('H',),
                                    ),
                                ),
                                None,
                                ('H',),
                            ),
                            E('leaf', (), 'o1@-1', ('H',)),
                        ),
                        None,
                        ('H',),
                    ),
                ),
                None,
                ('H',),
            ),
            use='none',
        ),
        Out(
            kind='sit_sot',
            taps=(-1,),
            shape=('H',),
            expr=E(
                'tanh',
                (
                    E(
                        'add',
                        (
                            E(
                                'mul',
                                (
                                    E(
                                        'add',
                                        (
                                            E('leaf', (), 'o2@-1', ('H',)),
                                            E(
                                                'index',
                                                (E('leaf', (), 's0@-3', ('H', 'H')),),
                                                -1,
                                                ('H',),
                                            ),
                                        ),
                                        None,
                                        ('H',),
                                    ),
                                    E(
                                        'dot',
                                        (
                                            E(
                                                'dot',
                                                (
                                                    E('leaf', (), 's0@-3', ('H', 'H')),
                                                    E('leaf', (), 's0@-3', ('H', 'H')),
                                                ),
                                                None,
                                                ('H', 'H'),
                                            ),
                                            E(
                                                'dot',
                                                (
                                                    E('leaf', (), 's0@-3', ('H', 'H')),
                                                    E('leaf', (), 'o1@-1', ('H',)),
                                                ),
                                                None,
                                                ('H',),
                                            ),
                                        ),
                                        None,
                                        ('H',),
                                    ),
                                ),
                                None,
                                ('H',),
                            ),
                            E('leaf', (), 'o2@-1', ('H',)),
                        ),
                        None,
                        ('H',),
                    ),
                ),
                None,
                ('H',),
            ),
            use='last',
        ),
    ),
    n_steps=('const', -4),
    steps=0,
    go_backwards=True,
    seed=309,
)


def test_reuse_forward_static_shape_program_agrees():
    with mutate.reuse_forward_on():
        _assert_agree(REUSE_STATIC_SHAPE, modes=("PY",))
