"""The one numba jit wrapper and its disk cache.

Every function bptt compiles with numba (generated code, and the helpers in
the modules beside this one) is decorated with `jit` or takes `OPTIONS`, so
the numba options live here only. This module imports none of those helpers,
so each of them can import it (``runtime.py`` gathers them all for generated
code).

The disk cache
--------------
With a cache directory configured (``bptt.config.cache_dir``), `jit` gives
each dispatcher a `DiskCache`: numba's own `FunctionCache` (an index file per
function plus one data file per compiled signature) with three changes:

* everything is stored under ``<cache_dir>/numba/<runtime digest>/``
  whatever the source file, so an installed, read-only package still
  caches, and a changed runtime module (whose code numba inlines into
  callers it does not check) never meets code compiled against the old one;
* a data file is named after a hash of its index key instead of numba's
  sequential ``<n>.nbc`` numbering. With sequential names, two processes that
  compile *different* signatures of one function at the same time can both
  pick ``1.nbc``; the index of one then points at the machine code of the
  other. With keyed names a data file only ever holds code for its key, and a
  lost index update (both processes rewrite the index from the same old copy)
  costs a recompilation, never a wrong result;
* a loaded entry whose signature is not the requested one is ignored;
* index and data files carry a SHA-256 of their content and are read only
  from a trusted dir (`cache.read_sealed`): numba unpickles them, so a
  damaged or planted file must never reach the unpickler. A damaged entry is
  removed and compiled again; a write that fails (full disk) turns the disk
  cache off for the process (`cache.give_up`), with one warning.

Index and data files are written to a temporary name and renamed, as numba
does, so a reader never sees a partial file.
"""
from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import os
import pickle

import numba
from numba.core import sigutils
from numba.core.caching import (CompileResultCacheImpl, FunctionCache, IndexDataCacheFile,
                                _CacheLocator, _SourceFileBackedLocatorMixin)

from ...config import config
from . import argtypes  # noqa: F401  (array arguments typed without numpy.ma)
from . import cache
from .cache import runtime_digest

__all__ = ["jit", "select"]  # what generated code sees; the linker takes `collector_paused`

OPTIONS = dict(error_model="numpy", nogil=True)


