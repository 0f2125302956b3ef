"""``theano.scalar.sharedvar``: a shared scalar is a shared 0-d tensor in bptt."""
from bptt.compile import shared as shared
