"""Feed-forward layers: `Dense`, `Embedding`, `Dropout`, `LayerNorm`.

Weights follow PyTorch's layouts (``Dense.weight`` is ``(out, in)``), so a
torch ``state_dict`` converted with ``.numpy()`` loads into them.
"""
from __future__ import annotations

import numpy as np

from .. import tensor as T
from ..tensor.random import RandomStreams
from . import init
from .module import Module

__all__ = ["Dense", "Embedding", "Dropout", "LayerNorm"]


class Dense(Module):
    """``y = x @ weight.T + bias`` over the last axis of `x` (any rank >= 1).

    Parameters
    ----------
    in_features, out_features : int
    bias : bool
    rng : numpy.random.Generator or int seed, optional
    weight_init : callable ``(shape, rng=...) -> array``, optional
        By default U(-1/sqrt(in), 1/sqrt(in)) as PyTorch's ``nn.Linear``; the
        bias always starts from that distribution (or zeros with ``weight_init``).
    dtype : str, optional (floatX by default)
    """

    def __init__(self, in_features, out_features, bias=True, rng=None, weight_init=None,
                 dtype=None):
        super().__init__()
        rng = init.as_rng(rng)
        bound = 1.0 / np.sqrt(in_features)
        shape = (out_features, in_features)
        w = (init.uniform(shape, -bound, bound, rng, dtype) if weight_init is None
             else np.asarray(weight_init(shape, rng=rng), dtype=init._dtype(dtype)))
        self.in_features, self.out_features = in_features, out_features
        self.add_param("weight", w)
        if bias:
            b = (init.uniform((out_features,), -bound, bound, rng, dtype) if weight_init is None
                 else init.zeros((out_features,), dtype))
            self.add_param("bias", b)
        else:
            self.bias = None

    def forward(self, x):
        y = T.dot(x, self.weight.T)
        return y if self.bias is None else y + self.bias


class Embedding(Module):
    """Rows of ``weight`` (``(num_embeddings, dim)``, N(0, 1) as in PyTorch) picked by integer `x`.

    `x` may have any shape; the result has shape ``x.shape + (dim,)``. The
    gradient of ``weight`` is nonzero only in the rows `x` picked (summed
    when a row is picked twice).
    """

    def __init__(self, num_embeddings, embedding_dim, rng=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.add_param("weight", init.normal((num_embeddings, embedding_dim), 1.0,
                                             rng=rng, dtype=dtype))

    def forward(self, x):
        x = T.as_tensor_variable(x)
        if x.dtype.startswith("float"):
            raise TypeError(f"Embedding: indices must be integers, got {x.dtype} "
                            f"(use T.imatrix / T.lmatrix, or T.cast(x, 'int64'))")
        return self.weight[x]


class Dropout(Module):
    """Zero each entry with probability `p` and scale the rest by ``1 / (1 - p)``.

    Active in graphs built in training mode, the identity after ``eval()``.
    The mask comes from a `RandomStreams` (seeded with `seed`) whose state
    advances at each call of the compiled function. Outside a `scan` step
    nothing needs passing; inside one, pass scan's updates to `function`.
    """

    def __init__(self, p=0.5, seed=0):
        super().__init__()
        if not 0 <= p < 1:
            raise ValueError(f"Dropout: p must be in [0, 1), got {p}")
        self.p = float(p)
        self.rng = RandomStreams(seed)

    def forward(self, x):
        x = T.as_tensor_variable(x)
        if not self.training or self.p == 0:
            return x
        keep = self.rng.binomial(size=x.shape, p=1 - self.p, dtype=x.dtype)
        return x * keep / (1 - self.p)


class LayerNorm(Module):
    """Normalise the last axis to mean 0, variance 1 (biased), then ``* weight + bias``."""

    def __init__(self, normalized_shape, eps=1e-5, dtype=None):
        super().__init__()
        self.eps = eps
        self.add_param("weight", init.constant((normalized_shape,), 1.0, dtype))
        self.add_param("bias", init.zeros((normalized_shape,), dtype))

    def forward(self, x):
        mu = T.mean(x, axis=-1, keepdims=True)
        var = T.mean(T.sqr(x - mu), axis=-1, keepdims=True)
        return (x - mu) / T.sqrt(var + self.eps) * self.weight + self.bias