class _CacheDirLocator(_SourceFileBackedLocatorMixin, _CacheLocator):
    """Cache files of any source file go under ``<cache_dir>/numba/``."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        sub = self.get_suitable_cache_subpath(py_file)
        # numba checks only the source file of each function; its code also holds
        # runtime helpers inlined from the modules beside this one, and pickled objects
        # of them (separate.py), so a change to any of them starts a new cache.
        self._cache_path = os.path.join(config.cache_dir, "numba", runtime_digest()[:16], sub)

    def get_cache_path(self):
        return self._cache_path

    def ensure_cache_path(self):
        cache.private_dirs(self._cache_path)
        why = cache.distrust(os.stat(self._cache_path), directory=True)
        if why is not None:
            raise PermissionError(f"{self._cache_path} is {why}")

    @classmethod
    def from_function(cls, py_func, py_file):
        if cache.cache_root() is None:   # no dir, or one bptt does not trust or cannot write
            return None
        return super().from_function(py_func, py_file)


class _KeyedIndexDataCacheFile(IndexDataCacheFile):
    """Data files named by a hash of their key; data written before the index; both
    sealed with their SHA-256 and read only when trusted (see the module docstring)."""

    def save(self, key, data):
        name = "%s.%s.nbc" % (self._index_name[:-4],
                              hashlib.sha256(str(key).encode()).hexdigest()[:20])
        self._save_data(name, data)
        overloads = self._load_index()
        if overloads.get(key) != name:
            overloads[key] = name
            self._save_index(overloads)

    def _load_index(self):
        payload = cache.read_sealed(self._index_path)
        if payload is None:
            return {}
        try:
            f = io.BytesIO(payload)
            if pickle.load(f) != self._version:   # another numba: its cache, not ours
                return {}
            stamp, overloads = pickle.loads(f.read())
        except Exception:  # noqa: BLE001  (sealed but unreadable: written by a broken writer)
            cache.discard(self._index_path, "it cannot be unpickled")
            return {}
        return overloads if stamp == self._source_stamp else {}

    def _save_index(self, overloads):
        payload = pickle.dumps(self._version, protocol=-1) + self._dump(
            (self._source_stamp, overloads))
        cache.write_sealed(self._index_path, payload)

    def _load_data(self, name):
        path = self._data_path(name)
        payload = cache.read_sealed(path)
        if payload is None:
            raise FileNotFoundError(path)   # numba's `load`: a miss
        try:
            return pickle.loads(payload)
        except Exception:  # noqa: BLE001
            cache.discard(path, "it cannot be unpickled")
            raise FileNotFoundError(path) from None

    def _save_data(self, name, data):
        cache.write_sealed(self._data_path(name), self._dump(data))


class _Impl(CompileResultCacheImpl):
    _locator_classes = [_CacheDirLocator]


class DiskCache(FunctionCache):
    """numba's function cache, safe for concurrent writers (see module docstring)."""

    _impl_class = _Impl

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file.__class__ = _KeyedIndexDataCacheFile

    def load_overload(self, sig, target_context):
        if cache.cache_root() is None:   # the disk cache was turned off in this process
            return None
        try:
            cres = super().load_overload(sig, target_context)
        except Exception as exc:  # noqa: BLE001  (intact file, code LLVM cannot load)
            self._discard_entry(sig, target_context, exc)
            return None
        if cres is not None:
            args, _ = sigutils.normalize_signature(sig)
            if tuple(cres.signature.args) != tuple(args):
                return None
            # numba runs a loaded entry's reload hooks but does not give them back to its
            # library, and a caller compiled later links that library and inherits only
            # the library's hooks: without this, a caller of a cached function that calls
            # something `separately` (separate.py) would be cached without the hook that
            # registers the callee, and crash when loaded in a fresh process.
            cres.library._reload_init.update(cres.reload_init)
        return cres

    def _discard_entry(self, sig, target_context, exc):
        key = self._index_key(sig, target_context.codegen())
        name = self._cache_file._load_index().get(key)
        if name is not None:
            cache.discard(self._cache_file._data_path(name), f"{type(exc).__name__}: {exc}")

    def save_overload(self, sig, data):
        if cache.cache_root() is None:
            return
        try:
            super().save_overload(sig, data)
        except OSError as exc:   # a full or read-only disk: compile on without the cache
            cache.give_up(exc)


def jit(fn):
    """``numba.njit`` with bptt's options, disk-cached when a cache dir is set.

    A cache dir that cannot be written to disables the disk cache for `fn`
    (it is still compiled, in every process). No cfunc wrapper: nothing takes
    the address of a compiled function as a first-class value, and the wrapper
    cost every compiled graph function its lowering and LLVM work.
    """
    return cache_on_disk(numba.njit(no_cfunc_wrapper=True, **OPTIONS)(fn))


def cache_on_disk(dispatcher):
    """Give a numba dispatcher a `DiskCache` if a usable cache dir is configured."""
    if cache.cache_root() is not None:
        try:
            dispatcher._cache = DiskCache(dispatcher.py_func)
        except RuntimeError:  # numba found no writable place for the cache files
            pass
    return dispatcher


@contextlib.contextmanager
def collector_paused():
    """Python's cyclic garbage collector off while the block runs (a numba compilation).

    numba's compiler creates millions of objects, many of them long-lived (type
    and template caches, IR), so the collector's full collections, which visit
    every tracked object, grow with each compile: hundreds of collections take
    a sizeable share of a cold compile's CPU time, more counting the caches they
    flush. Cycles left by the compile are collected after the block as usual;
    the price is their memory meanwhile, a higher peak of the compiling process
    (benchmarks/notes.md has both figures). A collector already off is left off;
    one turned off inside the block is turned back on at its end.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@numba.vectorize(nopython=True)
def select(cond, a, b):
    """Elementwise ``a if cond else b`` with broadcasting, as ``np.where``.

    numba compiles ``np.where(c, a, b)`` far more slowly than this ufunc.
    """
    return a if cond else b
