"""Tensor rewrites, one module per family; their order lives in `bptt.compile.passes`."""
from .canonicalize import canonical_rewriters as canonical_rewriters
from .constant_folding import constant_folding as constant_folding
from .dead_code import remove_dead_code as remove_dead_code
from .merge import merge as merge
from .shape import shape_rewriters as shape_rewriters
