"""``theano.tensor.extra_ops``: running sums and products, differences, counts, diagonals,
one-hot rows, sorted insertion points, selections, distinct values, index conversions and
the Bartlett window."""
import bptt.tensor as _t
from bptt.tensor.extra import repeat as repeat
from bptt.tensor.extra_ops import (CumOp as CumOp, bartlett as bartlett, bincount as bincount,
                                   cumprod as cumprod, cumsum as cumsum, diff as diff,
                                   fill_diagonal as fill_diagonal,
                                   fill_diagonal_offset as fill_diagonal_offset,
                                   squeeze as squeeze)
from bptt.tensor.search import (compress as compress, ravel_multi_index as ravel_multi_index,
                                searchsorted as searchsorted, unique as unique,
                                unravel_index as unravel_index)


def to_one_hot(y, nb_class, dtype=None):
    """The one-hot rows of the integer vector `y`: a ``(len(y), nb_class)`` matrix of
    `dtype` (floatX by default), 1 at ``[i, y[i]]`` and 0 elsewhere. A class index out
    of range is an IndexError when the graph runs."""
    from bptt.config import config

    y = _t.as_tensor_variable(y)
    if y.ndim != 1 or y.dtype[0] not in "iu":
        raise TypeError(f"to_one_hot: expected a vector of integer class indices, got {y.type}; "
                        "cast it with y.astype('int64')")
    rows = _t.zeros((y.shape[0], nb_class), dtype=dtype or config.floatX)
    return _t.set_subtensor(rows[_t.arange(y.shape[0]), y], 1)
