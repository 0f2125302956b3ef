"""scan(name=..., profile=True): calls, steps and loop time, in both modes."""
import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.scan import profiles


def _rnn(profile, name="rnn"):
    x, h0 = T.matrix("x"), T.vector("h0")
    hs, _ = bptt.scan(lambda a, h: T.tanh(a + h), sequences=x, outputs_info=h0,
                      name=name, profile=profile)
    return x, h0, hs


def test_profile_counts_calls_and_steps(mode):
    x, h0, hs = _rnn(True)
    f = bptt.function([x, h0], hs, mode=mode)
    f(np.ones((7, 3)), np.zeros(3))
    f(np.ones((5, 3)), np.zeros(3))
    (prof,) = profiles(f)
    assert (prof.name, prof.calls, prof.steps) == ("rnn", 2, 12)
    assert prof.seconds > 0
    assert "scan 'rnn': 2 calls, 12 steps" in prof.summary()


def test_profile_counts_executed_steps_of_while_loops(mode):
    m = T.scalar("m")
    vals, _ = bptt.scan(lambda p, m: (p * 2, bptt.until(p * 2 > m)),
                        outputs_info=T.constant(1.0), non_sequences=m, n_steps=100,
                        name="pow2", profile="doubling")
    f = bptt.function([m], vals, mode=mode)
    np.testing.assert_array_equal(f(45.0), [2, 4, 8, 16, 32, 64])
    (prof,) = profiles(f)
    assert (prof.name, prof.calls, prof.steps) == ("doubling", 1, 6)


def test_unprofiled_scan_has_no_profile(mode):
    x, h0, hs = _rnn(False)
    f = bptt.function([x, h0], hs, mode=mode)
    f(np.ones((3, 3)), np.zeros(3))
    assert profiles(f) == []


@pytest.mark.parametrize("bad", [0, ""])
def test_falsy_profile_is_off(bad):
    assert _rnn(bad)[2].owner.inputs[0].owner.op.profile is None
