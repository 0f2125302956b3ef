"""``theano.tensor.opt``: the names Theano code takes from it (``assert_``, ``Shape_i``)."""
from bptt.tensor.shape import Shape_i as Shape_i


def assert_(x, *conditions):
    """`x`, after checking that every condition holds at run time."""
    from bptt.tensor.assertion import check

    for i, c in enumerate(conditions):
        x = check(x, c, f"assert_: condition {i} does not hold")
    return x
