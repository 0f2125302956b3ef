"""Run Theano code on bptt by changing only the import line.

::

    import bptt.compat.theano as theano
    import bptt.compat.theano.tensor as T      # or: T = theano.tensor

    result, updates = theano.scan(fn, sequences=..., outputs_info=...)
    f = theano.function([x], result, updates=updates)

or, before unchanged code runs ``import theano``::

    import bptt.compat.theano
    bptt.compat.theano.install()

The package mirrors Theano's module tree, one module here per Theano module
that user code imports (``theano.tensor``, ``theano.tensor.nnet``,
``theano.tensor.shared_randomstreams``, ``theano.sandbox.rng_mrg``,
``theano.gradient``, ``theano.ifelse``, ``theano.printing``,
``theano.compile``, ``theano.scan_module``, ...). Each holds bptt's
functions under Theano's names, plus the few places where Theano 1.0's
meaning differs from bptt's (``softmax`` of a vector is a row, Theano's
``disconnected_grad``, ``config``'s attributes, mode names). docs/theano.md
lists what works unchanged, what differs and what is not provided.

`install()` registers this package as ``theano`` in ``sys.modules`` and an
import hook that maps every ``theano.X`` submodule to ``bptt.compat.theano.X``
(opt-in: it is never done on import).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

import numpy as np

import bptt as _bptt
from bptt.errors import MissingInputError as MissingInputError
from bptt.graph.basic import Apply as Apply, Constant as Constant, Variable as Variable
from bptt.graph.op import Op as Op
from bptt.graph.replace import clone as _graph_clone
from bptt.scan import (foldl as foldl, foldr as foldr, map as map, reduce as reduce,  # noqa: A004
                       until as until)
from bptt.tensor import dot as dot

from . import tensor as tensor
from .compile import (In as In, Mode as Mode, Param as Param, function as function,
                      shared as shared)
from .configparser import change_flags as change_flags, config as config
from .gradient import grad as grad
from .scan_module import scan as scan

__version__ = f"bptt-{_bptt.__version__}"

_LAZY = ("gradient", "printing", "ifelse", "sandbox", "scan_module", "compile", "gof",
         "scalar", "compat")


def __getattr__(name):
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    if name in ("pp", "pprint"):   # Theano's `from theano import pp`
        return getattr(importlib.import_module(f"{__name__}.printing"), name)
    raise AttributeError(f"module 'theano' (bptt.compat.theano) has no attribute {name!r}; "
                         "docs/theano.md lists what bptt provides of Theano")


def _asarray(a, dtype, order=None):
    """``numpy.asarray(a, dtype, order)`` (Theano's helper of that name)."""
    return np.asarray(a, dtype=dtype, order=order)


def clone(output, replace=None, strict=True, share_inputs=True):
    """A copy of the graph of `output` with the substitutions of `replace`.

    Theano's ``theano.clone``: `output` is a variable or a list of them;
    `replace` maps variables of the graph to new ones (a dict or pairs). With
    ``share_inputs`` (the default) the copy reads the same inputs and shared
    variables, otherwise fresh copies of them. `strict` is accepted for
    compatibility: replacements must have their variable's type, as in bptt.
    """
    from bptt.graph.replace import clone_replace

    pairs = list(replace.items()) if isinstance(replace, dict) else list(replace or ())
    if share_inputs:
        return clone_replace(output, dict(pairs))
    outs = output if isinstance(output, (list, tuple)) else [output]
    copied = _graph_clone(list(outs), copy_inputs=True)
    return copied if isinstance(output, (list, tuple)) else copied[0]


class _AliasLoader(importlib.abc.Loader):
    """Loads ``theano.X`` as the already imported module ``bptt.compat.theano.X``."""

    def __init__(self, module):
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        module.__spec__ = self.spec   # importlib set the alias's spec: keep the module's own


class _TheanoFinder(importlib.abc.MetaPathFinder):
    """Finds ``theano.<sub>`` as ``bptt.compat.theano.<sub>``."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("theano."):
            return None
        target_name = f"{__name__}.{fullname[len('theano.'):]}"
        try:
            module = importlib.import_module(target_name)
        except ModuleNotFoundError as exc:
            if exc.name != target_name:
                raise
            return None
        spec = importlib.util.spec_from_loader(fullname, _AliasLoader(module),
                                               is_package=hasattr(module, "__path__"))
        return spec


_FINDER = _TheanoFinder()


def install():
    """Register this package as ``theano`` so that ``import theano`` runs on bptt.

    ``import theano.tensor.nnet``, ``from theano.sandbox.rng_mrg import
    MRG_RandomStreams`` and every other submodule bptt provides then import
    this package's modules. Returns the module. Does nothing if another
    ``theano`` is already imported.
    """
    module = sys.modules[__name__]
    if sys.modules.setdefault("theano", module) is module and _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    return sys.modules["theano"]
