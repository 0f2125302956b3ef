"""Fault injection on the disk cache: every kind of damaged file, unwritable
and untrusted dirs, a full disk.

A damaged entry is removed, with one warning, and compiled again; a dir bptt
cannot write or must not trust is not used (one warning), and everything
still compiles. Process-level tests fill a cache in a fresh process, damage
it, and run a second process on it (the damage used to crash or abort it).
"""
import errno
import json
import os
import pathlib
import pickle
import shutil
import subprocess
import sys

import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.link.numba import cache

ROOT = pathlib.Path(bptt.__file__).resolve().parent.parent

WORKER = r'''
import json, sys, warnings
import numpy as np
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import bptt, bptt.tensor as T
    x = T.vector("x")
    graphs = {"tanh": lambda: T.tanh(x) * 2.0, "sigmoid": lambda: T.nnet.sigmoid(x) * 2.0,
              "draw": lambda: x + bptt.RandomStreams(3).uniform((3,))}
    report = {"results": {}, "hits": 0, "misses": 0, "memo": []}
    for name in sys.argv[1].split(","):
        f = bptt.function([x], graphs[name]())
        report["results"][name] = f(np.array([-1.0, 0.0, 2.0])).tolist()
        stats = f._fn.numba_function.stats
        report["hits"] += sum(stats.cache_hits.values())
        report["misses"] += sum(stats.cache_misses.values())
        report["memo"].append(not f._rewritten)
report["warnings"] = [str(w.message) for w in caught if "bptt:" in str(w.message)]
print(json.dumps(report))
'''
X = np.array([-1.0, 0.0, 2.0])
EXPECTED = {"tanh": (np.tanh(X) * 2).tolist(), "sigmoid": (2 / (1 + np.exp(-X))).tolist()}


def _run(tmp_path, graphs, cache_dir):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    env = dict(os.environ, BPTT_CACHE_DIR=str(cache_dir), BPTT_CHECK_IR="0",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, str(script), ",".join(graphs)], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """A cache filled by one process (tanh, then sigmoid), and a pristine copy of it."""
    base = tmp_path_factory.mktemp("filled")
    cache_dir = base / "cache"
    _run(base, ["tanh"], cache_dir)
    tanh_records = set((cache_dir / "graphs").iterdir())
    _run(base, ["sigmoid"], cache_dir)
    sigmoid_record, = set((cache_dir / "graphs").iterdir()) - tanh_records
    tanh_record, = tanh_records
    shutil.copytree(cache_dir, base / "pristine", symlinks=True)
    return base, cache_dir, tanh_record.name, sigmoid_record.name


@pytest.fixture
def fresh(filled):
    """The filled cache, restored to its pristine state at the same path (numba's index
    names hold the module folder's path)."""
    base, cache_dir, tanh_record, sigmoid_record = filled
    shutil.rmtree(cache_dir)
    shutil.copytree(base / "pristine", cache_dir, symlinks=True)
    return base, cache_dir, tanh_record, sigmoid_record


def _files(cache_dir, tanh_record, suffix):
    """The files of the tanh function's modules ending in `suffix`."""
    record = json.loads(cache.unseal((cache_dir / "graphs" / tanh_record).read_bytes()))
    names = [name for name, _ in record["modules"]]
    found = sorted(p for p in cache_dir.rglob("*") if p.name.endswith(suffix)
                   and any(p.name.startswith(n + ".") for n in names))
    assert found, suffix
    return found


def _check_healed(base, cache_dir, damaged, why, again=False):
    report = _run(base, ["tanh"], cache_dir)
    assert report["results"]["tanh"] == pytest.approx(EXPECTED["tanh"], rel=1e-15)
    removed = [w for w in report["warnings"] if "removed the damaged cache file" in w]
    assert len(removed) == len(report["warnings"]) == len(damaged), report["warnings"]
    assert all(why in w for w in removed)
    if not again:
        return report
    again = _run(base, ["tanh"], cache_dir)   # healed: loaded, nothing said
    assert again["warnings"] == [] and again["misses"] == 0 and again["memo"] == [True]
    assert again["results"] == report["results"]
    return report


