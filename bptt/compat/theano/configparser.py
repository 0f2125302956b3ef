"""``theano.config``: the configuration attributes Theano code reads and sets.

``floatX`` is `bptt.config.floatX` itself. ``mode`` takes Theano's mode names
(``'FAST_RUN'``, ``'FAST_COMPILE'``, ``'DebugMode'``, ...) and bptt's
(``'NUMBA'``, ``'PY'``, which set `bptt.config.mode`). A function compiled
in FAST_COMPILE or DebugMode runs in PY mode, one in FAST_RUN in
`bptt.config.mode`. ``device`` is always ``'cpu'``. The other
attributes hold Theano's defaults and may be set; they change nothing in bptt
(``warn.*``, ``exception_verbosity``, ``on_opt_error``, ...), except
``compute_test_value``, which `bptt.compat.theano.tensor` reads (see
docs/theano.md). An attribute Theano did not have is an AttributeError.
"""
from __future__ import annotations

import contextlib

from bptt.config import config as _bptt_config

#: Theano's mode names and the bptt mode each runs as (None: `bptt.config.mode`).
MODE_NAMES = {"FAST_RUN": None, "Mode": None, "ProfileMode": None, "FAST_COMPILE": "PY",
              "DebugMode": "PY", "DEBUG_MODE": "PY", "NanGuardMode": "PY",
              "NUMBA": "NUMBA", "PY": "PY"}


class _Section:
    """A group of options (``config.warn``, ``config.scan``, ...)."""

    def __init__(self, name, **defaults):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_values", dict(defaults))

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"theano.config.{self._name} has no option {name!r} in "
                                 "bptt.compat.theano") from None

    def __setattr__(self, name, value):
        if name not in self._values:
            raise AttributeError(f"theano.config.{self._name} has no option {name!r} in "
                                 "bptt.compat.theano")
        self._values[name] = value


class _Warn(_Section):
    """``config.warn``: Theano's warnings about its own past bugs; every one is False
    here (bptt never had those bugs), and any name may be set."""

    def __getattr__(self, name):
        return self._values.get(name, False)

    def __setattr__(self, name, value):
        self._values[name] = value


class TheanoConfig:
    """``theano.config`` for code running on bptt."""

    _plain = {"device": "cpu", "init_gpu_device": "", "force_device": False,
              "compute_test_value": "off", "compute_test_value_opt": "off",
              "print_test_value": False, "exception_verbosity": "low",
              "on_opt_error": "warn", "on_shape_error": "warn", "optimizer": "fast_run",
              "optimizer_excluding": "", "optimizer_including": "", "linker": "cvm",
              "cxx": "", "allow_gc": True, "cycle_detection": "regular",
              "deterministic": "default", "profile": False, "profile_memory": False,
              "traceback__limit": 8, "compiledir": "", "base_compiledir": "",
              "openmp": False, "cast_policy": "custom", "int_division": "int",
              "reoptimize_unpickled_function": False, "unpickle_function": True,
              "check_input": True, "on_unused_input": "raise", "print_active_device": False}

    def __init__(self):
        values = dict(self._plain)
        values["warn"] = _Warn("warn")
        values["scan"] = _Section("scan", allow_output_prealloc=True, allow_gc=True, debug=False)
        values["unittests"] = _Section("unittests", rseed=666)
        values["gpuarray"] = _Section("gpuarray", preallocate=0, sched="default")
        values["DebugMode"] = _Section("DebugMode", check_py=True, check_c=False)
        values["tensor"] = _Section("tensor", cmp_sloppy=0, local_elemwise_fusion=True)
        values["blas"] = _Section("blas", ldflags="")
        values["numpy"] = _Section("numpy", seterr_all="ignore")
        object.__setattr__(self, "_values", values)

    @property
    def floatX(self):  # noqa: N802  (Theano's name)
        return _bptt_config.floatX

    @floatX.setter
    def floatX(self, value):  # noqa: N802
        _bptt_config.floatX = value

    @property
    def mode(self):
        return self._values.get("mode", "FAST_RUN")

    @mode.setter
    def mode(self, value):
        if value not in MODE_NAMES:
            raise ValueError(f"theano.config.mode: {value!r} is not one of {sorted(MODE_NAMES)}")
        if value in ("NUMBA", "PY"):
            _bptt_config.mode = value
        self._values["mode"] = value

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"theano.config has no option {name!r} in bptt.compat.theano "
                                 "(docs/theano.md lists the options)") from None

    def __setattr__(self, name, value):
        if isinstance(getattr(type(self), name, None), property):
            object.__setattr__(self, name, value)
            return
        if name not in self._values or isinstance(self._values[name], _Section):
            raise AttributeError(f"theano.config has no option {name!r} in bptt.compat.theano")
        if name == "compute_test_value" and value not in ("off", "ignore", "warn", "raise",
                                                          "pdb"):
            raise ValueError(f"compute_test_value must be 'off', 'ignore', 'warn', 'raise' or "
                             f"'pdb', got {value!r}")
        self._values[name] = value


config = TheanoConfig()


def _get(name):
    obj = config
    for part in name.split("__"):
        obj = getattr(obj, part)
    return obj


def _set(name, value):
    *path, last = name.split("__")
    obj = config
    for part in path:
        obj = getattr(obj, part)
    setattr(obj, last, value)


class change_flags(contextlib.ContextDecorator):  # noqa: N801  (Theano's name)
    """Set config options for a ``with`` block or a decorated function, then restore
    them (``change_flags(on_opt_error='raise')``, ``scan__allow_gc=False`` for
    ``config.scan.allow_gc``)."""

    def __init__(self, args=(), **kwargs):
        self.flags = dict(args, **kwargs)
        self.saved = []

    def __enter__(self):
        self.saved.append({k: _get(k) for k in self.flags})
        for k, v in self.flags.items():
            _set(k, v)
        return self

    def __exit__(self, *exc):
        for k, v in self.saved.pop().items():
            _set(k, v)
        return False


