"""``theano.ifelse``: ``ifelse(cond, then, else)`` as an elementwise switch.

Theano's ifelse evaluated only the branch it chose; here both are computed
and `switch` picks one, which gives the same values (and gradients) for
branches that do not fail.
"""
import bptt.tensor as _t


def ifelse(condition, then_branch, else_branch, name=None):
    """`then_branch` where the scalar `condition` is true, else `else_branch`."""
    if isinstance(then_branch, (list, tuple)):
        return [_t.switch(condition, a, b) for a, b in zip(then_branch, else_branch, strict=True)]
    return _t.switch(condition, then_branch, else_branch)