def test_changed_bytes_in_machine_code_are_caught_by_the_checksum(fresh):
    base, cache_dir, tanh_record, _ = fresh
    damaged = _files(cache_dir, tanh_record, ".nbc")
    for path in damaged:   # 100 bytes in the middle: this crashed (SIGSEGV) every process
        data = bytearray(path.read_bytes())
        mid = len(data) // 2
        data[mid:mid + 100] = bytes((b + 1) % 256 for b in data[mid:mid + 100])
        path.write_bytes(bytes(data))
    report = _check_healed(base, cache_dir, damaged, "checksum", again=True)
    assert report["misses"] == 1


def test_a_truncated_index_is_caught_by_the_checksum(fresh):
    base, cache_dir, tanh_record, _ = fresh
    damaged = _files(cache_dir, tanh_record, ".nbi")
    for path in damaged:   # was: UnpicklingError out of bptt.function
        path.write_bytes(path.read_bytes()[:40])
    _check_healed(base, cache_dir, damaged, "checksum")


def test_intact_files_holding_bad_bitcode_are_removed_and_compiled_again(fresh):
    base, cache_dir, tanh_record, _ = fresh
    damaged = _files(cache_dir, tanh_record, ".nbc")
    for path in damaged:   # re-sealed, so only the loader can tell: was a RuntimeError
        payload = cache.unseal(path.read_bytes())
        at = payload.index(b"BC\xc0\xde")
        payload = payload[:at + 4] + b"\x00" * 64 + payload[at + 68:]
        cache.write_sealed(str(path), payload)
    _check_healed(base, cache_dir, damaged, "LLVM")


def test_a_garbled_module_is_rewritten_from_the_generated_text(fresh):
    base, cache_dir, tanh_record, _ = fresh
    damaged = _files(cache_dir, tanh_record, ".py")
    for path in damaged:   # was: SyntaxError out of bptt.function
        path.write_text("def (:\n" + path.read_text()[7:])
    _check_healed(base, cache_dir, damaged, "")


def test_a_swapped_graph_record_is_refused(fresh):
    base, cache_dir, tanh_record, sigmoid_record = fresh
    graphs = cache_dir / "graphs"
    tanh, sigmoid = (graphs / tanh_record).read_bytes(), (graphs / sigmoid_record).read_bytes()
    (graphs / tanh_record).write_bytes(sigmoid)   # the tanh function computed sigmoid
    (graphs / sigmoid_record).write_bytes(tanh)
    report = _check_healed(base, cache_dir, [tanh_record], "not the record of this graph",
                           again=True)
    assert report["memo"] == [False]


def test_an_untrusted_file_is_not_loaded(fresh):
    base, cache_dir, tanh_record, _ = fresh
    record = json.loads(cache.unseal((cache_dir / "graphs" / tanh_record).read_bytes()))
    main_module = record["modules"][-1][0]    # the module holding main (the kernels' first)
    index, = [p for p in _files(cache_dir, tanh_record, ".nbi")
              if p.name.startswith(main_module + ".")]
    index.chmod(0o666)
    report = _run(base, ["tanh"], cache_dir)
    assert report["results"]["tanh"] == pytest.approx(EXPECTED["tanh"], rel=1e-15)
    assert report["misses"] == 1
    assert len(report["warnings"]) == 1 and "writable by its group or by others" in \
        report["warnings"][0] and "not loading" in report["warnings"][0]


def test_a_world_writable_cache_dir_is_not_used_so_planted_code_never_runs(tmp_path):
    cache_dir = tmp_path / "shared-cache"
    cache_dir.mkdir()
    cache_dir.chmod(0o777)
    marker = tmp_path / "planted-code-ran"

    class Planted:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    for name in ("graphs", "modules", "numba"):
        (cache_dir / name).mkdir()
    (cache_dir / "numba" / "any.nbi").write_bytes(cache.seal(pickle.dumps(Planted())))
    report = _run(tmp_path, ["tanh"], cache_dir)
    assert report["results"]["tanh"] == pytest.approx(EXPECTED["tanh"], rel=1e-15)
    assert not marker.exists()
    assert len(report["warnings"]) == 1
    assert "not using the cache directory" in report["warnings"][0]
    assert "mode 777" in report["warnings"][0]


