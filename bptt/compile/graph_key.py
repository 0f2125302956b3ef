"""A key naming an un-rewritten graph and everything that decides its compiled code.

`bptt.function` rewrites a graph and generates its numba module before the
disk cache can be asked for that module's machine code, work a fresh process
would repeat for every function it loads. The key below
lets a later process skip both: equal keys mean equal generated code, so the
modules a first compilation loaded are recorded under the key
(`bptt.link.numba.cache.remember`) and loaded directly the next time.

The key is a hash of a description built only from values that are equal in
every process (no ``id``, no ``hash()`` of strings):

* the graph: its inputs by position (type and name), its nodes in
  topological order (op, inputs by reference, output types and names), its
  outputs by reference; a constant by its type, value, name and weakness;
* every op: its class and its ``__props__``, and its other public
  attributes (a Scan's inner graph is described as a graph, its error labels
  as strings); a scalar op: its class and all its attributes;
* every type: its class and attributes;
* the mode, every ``bptt.config`` value but those of
  ``config.NOT_IN_COMPILED_CODE``, the Python version, a digest of bptt's own
  source files (the rewrites and lowerings that turn the graph into code), and
  the machine (`machine_tag`: the libraries' versions, numba's target settings
  and the CPU's model and flags).

The machine is named without importing numba or llvmlite (loading LLVM is
most of the key's cost otherwise, and a function compiled in the background
names its graph before its first call). It needs no more precision than that:
a record written on another machine sharing the cache dir is not loaded
anyway, since each recorded module's name holds llvmlite's exact description
of the CPU (`bptt.link.numba.cache.environment_tag`); the machine in the key
keeps the records of two machines apart instead of overwriting each other.

A value of any other kind (a callable, an object without a description),
and an op, scalar op or type whose class is defined outside the bptt package
(its code, and the lowering registered for it, are not in the source digest),
make the graph *unkeyable*: `graph_key` returns None and the function is
compiled as if there were no memo. A lowering registered at run time for one
of bptt's own ops (``numba_funcify.register``) is not seen by the key either:
set ``BPTT_CACHE_DIR`` to another directory, or remove its ``graphs/``
folder, after such a change. The names of the generated modules are
hashes of their text, the runtime, numba's and NumPy's versions and the BLAS
ABI, and the cache checks each recorded module's text against its name
before loading it, so a change of any of those is a miss too.
"""
from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import importlib.util
import os
import platform
import sys

import numpy as np

from ..config import NOT_IN_COMPILED_CODE, config
from ..graph.basic import Constant, Variable
from ..graph.op import Op
from ..graph.traversal import toposort
from ..graph.type import Type
from ..tensor.scalar_ops import ScalarOp


class Unkeyable(Exception):
    """The graph holds a value the key cannot describe across processes."""


@functools.lru_cache(maxsize=None)
def source_digest():
    """sha256 of every ``.py`` file of the bptt package (paths and contents)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    h = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(folder, name)
            h.update(os.path.relpath(path, root).encode() + b"\0")
            with open(path, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


@functools.lru_cache(maxsize=None)
def machine_tag():
    """The libraries compiled code depends on, numba's target settings and the CPU
    (its model and flags from ``/proc/cpuinfo`` where there is one), as one string."""
    versions = [_installed_version(package) for package in ("numba", "llvmlite")]
    settings = [f"{k}={os.environ.get(k, '')}"
                for k in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "NUMBA_OPT")]
    return "|".join([*versions, np.__version__, *settings, platform.machine(), _cpu()])


def _installed_version(package):
    """`package`'s version from its ``.dist-info`` folder's name, found without importing
    it or `importlib.metadata` (whose import costs more than the rest of the key)."""
    spec = importlib.util.find_spec(package)
    if spec is not None and spec.origin:
        folder = os.path.dirname(os.path.dirname(spec.origin))
        prefix = package + "-"
        for name in sorted(os.listdir(folder)):
            if name.startswith(prefix) and name.endswith(".dist-info"):
                return name[len(prefix):-len(".dist-info")]
    return __import__(package).__version__   # run from a source tree


def _cpu():
    """The first processor's model and flags in ``/proc/cpuinfo``, else `platform`'s name."""
    try:
        with open("/proc/cpuinfo") as fh:
            fields = {}
            for line in fh:
                if not line.strip():
                    break
                name, _, value = line.partition(":")
                fields[name.strip()] = value.strip()
    except OSError:
        return platform.processor()
    return "|".join(fields.get(k, "") for k in ("vendor_id", "model name", "flags", "Features"))


def graph_key(fgraph, mode):
    """A hex key for compiling `fgraph` in `mode`, or None if the graph is unkeyable."""
    try:
        description = (source_digest(), sys.version, machine_tag(), mode,
                       _describe(sorted((k, v) for k, v in vars(config).items()
                                        if k not in NOT_IN_COMPILED_CODE)),
                       _Describer().graph(fgraph.inputs, fgraph.outputs))
    except Unkeyable:
        return None
    return hashlib.sha256(repr(description).encode()).hexdigest()[:32]


def _cls(t):
    return f"{t.__module__}.{t.__qualname__}"


def _bptt_cls(t):
    """`_cls` of an op, scalar op or type class; it must be bptt's own (its code is in the key)."""
    if not (t.__module__ == "bptt" or t.__module__.startswith("bptt.")):
        raise Unkeyable(f"{t.__qualname__} is defined outside bptt ({t.__module__})")
    return _cls(t)


