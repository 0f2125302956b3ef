"""Compatibility layers for code written against other libraries (see `bptt.compat.theano`)."""
