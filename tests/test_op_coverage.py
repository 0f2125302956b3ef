"""Every op class of bptt has a reference implementation, a numba lowering and a
gradient rule (or says why it has none).

Op classes are found by importing every module under ``bptt/`` and walking
``Op.__subclasses__()`` recursively, so ops added later (indexing, random
numbers, scan...) are covered without editing this file. An abstract base
that is never instantiated says so with ``abstract = True`` in its own class
body (subclasses do not inherit the mark).

Checks per concrete op class:

* ``perform`` is overridden (not `Op.perform`);
* ``numba_funcify.lookup`` finds a lowering (registered for the class or a base);
* a gradient rule: ``L_op`` overridden, or ``no_gradient`` set to a reason.
"""
import importlib
import pkgutil

import pytest

import bptt
from bptt.graph.op import Op


def _import_all():
    """Import every bptt module; return {module name: error} for those that fail."""
    errors = {}
    for info in pkgutil.walk_packages(bptt.__path__, prefix="bptt."):
        try:
            importlib.import_module(info.name)
        except Exception as exc:  # noqa: BLE001  (reported by the test below)
            errors[info.name] = f"{type(exc).__name__}: {exc}"
    return errors


IMPORT_ERRORS = _import_all()


def _op_classes():
    seen, stack = [], list(Op.__subclasses__())
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.append(cls)
        stack.extend(cls.__subclasses__())
    return sorted((c for c in seen if c.__module__.startswith("bptt.")
                   and not vars(c).get("abstract", False)),
                  key=lambda c: (c.__module__, c.__qualname__))


OP_CLASSES = _op_classes()


def _name(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def _lowering(cls):
    import bptt.link.numba.dispatch  # noqa: F401  (registers every lowering)
    from bptt.link.numba.registry import numba_funcify

    return numba_funcify.lookup(cls.__new__(cls))


def _missing(cls):
    """What `cls` lacks, as a list of phrases (empty when complete)."""
    missing = []
    if cls.perform is Op.perform:
        missing.append("perform (the NumPy reference)")
    if _lowering(cls) is None:
        missing.append(f"a numba lowering (numba_funcify.register({cls.__name__}))")
    if cls.L_op is Op.L_op and cls.no_gradient is None:
        missing.append('a gradient rule (L_op, or no_gradient = "reason")')
    return missing


def test_every_bptt_module_imports():
    assert not IMPORT_ERRORS, "modules that fail to import (their ops are not checked): " + \
        "; ".join(f"{m}: {e}" for m, e in IMPORT_ERRORS.items())


def test_the_walk_finds_the_ops_of_every_family():
    names = {c.__name__ for c in OP_CLASSES}
    assert {"Elemwise", "Dot", "Sum", "Max", "Argmax", "Reshape", "DimShuffle", "SumTo",
            "BroadcastTo", "Alloc", "ARange", "Join", "MakeVector", "Shape"} <= names
    assert "Reduce" not in names  # marked abstract


@pytest.mark.parametrize("cls", OP_CLASSES, ids=_name)
def test_op_is_complete(cls):
    missing = _missing(cls)
    assert not missing, f"{_name(cls)} lacks " + ", ".join(missing)


def test_coverage_report():
    """One summary of every incomplete op (the parametrized test names each one)."""
    report = {_name(c): _missing(c) for c in OP_CLASSES}
    incomplete = {k: v for k, v in report.items() if v}
    assert not incomplete, "incomplete ops:\n" + "\n".join(
        f"  {k}: lacks {', '.join(v)}" for k, v in incomplete.items())
