"""``theano.scalar``: only ``sharedvar`` is provided (scalars are 0-d tensors in bptt)."""
from . import sharedvar as sharedvar
