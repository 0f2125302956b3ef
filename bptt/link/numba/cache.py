"""Loading generated modules: in-process memo and the on-disk cache.

Each generated module is written once to ``<cache_dir>/modules/<name>.py``,
where the name holds a hash of the module source, of ``runtime.py`` and the
modules beside it (the jit options and helpers every module imports), of the
bptt, numba, llvmlite and numpy versions, of the CPU numba compiles for and
of numba's optimisation level. The same text always gets the same name, so
numba's cached machine code for it (under ``<cache_dir>/numba/``, see
`jitting.DiskCache`) stays valid, and a second process that generates the
same text loads that code instead of compiling.

What the cache trusts, and what it checks (docs/cache.md):

* the cache dir is created with mode 0700 and used only if it is owned by
  the user and not group- or world-writable; every file read from it must be
  so too. Otherwise bptt says so once and compiles without the disk cache;
* a module is executed from the text bptt generated, never from the file:
  the file on disk is rewritten when it differs. A graph record names its
  key and the SHA-256 of each module's text, and is loaded only if they match;
* numba's index and data files carry a SHA-256 of their content, checked
  before they are unpickled. A damaged file is removed, with one warning,
  and its code compiled again;
* a write that fails (read-only or full disk) turns the disk cache off for
  the rest of the process, with one warning; nothing is cached, everything
  still compiles.

Without a cache dir (``BPTT_CACHE_DIR=""``) modules go to a private temporary
directory removed at exit, and nothing is cached on disk.

Graph memo: `remember` records, under a key of the un-rewritten graph
(`bptt.compile.graph_key`), which modules compiling it loaded and the name of
its ``main``; `recall` loads them again without rewriting the graph or
generating code. Records are JSON files ``<cache_dir>/graphs/<key>.json``
(and a dict in the process).
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
import stat
import sys
import tempfile
import warnings

import numpy as np

from ...config import config

_loaded = {}
_sources = {}    # module name -> the text it was executed from
_recorders = []
_records = {}
_roots = {}      # configured cache dir -> the dir used (it), or None (not usable)
_said = set()    # warnings already given, by their subject
_VERSION = "bptt-0.2"
_SEAL = b"bptt-sha256\0"


@functools.lru_cache(maxsize=None)
def environment_tag():
    """The libraries and the CPU compiled code depends on, as one string.

    A cache copied to another machine, or kept across an upgrade of numba,
    llvmlite or NumPy, never meets code compiled for another of them. Read
    from llvmlite and the packages' metadata, not from numba's own target
    description, so that it does not import numba. numba's settings of the
    target CPU and its optimisation level are read from the environment
    variables that set them.
    """
    import importlib.metadata

    import llvmlite
    from llvmlite import binding

    # One source whether or not numba is imported yet: the tag must not depend on what
    # this process imported first (a background compile's child names code for it).
    try:
        numba_version = importlib.metadata.version("numba")
    except importlib.metadata.PackageNotFoundError:   # numba run from a source tree
        import numba

        numba_version = numba.__version__
    settings = [f"{k}={os.environ.get(k, '')}"
                for k in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "NUMBA_OPT")]
    return "|".join([_VERSION, sys.version, numba_version, llvmlite.__version__,
                     np.__version__, *settings, binding.get_process_triple(),
                     binding.get_host_cpu_name(), binding.get_host_cpu_features().flatten()])


@functools.lru_cache(maxsize=None)
def runtime_digest():
    # runtime.py and the modules beside it (scan_runtime, fastmath...): numba inlines
    # their code into the cached machine code, and its cache never notices a change there.
    from .blas_library import abi

    folder = os.path.dirname(__file__)
    h = hashlib.sha256()
    h.update(environment_tag().encode())
    h.update(abi().encode())   # the BLAS called, and its integer width, are compiled in
    for name in sorted(n for n in os.listdir(folder) if n.endswith(".py")):
        with open(os.path.join(folder, name), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def source_key(source):
    """The name-safe hash that identifies `source` across processes."""
    h = hashlib.sha256()
    for part in (runtime_digest(), source):   # the digest holds the versions and the CPU
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def module_name(source):
    return f"bptt_generated_{source_key(source)}"


# -- the cache dir: trusted, writable, or not used -------------------------------------
def cache_root():
    """The cache dir if the disk cache may be used in this process, else None.

    Decided once per configured dir: it is created (mode 0700) if missing,
    and used only if it is a directory owned by the user, not group- or
    world-writable, and writable. A dir refused is named in one warning.
    """
    folder = config.cache_dir
    if not folder:
        return None
    if folder not in _roots:
        _roots[folder] = _open_root(folder)
    return _roots[folder]


def disk_cache_enabled():
    return cache_root() is not None


def _open_root(folder):
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        st = os.stat(folder)
    except OSError as exc:
        return _unwritable(folder, exc)
    why = distrust(st, directory=True)
    if why is not None:
        _say(("dir", folder), f"bptt: not using the cache directory {folder!r}: it is {why}, "
             "so another user could plant code that bptt would load; compiled code will not "
             "be cached on disk (make it yours with mode 0700, or set BPTT_CACHE_DIR to "
             "another directory)")
        return None
    if not os.access(folder, os.W_OK | os.X_OK):
        return _unwritable(folder, PermissionError("permission denied"))
    return folder


def distrust(st, directory=False):
    """Why a file or dir with stat result `st` must not be trusted, or None."""
    if directory and not stat.S_ISDIR(st.st_mode):
        return "not a directory"
    if not directory and not stat.S_ISREG(st.st_mode):
        return "not a regular file"
    if st.st_uid != os.getuid():
        return f"owned by another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"writable by its group or by others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _unwritable(folder, exc):
    _say(("dir", folder), f"bptt: cannot write to the cache directory {folder!r} ({exc}); "
         "compiled code will not be cached on disk (set BPTT_CACHE_DIR to a writable "
         "directory, or to '' to silence this)")
    return None


def give_up(exc):
    """A cache write failed: no disk cache for the rest of the process (one warning)."""
    folder = config.cache_dir
    if folder:
        _roots[folder] = None
        _unwritable(folder, exc)


def _say(subject, message):
    if subject not in _said:
        _said.add(subject)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def private_dirs(path):
    """Create `path` (under the cache dir) and its missing parents with mode 0700."""
    missing = []
    while not os.path.isdir(path):
        missing.append(path)
        path = os.path.dirname(path)
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o700)


# -- files: written atomically, read only when trusted and intact ----------------------
def write_atomically(path, data):
    """Write bytes `data` to `path` through a temporary file (mode 0600) and a rename."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_trusted(path):
    """The bytes of cache file `path`, or None if it is missing or not to be trusted.

    The file, and the dir it is in, must be owned by the user and not
    writable by others; a symbolic link is not followed.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        try:
            why = distrust(os.fstat(f.fileno()))
            folder = os.path.dirname(path)
            if why is None:
                why = distrust(os.stat(folder), directory=True)
                path = folder if why is not None else path
            if why is not None:
                _say(("file", path), f"bptt: not loading {path!r} from the cache: it is {why}; "
                     "compiling instead")
                return None
            return f.read()
        except OSError:
            return None


def seal(payload):
    """`payload` behind a header holding its SHA-256 (see `unseal`)."""
    return _SEAL + hashlib.sha256(payload).digest() + payload


def unseal(blob):
    """The payload of a sealed `blob`, or None if it is damaged."""
    n = len(_SEAL)
    if blob[:n] != _SEAL or len(blob) < n + 32:
        return None
    digest, payload = blob[n:n + 32], blob[n + 32:]
    return payload if hashlib.sha256(payload).digest() == digest else None


def read_sealed(path):
    """The payload of the sealed cache file `path`; None if missing, untrusted or damaged
    (a damaged file is removed, with one warning)."""
    blob = read_trusted(path)
    if blob is None:
        return None
    payload = unseal(blob)
    if payload is None:
        discard(path, "its checksum does not match its content")
    return payload


def write_sealed(path, payload):
    write_atomically(path, seal(payload))


def discard(path, why):
    """Remove a damaged cache file, saying so once; its code is compiled again."""
    with contextlib.suppress(OSError):
        os.unlink(path)
    _say(("damaged", path), f"bptt: removed the damaged cache file {path!r} ({why}); "
         "its code is compiled again")


# -- modules -----------------------------------------------------------------------------
def load_module(source):
    """Import `source` as a module (memoized per process; cached on disk if enabled).

    The module is executed from `source` itself; its file (which numba's
    cache needs) is rewritten when it holds anything else.
    """
    name = module_name(source)
    for names in _recorders:
        if name not in names:
            names.append(name)
    memo_key = (name, disk_cache_enabled())
    if memo_key in _loaded:
        return _loaded[memo_key]
    path = _module_file(name, source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    # Modules import kernel modules by name, and numba's cache re-imports by name.
    sys.modules[name] = module
    exec(compile(source, path, "exec"), module.__dict__)  # noqa: S102  (bptt's own text)
    _loaded[memo_key] = module
    _sources[name] = source
    return module


def _module_file(name, source):
    """The path of a file holding exactly `source` for module `name`."""
    data = source.encode("utf-8")
    folder = _module_folder()
    path = os.path.join(folder, f"{name}.py")
    if folder == _private_folder():
        if not os.path.exists(path):
            write_atomically(path, data)
        return path
    found = read_trusted(path)
    if found == data:
        return path
    if found is not None:
        discard(path, "its text is not the text bptt generated")
    try:
        write_atomically(path, data)
        return path
    except OSError as exc:
        give_up(exc)
        return _module_file(name, source)


def _module_folder():
    root = cache_root()
    if root is not None:
        folder = os.path.join(root, "modules")
        try:
            private_dirs(folder)
            if distrust(os.stat(folder), directory=True) is None:
                return folder
        except OSError as exc:
            give_up(exc)
    return _private_folder()


@functools.lru_cache(maxsize=None)
def _private_folder():
    folder = tempfile.mkdtemp(prefix="bptt-nocache-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


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
    loaded last (it imports the others by name). The record holds its key
    and the SHA-256 of each module's text, so it cannot be read for another
    graph or with other modules.
    """
    names = [m for m in modules if m != module] + [module]
    record = {"key": key, "main": main,
              "modules": [[m, _text_digest(_sources[m])] for m in names]}
    _records[key] = record
    root = cache_root()
    if root is not None:
        folder = os.path.join(root, "graphs")
        try:
            private_dirs(folder)
            write_sealed(os.path.join(folder, f"{key}.json"), json.dumps(record).encode())
        except OSError as exc:
            give_up(exc)


