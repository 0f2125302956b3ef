"""Differentiation: reverse mode, forward mode, Jacobians and gradient checks."""
from .reverse import Lop as Lop, grad as grad
from .forward import Rop as Rop
from ..graph.gradient_types import (disconnected_grad as disconnected_grad,
                                    undefined_grad as undefined_grad)
from .check import verify_grad as verify_grad
from .jacobian import hessian as hessian, jacobian as jacobian
