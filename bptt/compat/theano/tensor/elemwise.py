"""``theano.tensor.elemwise``: the elementwise and broadcasting op classes."""
from bptt.tensor.elemwise import Elemwise as Elemwise
from bptt.tensor.shape import DimShuffle as DimShuffle
