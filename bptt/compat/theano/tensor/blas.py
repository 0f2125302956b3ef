"""``theano.tensor.blas``: the matrix-product op classes graphs contain.

Theano rewrote a product of two matrices into its BLAS op ``Dot22``; bptt's
`Dot` of two matrices is that call already (its lowering calls BLAS), so
``Dot22`` names bptt's `Dot`, and ``Gemm`` bptt's `Gemm`.
"""
from bptt.tensor.blas import Gemm as Gemm
from bptt.tensor.math import Dot as Dot

Dot22 = Dot
