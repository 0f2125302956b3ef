"""``theano.tensor``: bptt.tensor under Theano's names, with Theano 1.0's extras.

Every public name of `bptt.tensor` is here, plus what Theano kept in this
namespace: `grad`, `Rop`, `Lop`, `jacobian`, `hessian`, `verify_grad`; the
broadcastable row and column constructors (``dcol``, ``frow``, ...); and the
submodules ``nnet`` (with Theano's vector-softmax), ``shared_randomstreams``,
``xlogx``, ``opt``, ``sharedvar``, ``subtensor``, ``blas``, ``basic``,
``elemwise``, ``extra_ops``, ``signal`` (pooling), ``type``; and `Variable`, `Constant`,
`Apply` (Theano's graph classes, which it re-exported here).
"""
import bptt.tensor as _t
from bptt.grad import Lop as Lop, Rop as Rop, hessian as hessian, jacobian as jacobian
from bptt.tensor.elemwise import Elemwise as Elemwise
from bptt.tensor.math import Dot as Dot
from bptt.graph.basic import Apply as Apply, Constant as Constant, Variable as Variable

from ..gradient import grad as grad, verify_grad as verify_grad

# Every public name of bptt.tensor (its namespace is the base of Theano's), but not the
# modules this package has its own of: `from . import extra_ops` would find bptt's.
globals().update({k: v for k, v in vars(_t).items()
                  if not k.startswith("_") and k not in ("nnet", "extra_ops", "annotations")})

from . import (basic as basic, blas as blas, elemwise as elemwise,  # noqa: E402
               extra_ops as extra_ops, nnet as nnet, opt as opt,
               shared_randomstreams as shared_randomstreams, sharedvar as sharedvar,
               signal as signal, subtensor as subtensor, type as type, xlogx as xlogx)
from .type import TensorType as TensorType  # noqa: E402  (Theano's signature)
from .basic import (addbroadcast as addbroadcast, diag as diag,  # noqa: E402
                    flatten as flatten,
                    patternbroadcast as patternbroadcast, unbroadcast as unbroadcast)
from .basic import (abs_ as abs_, allclose as allclose, eye as eye,  # noqa: E402
                    floor_div as floor_div, horizontal_stack as horizontal_stack,
                    identity_like as identity_like, inv as inv, iround as iround,
                    isclose as isclose, largest as largest, mean as mean, prod as prod,
                    round as round, round_half_away_from_zero as round_half_away_from_zero,
                    round_half_to_even as round_half_to_even, smallest as smallest,
                    stacklists as stacklists, sum as sum, swapaxes as swapaxes, tri as tri,
                    tril as tril, triu as triu, vertical_stack as vertical_stack)


def _typed(dtype, shape, kind):
    def make(name=None, dtype=dtype):
        from bptt.config import config

        return _t.TensorType(dtype or config.floatX, shape)(name)

    make.__name__ = kind
    make.__doc__ = (f"A new {len(shape)}-d input whose {'second' if shape == (None, 1) else 'first'}"
                    " dimension has length 1 (broadcastable).")
    return make


for _p, _dt in {"": None, "b": "int8", "w": "int16", "i": "int32", "l": "int64",
                "f": "float32", "d": "float64"}.items():
    globals()[_p + "row"] = _typed(_dt, (1, None), _p + "row")
    globals()[_p + "col"] = _typed(_dt, (None, 1), _p + "col")
    if _p in ("", "f", "d", "i", "l"):
        globals()[_p + "rows"] = _t._plural(globals()[_p + "row"], _p + "row")
        globals()[_p + "cols"] = _t._plural(globals()[_p + "col"], _p + "col")
del _p, _dt
