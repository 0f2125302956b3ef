"""PyTensor: ``pytensor.scan`` + ``pytensor.grad`` compiled with ``mode="NUMBA"``.

Its compile directory and numba's cache live in ``$BENCH_CACHE_DIR`` (set by
peers.py through ``PYTENSOR_FLAGS`` and ``NUMBA_CACHE_DIR``).
"""
from __future__ import annotations

from .cases import Built, as_numpy_list, identity_prepare

KINDS = ("rnn", "lstm")


def _scan(pytensor, step, **kwargs):
    out = pytensor.scan(step, **kwargs)
    # older releases return (outputs, updates); newer ones may return outputs only
    return out[0] if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], dict) else out


def build(kind, dtype):
    import pytensor
    import pytensor.tensor as pt

    X = pt.tensor3("X", dtype=dtype)
    h0 = pt.matrix("h0", dtype=dtype)
    Wx, Wh = pt.matrix("Wx", dtype=dtype), pt.matrix("Wh", dtype=dtype)
    b = pt.vector("b", dtype=dtype)
    if kind == "rnn":
        H = _scan(pytensor, lambda x, h, Wx, Wh, b: pt.tanh(x @ Wx + h @ Wh + b),
                  sequences=X, outputs_info=h0, non_sequences=[Wx, Wh, b])
        params, inputs = [Wx, Wh, b, h0], [X, h0, Wx, Wh, b]
    else:
        c0 = pt.matrix("c0", dtype=dtype)

        def step(x, h, c, Wx, Wh, b):
            n = h.shape[1]
            z = x @ Wx + h @ Wh + b
            i, f, o = (pt.sigmoid(z[:, k * n:(k + 1) * n]) for k in range(3))
            c_new = f * c + i * pt.tanh(z[:, 3 * n:])
            return o * pt.tanh(c_new), c_new

        H = _scan(pytensor, step, sequences=X, outputs_info=[h0, c0],
                  non_sequences=[Wx, Wh, b])[0]
        params, inputs = [Wx, Wh, b, h0, c0], [X, h0, c0, Wx, Wh, b]
    loss = 0.5 * (H ** 2).sum()
    f = pytensor.function(inputs, [loss] + pytensor.grad(loss, params), mode="NUMBA")
    return Built(identity_prepare, f, as_numpy_list)
