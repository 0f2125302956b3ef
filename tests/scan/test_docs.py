"""Every code block of docs/scan.md runs (in order, in one namespace) in both modes."""
import pathlib
import re

import pytest

import bptt

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "scan.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_guide_has_examples():
    assert len(BLOCKS) >= 10


def test_guide_examples_run(mode, monkeypatch):
    monkeypatch.setattr(bptt.config, "mode", mode)
    namespace = {}
    for k, block in enumerate(BLOCKS):
        if "bptt.scan(fn, sequences=None" in block:
            continue   # the signature, not an example
        try:
            exec(compile(block, f"docs/scan.md block {k}", "exec"), namespace)
        except Exception as exc:
            pytest.fail(f"docs/scan.md block {k} failed: {type(exc).__name__}: {exc}\n{block}")
