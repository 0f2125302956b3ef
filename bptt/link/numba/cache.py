"""Loading generated modules: in-process memo and the on-disk cache.

Each generated module is written once to ``<cache_dir>/modules/<hash>.py``,
where the hash covers the module source and the versions of bptt, numba and
numpy. Its functions are jitted with ``cache=True``, so numba keeps their
machine code beside the file and a second process loads it instead of
compiling. The file's content never changes for a given name, which keeps
numba's timestamp check valid.
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile

import numba
import numpy as np

from ...config import config

_loaded = {}
_VERSION = "bptt-0.1"


def source_key(source):
    h = hashlib.sha256()
    for part in (_VERSION, numba.__version__, np.__version__, source):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def disk_cache_enabled():
    return bool(config.cache_dir)


def load_module(source):
    """Import `source` as a module (memoized per process; cached on disk if enabled)."""
    key = source_key(source)
    if key in _loaded:
        return _loaded[key]
    name = f"bptt_generated_{key}"
    if disk_cache_enabled():
        folder = os.path.join(config.cache_dir, "modules")
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{name}.py")
        if not os.path.exists(path):
            _write_atomically(path, source)
    else:
        folder = tempfile.mkdtemp(prefix="bptt_")
        path = os.path.join(folder, f"{name}.py")
        _write_atomically(path, source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    # numba's cache re-imports the module by name when it loads machine code.
    sys.modules[name] = module
    spec.loader.exec_module(module)
    _loaded[key] = module
    return module


def _write_atomically(path, text):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def clear_memory_cache():
    """Forget modules loaded in this process (the disk cache stays)."""
    _loaded.clear()
