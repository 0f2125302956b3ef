"""``theano.tensor.blas``: the matrix-product op classes graphs contain."""
from bptt.tensor.blas import Gemm as Gemm
from bptt.tensor.math import Dot as Dot
