"""The oracle covers every rewrite pass: a broken version of each is caught (issue 20, section 4).

tests/scan/oracle/caught.py (written by tools/scan_oracle_mutations.py) names,
for each pass of `bptt.compile.passes.pm` and each of its mutations
(tests/scan/oracle/mutate.py: the generic corruption, and a targeted bug for
some), a program of `test_programs_py`'s draw that catches it. Each such
program is replayed here: with every rewrite it agrees with the rewrite-free
reference and the pass edits its graphs; with the pass broken it does not
agree (or raises). A mutation no program of the draw catches is proved by a
hand-written program (`HAND_WRITTEN`); a pass off by default (`mutate.ENABLING`)
is replayed turned on. A pass of `pm` without a catch for each of its mutations
fails `test_every_pass_has_a_caught_mutation`.
"""
from __future__ import annotations

import pytest

from bptt.compile.passes import pm

from .oracle import mutate
from .oracle.caught import CATCHES, PROGRAMS
from .oracle.check import Evaluation, agree
from .test_oracle import ISSUE_PUSHOUT

#: passes whose generic corruption no oracle program shows, and why; each has a targeted
#: mutation in `mutate.TARGETED` that one is caught by
NO_CORRUPTION = {
    "remove_dead_code": "it drops nodes no output needs and writes no value (the corruption "
                        "has nothing to shift); on the oracle's graphs nothing is left dead, "
                        "as FunctionGraph.replace prunes a node when its last client goes",
}


#: (pass, mutation kind, program, why it is written by hand)
HAND_WRITTEN = [
    ("scan_pushout_seqs", "targeted", ISSUE_PUSHOUT,
     "the rank bug's own program: a sequence of 0-d rows times a row operand with more steps "
     "than H (size-1 or equal sizes broadcast it away), which few programs of a draw have"),
]


def _replays():
    """{(program index, the pass turned on for the replay or None): [(pass, kind)]}."""
    out = {}
    for name, kind, index, _ in CATCHES:
        on = name if name in mutate.ENABLING else None
        out.setdefault((index, on), []).append((name, kind))
    return out


def _assert_caught(prog, catches, on=None, what="program"):
    ev = Evaluation(prog)
    ref = ev.reference()
    with mutate.enabled(on), mutate.tracking() as fired:
        got = ev.run()
    assert agree(got, ref, prog), f"{what} mismatches with no mutation"
    missed = []
    for name, kind in catches:
        if name not in NO_CORRUPTION:
            assert name in fired, f"{name} no longer edits the graphs of {what}"
        if not mutate.caught(ev, ref, dict(mutate.mutations(name))[kind]):
            missed.append(f"{name} ({kind})")
    assert not missed, f"{what} no longer catches: {', '.join(missed)}"


@pytest.mark.parametrize("index,on", sorted(_replays(), key=lambda k: (k[0], k[1] or "")),
                         ids=lambda v: "" if v is None else str(v))
def test_broken_passes_are_caught(index, on):
    """Program `index` of CI's draw agrees as it is and mismatches with each pass broken."""
    _assert_caught(PROGRAMS[index], _replays()[index, on], on, f"program {index}")


@pytest.mark.parametrize("name,kind,prog", [h[:3] for h in HAND_WRITTEN],
                         ids=[f"{h[0]}-{h[1]}" for h in HAND_WRITTEN])
def test_broken_passes_are_caught_by_hand_written_programs(name, kind, prog):
    _assert_caught(prog, [(name, kind)], what=f"the hand-written program for {name}")


def test_every_pass_has_a_caught_mutation():
    """Every pass of pm has each of its mutations in CATCHES (so a new pass needs one)."""
    have = {(name, kind) for name, kind, _, _ in CATCHES} | {h[:2] for h in HAND_WRITTEN}
    lacking = []
    for name in dict.fromkeys(pm.names()):
        kinds = [k for k, _ in mutate.mutations(name)
                 if not (k == "corrupt" and name in NO_CORRUPTION)]
        if not kinds:
            lacking.append(f"{name}: no mutation it could be caught by")
        lacking += [f"{name} ({k}): no catching program; run tools/scan_oracle_mutations.py "
                    "--write tests/scan/oracle/caught.py" for k in kinds if (name, k) not in have]
    assert not lacking, "\n".join(lacking)


def test_no_corruption_passes_have_a_targeted_mutation():
    assert all(name in mutate.TARGETED for name in NO_CORRUPTION)
