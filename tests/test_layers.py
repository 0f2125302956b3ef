"""The package layers of docs/architecture.md: a package imports only the ones below it.

Every ``import`` in bptt's sources is read, those inside functions too, since
a lazy import reaches up just as well. The two exceptions the architecture
page names are listed here, each for the one file that has it.
"""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent / "bptt"

# Bottom to top; a package may import the ones before it.
LAYERS = ["graph", "tensor", "grad", "scan", "link", "compile"]
BASE = {"config", "errors", "printing"}   # imported by every layer (printing: see below)
ALLOWED_UPWARD = {
    ("grad/jacobian.py", "scan"),    # jacobian and hessian build scans
    ("grad/check.py", "compile"),    # verify_grad compiles what it compares
}


def _package_of(path):
    parts = path.relative_to(ROOT).parts
    return parts[0] if len(parts) > 1 else pathlib.Path(parts[0]).stem


def _imported_packages(path, root=ROOT):
    """The bptt packages (first name below bptt) that `path` imports, with the line."""
    module = list(path.relative_to(root.parent).with_suffix("").parts)
    if module[-1] == "__init__":
        module.pop()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = module[:len(module) - node.level + (path.name == "__init__.py")]
                target = base + (node.module.split(".") if node.module else [])
            else:
                target = (node.module or "").split(".")
            names = [target] if len(target) > 1 else [target + [a.name] for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name.split(".") for a in node.names]
        else:
            continue
        for t in names:
            if len(t) > 1 and t[0] == "bptt":
                yield t[1], node.lineno


def _violations():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        own = _package_of(path)
        if own not in LAYERS:
            continue            # nn, compat, printing, demo, the faces: on top of everything
        rel = str(path.relative_to(ROOT))
        for pkg, line in _imported_packages(path):
            if pkg in BASE or pkg == own or (rel, pkg) in ALLOWED_UPWARD:
                continue
            if pkg not in LAYERS or LAYERS.index(pkg) > LAYERS.index(own):
                found.append(f"bptt/{rel}:{line} ({own}) imports bptt.{pkg}")
    return found


def test_no_package_imports_a_higher_one():
    assert _violations() == []


def test_printing_reads_only_the_graph():
    """`Function.debugprint` calls bptt.printing, so printing stays at the graph's level."""
    assert {pkg for pkg, _ in _imported_packages(ROOT / "printing.py")} <= {"graph"}


@pytest.mark.parametrize("source, expected", [
    ("from ...compile.function import function\n", "compile"),
    ("def f():\n    from ... import nn\n", "nn"),
    ("import bptt.link.numba\n", "link"),
])
def test_the_reader_sees_upward_imports(tmp_path, source, expected):
    path = tmp_path / "bptt" / "tensor" / "sub" / "mod.py"
    path.parent.mkdir(parents=True)
    path.write_text(source)
    assert [pkg for pkg, _ in _imported_packages(path, tmp_path / "bptt")] == [expected]