def test_an_unusable_cache_dir_compiles_without_the_disk_cache(tmp_path):
    # random.py built its own disk cache: every NUMBA compile raised "no locator available"
    report = _run(tmp_path, ["tanh", "draw"], "/dev/null/bptt")
    assert report["results"]["tanh"] == pytest.approx(EXPECTED["tanh"], rel=1e-15)
    assert len(report["results"]["draw"]) == 3
    assert len(report["warnings"]) == 1, report["warnings"]
    assert "cannot write to the cache directory '/dev/null/bptt'" in report["warnings"][0]


# -- in this process ----------------------------------------------------------------------
@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    """A new cache dir for this test (decided afresh), and the warnings it gives."""
    folder = tmp_path / "cache"
    monkeypatch.setattr(bptt.config, "cache_dir", str(folder))
    return folder


def _compile_new(scale):
    x = T.vector("x")
    return bptt.function([x], x * scale, mode="NUMBA")


def test_a_full_disk_compiles_without_the_disk_cache(private_cache, monkeypatch):
    real = cache.write_atomically

    def disk_full(path, data):   # the cache's disk is full, the temporary dir's is not
        if not path.startswith(str(private_cache)):
            return real(path, data)
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache, "write_atomically", disk_full)
    with pytest.warns(RuntimeWarning, match=r"cannot write to the cache directory.*No space "
                                            r"left on device") as caught:
        f = _compile_new(17.125)
        g = _compile_new(19.25)
    assert len([w for w in caught if "bptt:" in str(w.message)]) == 1
    np.testing.assert_array_equal(f(np.ones(2)), [17.125, 17.125])
    np.testing.assert_array_equal(g(np.ones(2)), [19.25, 19.25])


def test_the_cache_dir_and_its_files_are_private(private_cache):
    f = _compile_new(23.5)
    assert f(np.ones(1))[0] == 23.5
    assert (private_cache.stat().st_mode & 0o777) == 0o700
    for path in private_cache.rglob("*"):
        want = 0o700 if path.is_dir() else 0o600
        assert (path.stat().st_mode & 0o777) == want, path


def test_a_cache_dir_of_another_user_is_not_used(private_cache, monkeypatch):
    private_cache.mkdir()
    uid = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: uid + 1)
    with pytest.warns(RuntimeWarning, match=rf"not using the cache directory.*owned by another "
                                            rf"user \(uid {uid}\)"):
        f = _compile_new(29.75)
    assert f(np.ones(1))[0] == 29.75
    assert type(f._fn.numba_function._cache).__name__ == "NullCache"
    assert not any(private_cache.iterdir())


def test_the_cache_key_holds_the_libraries_and_the_cpu(monkeypatch):
    import llvmlite
    import numba

    tag = cache.environment_tag()
    for part in (numba.__version__, llvmlite.__version__, np.__version__):
        assert part in tag.split("|")
    from numba.core.registry import cpu_target

    assert cpu_target.target_context.codegen().magic_tuple()[1] in tag.split("|")
    # A copy of the cache on another CPU or library version names its modules otherwise.
    before = cache.module_name("x = 1\n")
    monkeypatch.setattr(cache, "environment_tag", lambda: tag + "|another-cpu")
    cache.runtime_digest.cache_clear()
    try:
        assert cache.module_name("x = 1\n") != before
    finally:
        monkeypatch.undo()
        cache.runtime_digest.cache_clear()
    assert cache.module_name("x = 1\n") == before


def test_a_module_is_executed_from_its_generated_text_only(private_cache):
    f = _compile_new(31.5)
    module_file, = (private_cache / "modules").iterdir()
    text = module_file.read_text()
    module_file.write_text(text.replace("31.5", "-1.0") + "\nimport os\nos._planted = 1\n")
    cache.clear_memory_cache()
    with pytest.warns(RuntimeWarning, match="its text is not the text bptt generated"):
        g = _compile_new(31.5)
    assert g(np.ones(1))[0] == 31.5 and not hasattr(os, "_planted")
    assert module_file.read_text() == text and f(np.ones(1))[0] == 31.5
