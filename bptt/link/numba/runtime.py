"""Helpers that generated modules import (``from bptt.link.numba.runtime import *``).

They are jitted with ``cache=True`` in this file, so their machine code is
cached once for every generated module.
"""
import numba
import numpy as np

__all__ = ["shape_tuple_1", "check_broadcast"]


@numba.njit(cache=True)
def shape_tuple_1(v):
    return (v[0],)


@numba.njit(cache=True)
def check_broadcast(a, b):
    return a == b or a == 1 or b == 1
