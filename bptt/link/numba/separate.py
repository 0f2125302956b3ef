"""Calls between compiled functions that compile the callee once, on its own.

When a numba function calls another jitted function, numba links the
callee's LLVM module into the caller's and optimizes the whole again, so
the callee can be inlined. A call chain ``main -> scan -> scan_step ->
gemm_into -> _gemm_blas`` thus optimizes ``_gemm_blas`` five times, and
``main`` pays for everything below it: on the RNN gradient that repeated
optimization was most of the cold compile time.

``separately(f)`` returns a callable for generated code (a numba intrinsic)
that calls `f`'s machine code by its symbol instead. `f` is compiled (or
loaded from the disk cache) once per argument types, registered with LLVM
under its mangled name, and the caller only declares it. The caller then
compiles as if `f` were a C library function: nothing of `f` is optimized
again, and `f`'s cached code serves every graph that calls it.

The price is the call itself (a few nanoseconds: arguments go by register
and stack, as between any two C functions) and no inlining across it. Use
it for calls that do real work: a scan's loop, a BLAS product, a kernel
with loops; not for a one-line helper in a hot loop.

Caching. A caller loaded from numba's disk cache has not been typed again,
so nothing would compile or register its callees. Each call site therefore
adds a `_Callee` to the caller's ``_reload_init``, which numba pickles with
the machine code and runs before loading it: the callee is loaded (or
compiled) and its symbol registered before the caller's code needs it.

``any_layout=True`` widens array arguments to layout ``'A'`` (any strides)
before the call, so a kernel that reads strides itself (BLAS) compiles once
per dtype and rank instead of once per combination of layouts.

No wrappers. A numba function is normally compiled with two wrappers
besides its own code: a CPython wrapper (unboxes Python arguments, boxes
the result) and a cfunc wrapper (for first-class function values). A call
by symbol uses neither, yet they cost their lowering, LLVM passes and
machine code, a tenth or more of a gradient's cold compile. So
the callee is compiled by a twin dispatcher of the same Python function
with numba's ``no_cpython_wrapper`` and ``no_cfunc_wrapper`` options
(`_wrapperless`); the dispatcher the user holds keeps its wrappers and can
still be called from Python. The twin's disk-cache entries live under
another index name, so neither ever loads the other's code (a function
without a CPython wrapper called from Python would jump to address 0).
"""
from __future__ import annotations

import importlib

import numba
from llvmlite import binding as llvm
from numba.core import cgutils, imputils, types
from numba.core.typing import signature
from numba.extending import intrinsic

__all__ = ["separately"]

_dispatchers = {}   # (module, qualname) -> wrapperless twin, for `_Callee` after unpickling
_registered = set()  # mangled names already given to LLVM
_NO_WRAPPERS = dict(no_cpython_wrapper=True, no_cfunc_wrapper=True)


def _wrapperless(dispatcher):
    """A twin of `dispatcher` compiled without the CPython and cfunc wrappers.

    Only for calls by symbol: calling the twin from Python would crash.
    """
    from .jitting import DiskCache

    options = {k: v for k, v in dispatcher.targetoptions.items()
               if k != "nopython" and k not in _NO_WRAPPERS}
    twin = numba.njit(**options, **_NO_WRAPPERS)(dispatcher.py_func)
    if isinstance(dispatcher._cache, DiskCache):   # bptt's disk cache (jitting.jit)
        try:
            twin._cache = _twin_cache(DiskCache, dispatcher.py_func)
        except RuntimeError:  # no writable place for the cache files, as jitting.jit
            pass
    return twin


def _twin_cache(base, py_func):
    """`base` (a numba FunctionCache class) writing under a separate index name."""
    cache = base(py_func)
    files = cache._cache_file
    files._index_name = files._index_name[:-len(".nbi")] + ".nowrap.nbi"
    files._index_path = files._index_path[:-len(".nbi")] + ".nowrap.nbi"
    return cache


def compiled(dispatcher):
    """The dispatcher that compiles `dispatcher`'s separate calls (its wrapperless twin)."""
    func = dispatcher.py_func
    return _dispatchers[func.__module__, func.__qualname__]


class _Callee:
    """One compiled signature of a separately called dispatcher; picklable.

    Calling it makes sure the machine code exists in this process and is
    known to LLVM under `symbol`, the name the caller's code was compiled
    against (numba calls it before loading a cached caller). That name is
    registered even when the callee itself had to be compiled again here
    under another one (numba numbers functions per process, and a callee's
    cache entry can be lost to a concurrent writer while its caller's
    survives): an unresolved symbol would abort the process.
    """

    def __init__(self, key, argtypes, symbol=None):
        self.key = key
        self.argtypes = argtypes
        self.symbol = symbol

    def _identity(self):
        return self.key, self.argtypes, self.symbol

    def __eq__(self, other):
        return isinstance(other, _Callee) and self._identity() == other._identity()

    def __hash__(self):
        return hash(self._identity())

    def __call__(self):
        dispatcher = _dispatchers.get(self.key)
        if dispatcher is None:  # the defining module was not imported yet
            module, name = self.key
            original = getattr(importlib.import_module(module), name)
            dispatcher = _dispatchers.get(self.key)  # its `separately` call made the twin
            if dispatcher is None:
                dispatcher = _dispatchers[self.key] = _wrapperless(original)
        cres = dispatcher.overloads.get(self.argtypes)
        if cres is None:
            dispatcher.compile(self.argtypes)
            cres = dispatcher.overloads[self.argtypes]
        own = cres.fndesc.mangled_name
        for name in {own, self.symbol or own}:
            if name not in _registered:
                llvm.add_symbol(name, cres.library.get_pointer_to_function(own))
                _registered.add(name)
        return cres


def _argument_types(args, any_layout):
    out = []
    for a in args:
        a = types.unliteral(a)
        if any_layout and isinstance(a, types.Array) and a.layout != "A":
            a = a.copy(layout="A")
        out.append(a)
    return tuple(out)


def separately(dispatcher, any_layout=False):
    """A callable for jitted code that calls `dispatcher` without recompiling it.

    `dispatcher` must be a module-level numba dispatcher (so a cached caller
    can find it again by module and name).
    """
    func = dispatcher.py_func
    key = (func.__module__, func.__qualname__)
    twin = _dispatchers.get(key)
    if twin is None or twin.py_func is not func:
        _dispatchers[key] = _wrapperless(dispatcher)

    def call(typingctx, *args):
        argtypes = _argument_types(args, any_layout)
        cres = _Callee(key, argtypes)()
        restype = cres.signature.return_type
        reload = _Callee(key, argtypes, cres.fndesc.mangled_name)

        def codegen(context, builder, sig, llargs):
            context.active_code_library._reload_init.add(reload)
            values = cgutils.unpack_tuple(builder, llargs[0], len(args))
            values = [context.cast(builder, v, a, t) for v, a, t in zip(values, args, argtypes)]
            impl = imputils.user_function(cres.fndesc, ())
            return impl(context, builder, signature(restype, *argtypes), values)

        return signature(restype, types.StarArgTuple.from_types(args)), codegen

    call.__name__ = call.__qualname__ = f"separately({func.__qualname__})"
    return intrinsic(call)
