"""Loading generated modules: in-process memo and the on-disk cache.

Each generated module is written once to ``<cache_dir>/modules/<name>.py``,
where the name holds a hash of the module source, of ``runtime.py`` and the
modules beside it (the jit options and helpers every module imports), of the bptt, numba and numpy
versions and of numba's optimisation level. The same text always gets the same name and a file is never
rewritten with other content, so numba's cached machine code for it (under
``<cache_dir>/numba/``, see `runtime.DiskCache`) stays valid, and a second
process that generates the same text loads that code instead of compiling.

Without a cache dir (``BPTT_CACHE_DIR=""``) modules go to a private temporary
directory removed at exit, and nothing is cached on disk.

Graph memo: `remember` records, under a key of the un-rewritten graph
(`bptt.compile.graph_key`), which modules compiling it loaded and the name of
its ``main``; `recall` loads them again without rewriting the graph or
generating code, checking each module's text against its name first. Records
are JSON files ``<cache_dir>/graphs/<key>.json`` (and a dict in the process).
"""
from __future__ import annotations

import atexit
import contextlib
import functools
import hashlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import warnings

import numba
import numpy as np

from ...config import config

_loaded = {}
_recorders = []
_records = {}
_VERSION = "bptt-0.1"


@functools.lru_cache(maxsize=None)
def runtime_digest():
    # runtime.py and the modules beside it (scan_runtime, fastmath...): numba inlines
    # their code into the cached machine code, and its cache never notices a change there.
    from .blas_library import abi

    folder = os.path.dirname(__file__)
    h = hashlib.sha256()
    h.update(abi().encode())   # the BLAS called, and its integer width, are compiled in
    for name in sorted(n for n in os.listdir(folder) if n.endswith(".py")):
        with open(os.path.join(folder, name), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def source_key(source):
    """The name-safe hash that identifies `source` across processes."""
    h = hashlib.sha256()
    # numba's own cache key ignores the optimisation level (NUMBA_OPT): ours does not.
    parts = (_VERSION, numba.__version__, np.__version__, str(numba.config.OPT),
             runtime_digest(), source)
    for part in parts:
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def module_name(source):
    return f"bptt_generated_{source_key(source)}"


def disk_cache_enabled():
    return bool(config.cache_dir)


def load_module(source):
    """Import `source` as a module (memoized per process; cached on disk if enabled)."""
    name = module_name(source)
    for names in _recorders:
        if name not in names:
            names.append(name)
    memo_key = (name, disk_cache_enabled())
    if memo_key in _loaded:
        return _loaded[memo_key]
    path = os.path.join(_module_folder(), f"{name}.py")
    if not os.path.exists(path):
        _write_atomically(path, source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    # Modules import kernel modules by name, and numba's cache re-imports by name.
    sys.modules[name] = module
    spec.loader.exec_module(module)
    _loaded[memo_key] = module
    return module


def _module_folder():
    if disk_cache_enabled():
        folder = os.path.join(config.cache_dir, "modules")
        try:
            os.makedirs(folder, exist_ok=True)
            if os.access(folder, os.W_OK):
                return folder
        except OSError:
            pass
        _warn_unwritable(config.cache_dir)
    return _private_folder()


@functools.lru_cache(maxsize=None)
def _warn_unwritable(folder):
    warnings.warn(f"bptt: cannot write to the cache directory {folder!r}; compiled code "
                  "will not be cached on disk (set BPTT_CACHE_DIR to a writable directory, "
                  "or to '' to silence this)", RuntimeWarning, stacklevel=4)


@functools.lru_cache(maxsize=None)
def _private_folder():
    folder = tempfile.mkdtemp(prefix="bptt-nocache-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def _write_atomically(path, text):
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def clear_memory_cache():
    """Forget modules and graph records loaded in this process (the disk cache stays)."""
    _loaded.clear()
    _records.clear()


# -- graph memo ------------------------------------------------------------------
@contextlib.contextmanager
def recording():
    """Collect the names of the modules `load_module` is asked for, in order."""
    names = []
    _recorders.append(names)
    try:
        yield names
    finally:
        _recorders.remove(names)


def remember(key, modules, module, main):
    """Record that graph `key` compiles to function `main` of module `module`.

    `modules` names the modules compiling it loaded, in order; `module` is
    loaded last (it imports the others by name).
    """
    record = {"modules": [m for m in modules if m != module] + [module], "main": main}
    _records[key] = record
    if disk_cache_enabled():
        folder = os.path.join(config.cache_dir, "graphs")
        try:
            os.makedirs(folder, exist_ok=True)
            _write_atomically(os.path.join(folder, f"{key}.json"), json.dumps(record))
        except OSError:
            pass  # the unwritable-cache warning comes from _module_folder


def recall(key):
    """(main dispatcher, main module source, module) recorded for `key`, or None."""
    record = _records.get(key) or _read_record(key)
    if record is None:
        return None
    module = None
    for name in record["modules"]:
        module = _loaded.get((name, disk_cache_enabled())) or _load_by_name(name)
        if module is None:
            return None
    fn = getattr(module, record["main"], None)
    if fn is None:
        return None
    _records[key] = record
    with open(module.__file__) as f:
        return fn, f.read(), module


def _read_record(key):
    if not disk_cache_enabled():
        return None
    try:
        with open(os.path.join(config.cache_dir, "graphs", f"{key}.json")) as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    ok = (isinstance(record, dict) and isinstance(record.get("main"), str)
          and isinstance(record.get("modules"), list) and record["modules"]
          and all(isinstance(n, str) for n in record["modules"]))
    return record if ok else None


def _load_by_name(name):
    """The module `name` from the module folder, if its text still hashes to `name`."""
    try:
        with open(os.path.join(_module_folder(), f"{name}.py")) as f:
            source = f.read()
    except OSError:
        return None
    return load_module(source) if module_name(source) == name else None
