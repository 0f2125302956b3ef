"""``theano.scan_module``: `scan`, `until` and the views, and the `Scan` op class."""
from bptt.scan import (foldl as foldl, foldr as foldr, map as map, reduce as reduce,  # noqa: A004
                       scan as scan, until as until)

from . import scan_op as scan_op  # noqa: E402
