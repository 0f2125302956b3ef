"""``theano.tensor.opt``: the names Theano code takes from it (``assert_``, ``Shape_i``)."""
from bptt.tensor.shape import Shape_i as Shape_i


def assert_(x, *conditions):
    """`x`, after checking that every condition holds at run time."""
    from bptt.tensor import as_tensor_variable, neq
    from bptt.tensor.assertion import check

    for i, c in enumerate(conditions):
        c = as_tensor_variable(c)
        x = check(x, c if c.dtype == "bool" else neq(c, 0), f"assert_: condition {i} does not hold")
    return x
