"""The scan oracle in CI: random programs, every evaluation must agree (tests/scan/oracle).

PY draws a few hundred derandomized programs (outputs and gradients against the
rewrite-free PY run and the NumPy interpreter; finite differences and a
Hessian-vector product on a subset). NUMBA compiles one function per program
(outputs and gradients together), so it runs on a smaller draw.
"""
from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings

from .oracle.check import check_program, reproducer
from .oracle.strategy import programs

#: Restrictions away from bugs whose fixes are not merged yet (see oracle.strategy).
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


@settings(max_examples=8, **_SETTINGS)
@given(programs(restrict=KNOWN_BUGS, max_depth=2))
def test_programs_numba(prog):
    """NUMBA with every rewrite == rewrite-free PY, outputs and gradients in one function."""
    _assert_agree(prog, modes=("NUMBA",))
