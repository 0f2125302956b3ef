"""What generated code imports: ``from bptt.link.numba.runtime import *``.

Generated modules start with that line and decorate every function with
`jit` (jitting.py, with the numba options and the disk cache). The helpers
they call live in modules of their own, each gathered here: the scan loop's
(scan_runtime.py), BLAS (blas.py), vectorizable transcendentals
(fastmath.py), special functions (special.py), elementwise shapes
(elemwise_runtime.py), allocation (alloc_runtime.py), SumTo
(reduce_runtime.py), chunked products (chunk_runtime.py), the loops of
Patches (patches_runtime.py) and indexed writes (region_runtime.py). Each
helper module imports jitting.py, never this one.
"""
from __future__ import annotations

from .jitting import (OPTIONS, DiskCache, cache_on_disk, collector_paused,  # noqa: F401
                      jit, select)
from .jitting import __all__  # noqa: F401

# Helpers of the scan lowering live in their own module; generated code sees them here.
from .scan_runtime import *  # noqa: E402,F401,F403
from .scan_runtime import __all__ as _scan_all  # noqa: E402

__all__ = __all__ + list(_scan_all)

# BLAS matrix products (gemm_into, dot_mm...); import them from here, not from .blas.
from .blas import *  # noqa: E402,F401,F403
from .blas import __all__ as _blas_all  # noqa: E402

__all__ = __all__ + list(_blas_all)

# Vectorizable exp/log/tanh/sigmoid... for scalar code (fast_exp, ...): see fastmath.py.
from .fastmath import *  # noqa: E402,F401,F403
from .fastmath import __all__ as _fastmath_all  # noqa: E402

__all__ = __all__ + list(_fastmath_all)

# erf, gamma, psi, erfinv... of float64 scalars (special_erf, ...): see special.py.
from .special import *  # noqa: E402,F401,F403
from .special import __all__ as _special_all  # noqa: E402

__all__ = __all__ + list(_special_all)

# Output shape of the elementwise loop kernels (broadcast_shape): see elemwise_runtime.py.
from .elemwise_runtime import *  # noqa: E402,F401,F403
from .elemwise_runtime import __all__ as _elemwise_all  # noqa: E402

__all__ = __all__ + list(_elemwise_all)

# np.empty/np.zeros/np.full, copies, views, broadcast_into and check_index_<d> written into
# the caller (alloc_empty...): see alloc_runtime.py.
from .alloc_runtime import *  # noqa: E402,F401,F403
from .alloc_runtime import __all__ as _alloc_all  # noqa: E402

__all__ = __all__ + list(_alloc_all)

# Calls that do not recompile the callee inside the caller: see separate.py.
from .separate import separately  # noqa: E402,F401

__all__ = __all__ + ["separately"]

# SumTo's run-time unbroadcast, one call per site (sum_to_call, sum_to_new_call): see reduce_runtime.py.
from .reduce_runtime import *  # noqa: E402,F401,F403
from .reduce_runtime import __all__ as _reduce_all  # noqa: E402

__all__ = __all__ + list(_reduce_all)

# One chunk's product of a summed nit_sot (chunk_product_call): see chunk_runtime.py.
from .chunk_runtime import *  # noqa: E402,F401,F403
from .chunk_runtime import __all__ as _chunk_all  # noqa: E402

__all__ = __all__ + list(_chunk_all)

# The loops of Patches and PatchesAdjoint, geometry as an argument: see patches_runtime.py.
from .patches_runtime import *  # noqa: E402,F401,F403
from .patches_runtime import __all__ as _patches_all  # noqa: E402

__all__ = __all__ + list(_patches_all)

# SetSubtensor's and IncSubtensor's writes (copy_into_call, add_into_call): see region_runtime.py.
from .region_runtime import *  # noqa: E402,F401,F403
from .region_runtime import __all__ as _region_all  # noqa: E402

__all__ = __all__ + list(_region_all)