def _text_digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def recall(key):
    """(main dispatcher, main module source, module) recorded for `key`, or None."""
    record = _records.get(key) or _read_record(key)
    if record is None:
        return None
    module = None
    for name, digest in record["modules"]:
        module = _loaded.get((name, disk_cache_enabled())) or _load_by_name(name, digest)
        if module is None:
            return None
    fn = getattr(module, record["main"], None)
    if fn is None:
        return None
    _records[key] = record
    return fn, _sources[module.__name__], module


def _read_record(key):
    root = cache_root()
    if root is None:
        return None
    path = os.path.join(root, "graphs", f"{key}.json")
    payload = read_sealed(path)
    if payload is None:
        return None
    try:
        record = json.loads(payload)
    except ValueError:
        record = None
    if not _is_record(record, key):
        discard(path, "it is not the record of this graph")
        return None
    return record


def _is_record(record, key):
    return (isinstance(record, dict) and record.get("key") == key
            and isinstance(record.get("main"), str)
            and isinstance(record.get("modules"), list) and record["modules"]
            and all(isinstance(m, list) and len(m) == 2 and all(isinstance(p, str) for p in m)
                    for m in record["modules"]))


def _load_by_name(name, digest):
    """The module `name` from the module folder, if its text hashes to `digest` (the
    record's) and to `name` (this process's libraries and CPU)."""
    path = os.path.join(_module_folder(), f"{name}.py")
    data = read_trusted(path)
    if data is None:
        return None
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError:
        source = None
    if source is None or _text_digest(source) != digest:
        discard(path, "its text does not hash to what its graph record says")
        return None
    return load_module(source) if module_name(source) == name else None
