"""Smaller reliability items: lossy integer conversions, float-to-int casts, non-ASCII
names under an ASCII locale, Check messages, set_value errors."""
import os
import subprocess
import sys

import numpy as np
import pytest

import bptt
import bptt.tensor as T
from bptt.tensor.assertion import check

from .test_cache_faults import ROOT


@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_an_integer_that_float64_would_round_is_refused(mode, dtype):
    x = T.dvector("x")
    f = bptt.function([x], x * 1.0, mode=mode)
    np.testing.assert_array_equal(f(np.array([3, 2 ** 53], dtype=dtype)), [3.0, 2.0 ** 53])
    with pytest.raises(TypeError, match=f"converting {dtype} to float64 would lose information"):
        f(np.array([2 ** 53 + 1], dtype=dtype))
    with pytest.raises(TypeError, match="would lose information"):
        f([2 ** 53 + 1])
    g = bptt.function([x], x * 1.0, mode=mode, allow_input_downcast=True)
    assert g(np.array([2 ** 53 + 1], dtype=dtype))[0] == 2.0 ** 53


def test_set_value_refuses_a_lossy_integer_and_names_the_variable():
    w = bptt.shared(np.zeros(1), name="w")
    with pytest.raises(TypeError, match="shared variable 'w': converting int64 to float64"):
        w.set_value(np.array([2 ** 53 + 1]))
    with pytest.raises(TypeError, match=r"shared variable 'w': cannot convert str \(<U3\) to a "
                                        r"float64 array"):
        w.set_value("abc")
    w.set_value(np.array([7]))
    assert w.get_value()[0] == 7.0


VALUES = np.array([np.inf, np.nan, -np.inf, 1e300, -1e19, 1e19, 3e9, -3e9, 300.7, -3.5])


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint64", "uint16",
                                   "uint8"])
def test_casting_nan_or_inf_to_an_integer_gives_numpys_result_in_both_modes(dtype):
    x, seq = T.dscalar("x"), T.dvector("seq")
    # x / 0.0 is inf or NaN: LLVM took the conversion as undefined and gave 0
    out, _ = bptt.scan(lambda s: [T.cast(s, dtype), T.cast(x / 0.0, dtype)], sequences=[seq],
                       name="casts")
    with np.errstate(all="ignore"):
        want = VALUES.astype(dtype)
        want_inf = np.array([np.inf, np.nan]).astype(dtype)
    for mode in ("PY", "NUMBA"):
        f = bptt.function([seq, x], out, mode=mode)
        with np.errstate(all="ignore"):
            direct, inf = f(VALUES, 1.0)
            _, nan = f(VALUES, 0.0)
        np.testing.assert_array_equal(direct, want, err_msg=mode)
        assert set(inf.tolist()) == {want_inf[0]} and set(nan.tolist()) == {want_inf[1]}, mode


def test_a_check_message_with_format_fields_reads_the_same_in_both_modes(mode):
    x = T.dscalar("x")
    f = bptt.function([x], check(x, x < 1.0, "v={0} bad, twice {1:.2f}", x, x * 2.0), mode=mode)
    with pytest.raises(ValueError, match=r"^v=1\.25 bad, twice 2\.50"):
        f(1.25)


def test_a_non_ascii_scan_name_compiles_under_an_ascii_locale(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(
        "import numpy as np, bptt, bptt.tensor as T\n"
        "x = T.dvector('x')\n"
        "out, _ = bptt.scan(lambda v: v * 2.0, sequences=[x], name='schleife_\\u00fc')\n"
        "f = bptt.function([x], out, mode='NUMBA')\n"
        "import locale; print(locale.getpreferredencoding(False), f(np.ones(2)).tolist())\n",
        encoding="ascii")
    env = dict(os.environ, LC_ALL="C", LANG="C", PYTHONUTF8="0", PYTHONCOERCECLOCALE="0",
               PYTHONIOENCODING="utf-8", BPTT_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ANSI_X3.4-1968", "[2.0,", "2.0]"]
