"""``theano.tensor.signal.downsample``: the pooling of Theano before 0.9."""
from bptt.tensor.pool import pool_2d


def max_pool_2d(input, ds, ignore_border=None, st=None, padding=(0, 0), mode="max"):
    """`pool_2d` under its old name and argument names (`ds`, `st`, `padding`)."""
    return pool_2d(input, ws=ds, ignore_border=ignore_border, stride=st, pad=padding,
                   mode=mode)
