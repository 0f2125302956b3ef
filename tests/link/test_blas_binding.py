"""Where generated code's BLAS comes from (`bptt.link.numba.blas`), and what it costs to find.

The ``bptt_dgemm``/``bptt_sgemm`` symbols are NumPy's own OpenBLAS functions
where NumPy's wheel bundles one (blas_library.py), else scipy's
``cython_blas`` functions, the pointers numba itself would use, found without
importing all of ``scipy.linalg``, and without disturbing a later regular
import of scipy. Process-level tests run a worker in a fresh interpreter: what
is imported there is the point.
"""
import json
import os
import pathlib
import subprocess
import sys

from numba.extending import get_cython_function_address

import bptt
import bptt.link.numba.runtime  # noqa: F401  (loads blas: the two import each other)
from bptt.link.numba import blas, blas_library, cache

ROOT = pathlib.Path(bptt.__file__).resolve().parent.parent
NAMES = ["dgemm", "sgemm"]


def test_addresses_are_the_pointers_numba_gets_from_cython_blas():
    assert blas.blas_addresses(NAMES) == {
        n: get_cython_function_address("scipy.linalg.cython_blas", n) for n in NAMES}


def test_without_the_extension_file_numbas_own_lookup_is_used(monkeypatch):
    expected = blas.blas_addresses(NAMES)
    monkeypatch.setattr(blas, "_load_cython_blas", lambda: None)
    assert blas.blas_addresses(NAMES) == expected


def _numpy_bundles_openblas():
    """What NumPy says of itself, independently of how blas_library looks for it."""
    import numpy as np
    return np.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"] == "scipy-openblas"


def test_generated_code_calls_numpys_openblas_when_numpy_bundles_one():
    found = blas_library.numpy_openblas()
    assert (found is not None) == _numpy_bundles_openblas()
    names = ["dgemm", "sgemm"]
    if found is not None:
        path, template, bits = found
        assert "scipy_openblas" in path and bits in (32, 64)
        assert blas._ADDRESSES == blas_library.numpy_openblas_addresses(names)
        assert blas._INT_BITS == bits and blas._INT_MAX == 2 ** (bits - 1) - 1
    else:
        assert blas._ADDRESSES == blas.blas_addresses(names) and blas._INT_BITS == 32


def test_without_numpys_openblas_scipys_cython_blas_is_called(monkeypatch):
    monkeypatch.setattr(blas, "numpy_openblas_addresses", lambda names: None)
    assert blas.gemm_addresses() == (blas.blas_addresses(["dgemm", "sgemm"]), 32)


def test_the_blas_in_use_is_part_of_the_cache_key(monkeypatch):
    # The integer width is compiled into every call: code cached with one library
    # must never be loaded where the other is used.
    before = cache.runtime_digest()
    monkeypatch.setattr(blas_library, "abi", lambda: "another BLAS, 32-bit integers")
    cache.runtime_digest.cache_clear()
    try:
        other = cache.runtime_digest()
    finally:
        monkeypatch.undo()
        cache.runtime_digest.cache_clear()
    assert other != before
    assert cache.runtime_digest() == before


IMPORTS = r'''
import json, sys
import numba.np.linalg
import bptt.link.numba.runtime
from bptt.link.numba import blas, blas_library, cache
report = {"scipy.linalg before": "scipy.linalg" in sys.modules,
          "have blas": numba.np.arraymath._HAVE_BLAS,
          "numba keeps its check": numba.np.linalg.ensure_blas.__module__ == "numba.np.linalg"}
ours = blas.blas_addresses(["dgemm", "sgemm"])
module = blas._load_cython_blas()
import scipy.linalg
import scipy.linalg.cython_blas
from scipy.linalg import cython_blas
from numba.extending import get_cython_function_address as address
import numpy as np
x = np.arange(9.0).reshape(3, 3) + np.eye(3) * 10
report.update({
    "attribute is the module": scipy.linalg.cython_blas is module and cython_blas is module,
    "same pointers": ours == {n: address("scipy.linalg.cython_blas", n) for n in ours},
    "scipy works": bool(np.allclose(scipy.linalg.inv(x) @ x, np.eye(3))),
})
print(json.dumps(report))
'''


