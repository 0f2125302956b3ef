"""``theano.tensor.signal.pool``: `pool_2d` (bptt.tensor.pool)."""
from bptt.tensor.pool import pool_2d as pool_2d
