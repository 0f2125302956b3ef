"""``theano.tensor.xlogx``: ``x log x`` and ``x log y`` with the limit 0 at ``x = 0``."""
import bptt.tensor as _t


def xlogx(x):
    """``x * log(x)``, 0 where ``x == 0``."""
    x = _t.as_tensor_variable(x)
    return _t.switch(_t.eq(x, 0), 0.0, x * _t.log(_t.switch(_t.eq(x, 0), 1.0, x)))


def xlogy0(x, y):
    """``x * log(y)``, 0 where ``x == 0`` (whatever y is)."""
    x, y = _t.as_tensor_variable(x), _t.as_tensor_variable(y)
    return _t.switch(_t.eq(x, 0), 0.0, x * _t.log(_t.switch(_t.eq(x, 0), 1.0, y)))
