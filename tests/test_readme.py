"""README.md's first code block is what CI runs: every line of it is a line of .ci/run."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _read(*path):
    with open(os.path.join(ROOT, *path), encoding="utf-8") as f:
        return f.read()


def readme_commands():
    block = re.search(r"^```sh\n(.*?)^```", _read("README.md"), re.S | re.M)
    assert block, "README.md has no ```sh code block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_ci_runs_the_readme_commands_in_order():
    commands = readme_commands()
    assert len(commands) == 2, commands
    # .ci/run may add `|| exit` after a command (a failing && list does not stop set -e)
    ci = [re.sub(r"\s*\|\|\s*exit( \$\?)?$", "", line) for line in _read(".ci", "run").splitlines()
          if line.strip() and not line.lstrip().startswith("#")]
    at = [ci.index(c) if c in ci else None for c in commands]
    assert None not in at, f"README commands not in .ci/run: {commands} vs {ci}"
    assert at == sorted(at), "CI runs the README's commands in another order"
    assert ci.index("rm -rf .venv") < at[0], "CI must start from a new virtual environment"
