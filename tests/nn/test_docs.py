"""docs/nn.md lists every public name of bptt.nn (and of its data and init modules)."""
import os
import types

import bptt.nn as nn

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "nn.md")


def public(mod):
    return [n for n in dir(mod) if not n.startswith("_")
            and not isinstance(getattr(mod, n), types.ModuleType)]


def test_reference_lists_every_public_name():
    text = open(DOC).read()
    missing = [n for n in public(nn) if f"`{n}" not in text]
    missing += [f"data.{n}" for n in nn.data.__all__ if f"`data.{n}" not in text]
    missing += [f"init.{n}" for n in nn.init.__all__ if f"init.{n}" not in text]
    assert not missing, f"docs/nn.md does not list: {missing}"
