"""``theano.tensor.shared_randomstreams``: `RandomStreams` is bptt's.

Draws follow NumPy's ``Generator`` streams, not Theano's ``RandomState``
ones, so a seed gives other numbers than it gave in Theano.
"""
from bptt.tensor.random import RandomStreams as RandomStreams
