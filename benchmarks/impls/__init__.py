"""Implementations compared by ``benchmarks/peers.py``: one module per implementation.

Each module defines

* ``KINDS``: the cell types it implements (``"rnn"``, ``"lstm"``);
* ``build(kind, dtype)``: an :class:`~impls.cases.Built` whose ``run`` computes
  the loss and its gradients, in the order of :func:`impls.cases.output_names`.

A module whose library does not import is reported as skipped.
"""
from __future__ import annotations

import importlib

# name -> module in this package; the order is the order of the table rows
MODULES = {
    "bptt": "bptt_impl",
    "numba": "numba_ref",
    "numpy": "numpy_ref",
    "jax": "jax_impl",
    "torch": "torch_impl",
    "torch-nn": "torch_nn_impl",
    "pytensor": "pytensor_impl",
}


def load(name):
    """The module of implementation `name` (ImportError if its library is missing)."""
    return importlib.import_module(f"impls.{MODULES[name]}")
