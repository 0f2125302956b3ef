"""``theano.sandbox.rng_mrg``: `MRG_RandomStreams` on bptt's random streams.

Theano's MRG31k3p generator is not reproduced: the draws come from NumPy's
``Generator`` (as `bptt.RandomStreams`), so the numbers differ from
Theano's for the same seed; the distributions and shapes are the same.
"""
from __future__ import annotations

from bptt.tensor.random import RandomStreams


class MRG_RandomStreams(RandomStreams):  # noqa: N801  (Theano's name)
    """Random streams with the MRG signatures (``size`` first, ``ndim``, ``nstreams``)."""

    def __init__(self, seed=12345):
        super().__init__(seed)

    def uniform(self, size=(), low=0.0, high=1.0, ndim=None, dtype=None, nstreams=None,
                **kwargs):
        return super().uniform(size=size, low=low, high=high, dtype=dtype, ndim=ndim)

    def normal(self, size=(), avg=0.0, std=1.0, ndim=None, dtype=None, nstreams=None,
               truncate=False, **kwargs):
        if truncate:
            raise NotImplementedError("MRG_RandomStreams.normal(truncate=True) is not provided")
        return super().normal(size=size, avg=avg, std=std, dtype=dtype, ndim=ndim)

    def binomial(self, size=(), n=1, p=0.5, ndim=None, dtype="int64", nstreams=None, **kwargs):
        return super().binomial(size=() if size is None else size, n=n, p=p, dtype=dtype,
                                ndim=ndim)

    def multinomial(self, size=(), n=1, pvals=None, ndim=None, dtype="int64", nstreams=None,
                    **kwargs):
        return super().multinomial(size=() if size is None else size, n=n, pvals=pvals,
                                   dtype=dtype, ndim=ndim)