def _python(code, cache_dir, *args):
    env = dict(os.environ, BPTT_CACHE_DIR=str(cache_dir),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_runtime_does_not_import_scipy_linalg_and_scipy_still_imports_whole(tmp_path):
    report = _python(IMPORTS, tmp_path / "cache")
    assert report == {"scipy.linalg before": False, "have blas": True,
                      "numba keeps its check": True, "attribute is the module": True,
                      "same pointers": True, "scipy works": True}


PRODUCT = r'''
import json, sys
import numpy as np
import bptt, bptt.tensor as T
from bptt.link.numba.blas_library import numpy_openblas
results = {}
for dtype in ["float64", "float32"]:
    A, B = T.matrix("A", dtype=dtype), T.matrix("B", dtype=dtype)
    f = bptt.function([A, B], T.dot(A, B))
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((23, 17)).astype(dtype), rng.standard_normal((17, 19)).astype(dtype)
    results[dtype] = (f, a, b, f(a, b), sum(f._fn.numba_function.stats.cache_hits.values()))
report = {"scipy.linalg imported": "scipy.linalg" in sys.modules,
          # loading a cached function types its arguments without numpy.ma (argtypes.py)
          "numpy.ma imported": "numpy.ma" in sys.modules,
          # numba's BLAS check only looks for scipy's extension file (blas.py)
          "scipy BLAS loaded": any("cython_blas" in line for line in open("/proc/self/maps"))}
from scipy.linalg import blas as fblas
for dtype, (f, a, b, out, hits) in results.items():
    if numpy_openblas() is not None:
        ref = a @ b     # NumPy's matmul calls the same OpenBLAS gemm
    else:
        gemm = fblas.dgemm if dtype == "float64" else fblas.sgemm
        # The product as the runtime asks it (row-major out = (b^T a^T)^T), through scipy.
        ref = gemm(1.0, b.T, a.T).T
    report[dtype] = {"loaded": hits > 0, "identical to the BLAS": bool(np.array_equal(out, ref)),
                     "close to numpy": bool(np.allclose(out, a @ b, rtol=1e-4, atol=1e-4)),
                     "again": bool(np.array_equal(f(a, b), out))}
print(json.dumps(report))
'''


def test_a_fresh_process_loading_a_cached_product_computes_the_blas_values(tmp_path):
    cold = _python(PRODUCT, tmp_path / "cache")
    warm = _python(PRODUCT, tmp_path / "cache")
    for report, loaded in [(cold, False), (warm, True)]:
        assert report["scipy.linalg imported"] is False
        assert report["numpy.ma imported"] is False
        assert report["scipy BLAS loaded"] is (blas_library.numpy_openblas() is None)
        for dtype in ["float64", "float32"]:
            assert report[dtype] == {"loaded": loaded, "identical to the BLAS": True,
                                     "close to numpy": True, "again": True}


NAMED_AFTER = r'''
import json, sys
if sys.argv[1] == "scipy first":
    import scipy.linalg     # loads scipy's own scipy_openblas (32-bit integers)
    scipy.linalg.inv([[2.0]])
from bptt.link.numba import blas_library, cache
print(json.dumps({"abi": blas_library.abi(), "digest": cache.runtime_digest(),
                  "scipy's loaded": any("scipy.libs" in line for line in open("/proc/self/maps"))}))
'''


def test_the_blas_named_does_not_depend_on_what_was_imported_first(tmp_path):
    # A process that imported scipy first named scipy's OpenBLAS, so its cache keys
    # differed from a background compile's child (which had not): nothing it compiled
    # could be loaded.
    plain = _python(NAMED_AFTER, tmp_path / "cache", "plain")
    after_scipy = _python(NAMED_AFTER, tmp_path / "cache", "scipy first")
    assert (plain["abi"], plain["digest"]) == (after_scipy["abi"], after_scipy["digest"])
    if sys.platform.startswith("linux"):   # the case it guards did happen (scipy's wheel)
        assert after_scipy["scipy's loaded"]