_PLAIN = (type(None), bool, int, str)


def _describe(x, describer=None):
    """A tuple of plain values that describes `x` (see the module docstring)."""
    if type(x) in _PLAIN:
        return x
    if type(x) is float:
        return ("float", x.hex())
    if type(x) is bytes:
        return ("bytes", hashlib.sha256(x).hexdigest())
    if isinstance(x, (tuple, list)):
        return (type(x).__name__,) + tuple(_describe(v, describer) for v in x)
    if isinstance(x, dict):
        return ("dict",) + tuple(sorted((repr(_describe(k, describer)), _describe(v, describer))
                                        for k, v in x.items()))
    if isinstance(x, (set, frozenset)):
        return ("set",) + tuple(sorted(repr(_describe(v, describer)) for v in x))
    if isinstance(x, np.dtype):
        return ("dtype", x.str)
    if isinstance(x, (np.ndarray, np.generic)):
        return _array(x)
    if isinstance(x, slice):
        return ("slice",) + tuple(_describe(v, describer) for v in (x.start, x.stop, x.step))
    if isinstance(x, type):
        return ("class", _cls(x))
    if isinstance(x, enum.Enum):
        return ("enum", _cls(type(x)), x.name)
    if isinstance(x, (Type, ScalarOp)):
        return (_bptt_cls(type(x)), _describe(sorted(vars(x).items()), describer))
    if isinstance(x, Op) and describer is not None:
        return describer.op(x)
    if dataclasses.is_dataclass(x):
        return (_cls(type(x)),) + tuple(_describe(getattr(x, f.name), describer)
                                        for f in dataclasses.fields(x))
    raise Unkeyable(f"cannot describe a {type(x).__name__}")


def _array(x):
    a = np.asarray(x)
    if a.dtype.hasobject:
        raise Unkeyable("an object array")
    digest = hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()
    return ("array", type(x).__name__, a.dtype.str, a.shape, digest)


class _Describer:
    """Describes graphs and ops; each op object once."""

    def __init__(self):
        self.ops = {}

    def graph(self, inputs, outputs):
        ids = {v: ("in", k) for k, v in enumerate(inputs)}
        nodes = []
        for node in toposort(outputs, blockers=inputs):
            nodes.append((self.op(node.op), tuple(self.ref(v, ids) for v in node.inputs),
                          tuple((_describe(o.type), o.name) for o in node.outputs)))
            for k, out in enumerate(node.outputs):
                ids[out] = ("node", len(nodes) - 1, k)
        return (tuple((_describe(v.type), v.name) for v in inputs), tuple(nodes),
                tuple(self.ref(o, ids) for o in outputs))

    def ref(self, v, ids):
        if v in ids:
            return ids[v]
        if isinstance(v, Constant):
            return ("const", _describe(v.type), _describe(v.data), v.name,
                    getattr(v, "weak", None))
        raise Unkeyable(f"{v.describe()} is not computed from the inputs")

    def op(self, op):
        if id(op) not in self.ops:
            self.ops[id(op)] = (op, self._op(op))   # the op is kept so its id stays unique
        return self.ops[id(op)][1]

    def _op(self, op):
        attrs = dict(vars(op))
        parts = [_bptt_cls(type(op))]
        if "inner_inputs" in attrs and "inner_outputs" in attrs:
            parts.append(self.graph(attrs.pop("inner_inputs"), attrs.pop("inner_outputs")))
        for name in op.__props__:
            attrs.pop(name, None)
            parts.append((name, _describe(getattr(op, name), self)))
        for name, value in sorted(attrs.items()):
            if not name.startswith("_"):
                if isinstance(value, Variable):
                    raise Unkeyable(f"{op} holds a variable")
                parts.append((name, _describe(value, self)))
        return tuple(parts)
