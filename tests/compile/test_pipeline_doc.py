"""docs/architecture.md's table of the rewrite pipeline lists compile/passes.py's passes in order."""
import pathlib
import re

from bptt.compile.passes import pm

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "architecture.md"


def documented_passes():
    section = DOC.read_text(encoding="utf-8").split("## The rewrite pipeline", 1)[1]
    rows = re.findall(r"^\| (\d+(?:-\d+)?) \| (.*?) \|", section.split("\n## ", 1)[0], re.M)
    return [name for _, cell in rows for name in re.findall(r"`([a-z_]+)`", cell)]


def test_the_documented_pipeline_is_the_pipeline():
    assert documented_passes() == pm.names()
