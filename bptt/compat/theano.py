"""Run Theano-era scan code on bptt by changing only the import line.

::

    import bptt.compat.theano as theano
    import bptt.compat.theano.tensor as T      # or: T = theano.tensor

    result, updates = theano.scan(fn, sequences=..., outputs_info=...)
    f = theano.function([x], result, updates=updates)

What maps to what:

==========================================  =====================================
Theano                                       bptt
==========================================  =====================================
``theano.scan``, ``map``, ``reduce``,        `bptt.scan` and its views
``foldl``, ``foldr``
``theano.scan_module.until``                 `bptt.until`
``theano.function``, ``shared``, ``dot``,    the bptt functions of the same name
``grad``, ``config.floatX``
``theano.tensor`` (``T.nnet``,               `bptt.tensor` (``T.nnet``,
``T.shared_randomstreams.RandomStreams``)    ``T.shared_randomstreams`` maps to
                                             `bptt.tensor.random`)
``theano.gradient``, ``theano.printing``     `bptt.gradient`, `bptt.printing`
==========================================  =====================================

`install()` also registers this module as ``theano`` in ``sys.modules`` so
that unmodified ``import theano`` statements find it (opt-in: it is never
done on import).
"""
from __future__ import annotations

import sys
import types

import bptt as _bptt
from bptt import config as config
from bptt import tensor as tensor
from bptt.compile import function as function, shared as shared
from bptt.grad import grad as grad
from bptt.scan import (foldl as foldl, foldr as foldr, map as map, reduce as reduce,  # noqa: A004
                       scan as scan, until as until)
from bptt.tensor import dot as dot

#: ``theano.scan_module``: where Theano kept ``until`` and the scan functions.
scan_module = types.SimpleNamespace(scan=scan, until=until, map=map, reduce=reduce,
                                    foldl=foldl, foldr=foldr)

__version__ = f"bptt-{_bptt.__version__}"

_SUBMODULES = ("tensor", "gradient", "printing")


def __getattr__(name):
    if name in ("gradient", "printing"):
        import importlib

        return importlib.import_module(f"bptt.{name}")
    raise AttributeError(f"module 'bptt.compat.theano' has no attribute {name!r} (bptt "
                         f"implements Theano's scan API, not all of Theano)")


def _alias_submodules(prefix):
    """Make ``import <prefix>.tensor`` (and gradient, printing) find bptt's modules."""
    import importlib

    for sub in _SUBMODULES:
        sys.modules.setdefault(f"{prefix}.{sub}", importlib.import_module(f"bptt.{sub}"))
    sys.modules.setdefault(f"{prefix}.scan_module", scan_module)


def install():
    """Register this module as ``theano`` so that ``import theano`` runs on bptt.

    Returns the module. Does nothing if another ``theano`` is already imported.
    """
    module = sys.modules[__name__]
    if sys.modules.setdefault("theano", module) is module:
        _alias_submodules("theano")
    return sys.modules["theano"]


_alias_submodules(__name__)
