"""``theano.compile.io``: `In`, and `Param`, its older name."""
from bptt.compile.io import In as In


def Param(variable, default=None, name=None, mutable=False, strict=False,  # noqa: N802
          allow_downcast=None, implicit=None, borrow=None):
    """Theano's older ``theano.Param(variable, default=...)``: an `In` whose value,
    used when the call omits the argument, is `default`."""
    return In(variable, name=name, value=default, mutable=mutable, strict=strict,
              allow_downcast=allow_downcast, implicit=implicit, borrow=bool(borrow))
