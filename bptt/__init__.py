"""bptt: symbolic autodiff for NumPy arrays, built around scan.

Write a graph with `bptt.tensor`, loop with `bptt.scan`, differentiate with
`bptt.grad`, compile with `bptt.function`.
"""
from . import tensor as tensor
from .compile import In as In, function as function, shared as shared
from .config import config as config
from .errors import (DisconnectedInputError as DisconnectedInputError,
                     GradientError as GradientError, MissingInputError as MissingInputError,
                     NullTypeGradError as NullTypeGradError, UnusedInputError as UnusedInputError)
from .grad import (Lop as Lop, Rop as Rop, grad as grad, hessian as hessian,
                   jacobian as jacobian, verify_grad as verify_grad)
from .scan import (foldl as foldl, foldr as foldr, map as map, reduce as reduce,  # noqa: A004
                   scan as scan, until as until)
from .tensor import dot as dot
from .tensor.random import RandomStreams as RandomStreams

T = tensor
__version__ = "0.1.0"
