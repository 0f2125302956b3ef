"""Theano's module name for differentiation: ``from bptt.gradient import grad, Rop``.

Everything here lives in `bptt.grad`; this module only re-exports it.
"""
from .errors import GradientError as GradientError, NullTypeGradError as NullTypeGradError
from .grad.check import verify_grad as verify_grad
from .grad.forward import Rop as Rop
from .grad.reverse import Lop as Lop, grad as grad
from .graph.gradient_types import disconnected_grad as disconnected_grad, undefined_grad as undefined_grad
from .grad.jacobian import hessian as hessian, jacobian as jacobian
