"""`bptt.config`: settings a user can set are checked when set, naming the setting."""
from __future__ import annotations

import pytest

import bptt


@pytest.mark.parametrize("name, bad, message", [
    ("floatX", "float16", "floatX must be 'float32' or 'float64'"),
    ("mode", "FAST", "mode must be 'NUMBA' or 'PY'"),
    ("chunk_rows", 0, "chunk_rows must be an int of at least 1"),
    ("chunk_rows", -3, "chunk_rows must be an int of at least 1"),
    ("chunk_rows", 2.5, "chunk_rows must be an int of at least 1"),
    ("chunk_rows", "64", "chunk_rows must be an int of at least 1"),
    ("chunk_rows", True, "chunk_rows must be an int of at least 1"),
    ("blas_threads", -1, "blas_threads must be an int of at least 0"),
    ("blas_threads", "2", "blas_threads must be an int of at least 0"),
    ("reuse_forward", "on", "reuse_forward must be 'auto', True or False"),
])
def test_a_bad_value_is_refused_and_the_old_one_kept(name, bad, message):
    before = getattr(bptt.config, name)
    with pytest.raises(ValueError, match=message):
        setattr(bptt.config, name, bad)
    assert getattr(bptt.config, name) == before


def test_chunk_rows_default_and_environment(monkeypatch):
    from bptt.config import _Config

    monkeypatch.delenv("BPTT_CHUNK_ROWS", raising=False)
    assert _Config().chunk_rows == 256
    monkeypatch.setenv("BPTT_CHUNK_ROWS", "1024")
    assert _Config().chunk_rows == 1024
    monkeypatch.setenv("BPTT_CHUNK_ROWS", "0")
    with pytest.raises(ValueError, match="chunk_rows must be an int of at least 1"):
        _Config()
    monkeypatch.setenv("BPTT_CHUNK_ROWS", "many")
    with pytest.raises(ValueError, match="BPTT_CHUNK_ROWS='many' is not an integer"):
        _Config()


def test_reuse_forward_default_and_environment(monkeypatch):
    from bptt.config import _Config

    monkeypatch.delenv("BPTT_REUSE_FORWARD", raising=False)
    assert _Config().reuse_forward == "auto"
    for text, value in [("1", True), ("0", False), ("auto", "auto"), ("", "auto")]:
        monkeypatch.setenv("BPTT_REUSE_FORWARD", text)
        assert _Config().reuse_forward == value
    monkeypatch.setenv("BPTT_REUSE_FORWARD", "yes")
    with pytest.raises(ValueError, match="BPTT_REUSE_FORWARD='yes': expected auto, 1 or 0"):
        _Config()


def test_blas_threads_default_and_environment(monkeypatch):
    from bptt.config import _Config

    monkeypatch.delenv("BPTT_BLAS_THREADS", raising=False)
    assert _Config().blas_threads == 0
    monkeypatch.setenv("BPTT_BLAS_THREADS", "2")
    assert _Config().blas_threads == 2
