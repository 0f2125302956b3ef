"""``theano.scan_module``: `scan`, `until` and the views, and the `Scan` op class."""
import sys

from bptt.scan import (foldl as foldl, foldr as foldr, map as map, reduce as reduce,  # noqa: A004
                       until as until)
from bptt.graph.fg import MissingInputError
from bptt.scan import scan as _scan
from bptt.scan.canonical import default_name as _default_name


def scan(fn, sequences=None, outputs_info=None, non_sequences=None, n_steps=None,
         truncate_gradient=-1, go_backwards=False, mode=None, name=None, profile=False,
         allow_gc=None, strict=False, return_list=False):
    """`bptt.scan` with Theano's meaning of `strict`: the shared variables the step
    reads must be passed in `non_sequences`; other outer variables need not be."""
    try:
        return _scan(fn, sequences, outputs_info, non_sequences, n_steps, truncate_gradient,
                     go_backwards, mode, name or _default_name(sys._getframe(1)), profile,
                     allow_gc, "shared" if strict is True else strict, return_list)
    except MissingInputError as exc:
        if strict is not True:
            raise
        # the caller wrote strict=True: the message names what they passed
        raise MissingInputError(str(exc).replace("strict='shared'", "strict=True")) from None


from . import scan_op as scan_op, scan_utils as scan_utils  # noqa: E402
