"""``theano.compile``: `function` with Theano's signature, `In`, modes, `shared`."""
from .io import In as In, Param as Param

from .function import function as function
from .sharedvalue import SharedVariable as SharedVariable, shared as shared
from .mode import (FAST_COMPILE as FAST_COMPILE, FAST_RUN as FAST_RUN, Mode as Mode,
                   MonitorMode as MonitorMode, get_default_mode as get_default_mode,
                   get_mode as get_mode)
from . import (debugmode as debugmode, io as io, mode as mode,  # noqa: E402
               pfunc as pfunc, sharedvalue as sharedvalue)
