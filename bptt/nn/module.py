"""`Module`: a named container of parameters (shared variables) and submodules.

A module registers its parameters with `add_param` and its submodules by
assigning them as attributes. Names are dotted paths, as in PyTorch
(``"lstm.weight_ih_l0"``, ``"out.weight"``), and every shared variable
carries its full name, so graphs and error messages name the parameter.
`state_dict` and `load_state_dict` move values in and out as NumPy arrays;
`save` and `load` write and read them as one ``.npz`` file.

Graphs are built by calling a module. Whether dropout is active is decided
when the graph is built: build the training graph after `train()` (the
default) and the evaluation graph after `eval()`.
"""
from __future__ import annotations

import os
from collections import OrderedDict

import numpy as np

from ..compile import shared

__all__ = ["Module", "Sequential", "save", "load"]


class Module:
    """Base class of layers: parameters, submodules and the training flag."""

    def __init__(self):
        object.__setattr__(self, "_params", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_prefix", "")
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if isinstance(value, Module):
            if "_modules" not in self.__dict__:
                raise RuntimeError(f"{type(self).__name__}: call Module.__init__() before "
                                   f"assigning submodule {name!r}")
            self._modules[name] = value
            value._rename(self._prefix + name + ".")
        object.__setattr__(self, name, value)

    def add_param(self, name, value, trainable=True):
        """Register ``value`` (an array) as the shared variable ``self.<name>``.

        Parameters
        ----------
        name : str
            Local name; the shared variable is named with its full dotted path.
        value : numpy.ndarray
        trainable : bool
            False for buffers (saved and loaded, but not in `params()`).

        Returns
        -------
        SharedVariable
        """
        if name in self._params or name in self._modules:
            raise ValueError(f"{type(self).__name__}: a parameter or submodule {name!r} "
                             f"exists already")
        var = shared(np.asarray(value), name=self._prefix + name)
        var.trainable = trainable
        self._params[name] = var
        object.__setattr__(self, name, var)
        return var

    def _rename(self, prefix):
        object.__setattr__(self, "_prefix", prefix)
        for name, var in self._params.items():
            var.name = prefix + name
        for name, mod in self._modules.items():
            mod._rename(prefix + name + ".")

    def named_params(self, trainable_only=True):
        """(dotted name, shared variable) pairs, in registration order, submodules after."""
        out = [(self._prefix + n, v) for n, v in self._params.items()
               if v.trainable or not trainable_only]
        for mod in self._modules.values():
            out.extend(mod.named_params(trainable_only))
        return out

    def params(self):
        """The trainable shared variables, in the order of `named_params`."""
        return [v for _, v in self.named_params()]

    def modules(self):
        """This module and every submodule, depth first."""
        out = [self]
        for mod in self._modules.values():
            out.extend(mod.modules())
        return out

    def train(self, mode=True):
        """Build training graphs from now on (dropout active); returns self."""
        for mod in self.modules():
            object.__setattr__(mod, "training", bool(mode))
        return self

    def eval(self):
        """Build evaluation graphs from now on (dropout off); returns self."""
        return self.train(False)

    def n_params(self):
        """Number of trainable scalars."""
        return int(sum(v.get_value(borrow=True).size for v in self.params()))

    def state_dict(self):
        """Every parameter and buffer as ``{name relative to self: array copy}``."""
        cut = len(self._prefix)
        return OrderedDict((n[cut:], v.get_value())
                           for n, v in self.named_params(trainable_only=False))

    def load_state_dict(self, state, strict=True):
        """Set parameters from ``{name: array}`` (a dict, an ``.npz`` file or its path).

        Every entry is checked before any value is set: a missing or extra
        name (with `strict`) or a mis-shaped value raises a ``ValueError``
        listing all of them, and the module is left unchanged. Values are
        cast to each parameter's dtype when that loses nothing beyond
        float64 -> float32 rounding.
        """
        if isinstance(state, (str, os.PathLike)):
            with np.load(state) as f:
                state = {k: f[k] for k in f.files}
        cut = len(self._prefix)
        mine = OrderedDict((n[cut:], v) for n, v in self.named_params(trainable_only=False))
        problems = []
        missing = [n for n in mine if n not in state]
        extra = [n for n in state if n not in mine]
        if strict and missing:
            problems.append(f"missing entries: {', '.join(missing)}")
        if strict and extra:
            problems.append(f"unexpected entries: {', '.join(extra)}")
        by_name = bool(problems)
        values = {}
        for name, var in mine.items():
            if name not in state:
                continue
            value = np.asarray(state[name])
            want = var.get_value(borrow=True)
            if value.shape != want.shape:
                problems.append(f"{name!r} has shape {value.shape}, the module's parameter "
                                f"has shape {want.shape}")
                continue
            if value.dtype.kind == "f" and want.dtype.kind == "f":
                value = value.astype(want.dtype)
            values[name] = value
        if problems:
            hint = " (pass strict=False to ignore missing and extra names)" if by_name else ""
            raise ValueError(f"{type(self).__name__}.load_state_dict: " + "; ".join(problems)
                             + hint)
        for name, value in values.items():
            mine[name].set_value(value)

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} defines no forward()")

    def __repr__(self):
        inner = ", ".join(f"{n}={tuple(v.get_value(borrow=True).shape)}"
                          for n, v in self._params.items())
        subs = "".join(f"\n  ({n}): " + repr(m).replace("\n", "\n  ")
                       for n, m in self._modules.items())
        return f"{type(self).__name__}({inner}){subs}"


class Sequential(Module):
    """Apply modules in order: ``Sequential(a, b)(x) == b(a(x))``."""

    def __init__(self, *layers):
        super().__init__()
        for i, layer in enumerate(layers):
            setattr(self, str(i), layer)

    def forward(self, x):
        for layer in self._modules.values():
            x = layer(x)
        return x


def save(module, path):
    """Write ``module.state_dict()`` to `path` as an uncompressed ``.npz``."""
    np.savez(path, **module.state_dict())


def load(module, path, strict=True):
    """Load the ``.npz`` at `path` into `module` (see `Module.load_state_dict`)."""
    module.load_state_dict(path, strict=strict)
