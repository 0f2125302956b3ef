"""``theano.tensor.signal``: pooling (``pool``, and ``downsample``, its older name)."""
from . import downsample as downsample, pool as pool
