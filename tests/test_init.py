"""`import bptt` stays light: numba (and scipy) are imported by the NUMBA linker only.

A cached function loads in a fresh process in well under a second, numba's
own start-up being most of it (docs/warm-start.md); a graph run in PY mode
must not pay for numba at all.
"""
import json
import os
import pathlib
import subprocess
import sys

import bptt

ROOT = pathlib.Path(bptt.__file__).resolve().parent.parent

CODE = r'''
import json, sys
import numpy as np
import bptt
T = bptt.tensor
x, W = T.matrix("x"), T.matrix("W")
h, _ = bptt.scan(lambda x_t, h, W: T.tanh(T.dot(x_t, W) + h), sequences=x,
                 outputs_info=T.zeros_like(x[0]), non_sequences=W)
loss = (h ** 2).sum()
f = bptt.function([x, W], [loss] + bptt.grad(loss, [W]), mode="PY")
f(np.ones((3, 2)), np.eye(2))
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & {"numba", "llvmlite", "scipy"})))
'''


def test_a_py_mode_function_imports_neither_numba_nor_scipy():
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path)
    out = subprocess.run([sys.executable, "-c", CODE], env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
