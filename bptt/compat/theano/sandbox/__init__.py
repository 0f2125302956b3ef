"""``theano.sandbox``: only ``rng_mrg`` is provided."""
from . import rng_mrg as rng_mrg
