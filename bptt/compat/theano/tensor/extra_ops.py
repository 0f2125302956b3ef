"""``theano.tensor.extra_ops``: running sums and products, differences, counts, diagonals."""
from bptt.tensor.extra import repeat as repeat
from bptt.tensor.extra_ops import (CumOp as CumOp, bincount as bincount, cumprod as cumprod,
                                   cumsum as cumsum, diff as diff, fill_diagonal as fill_diagonal,
                                   fill_diagonal_offset as fill_diagonal_offset,
                                   squeeze as squeeze)
