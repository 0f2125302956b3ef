"""``theano.tensor.sharedvar``: shared variable classes."""
from bptt.compile.sharedvalue import (SharedVariable as SharedVariable,
                                      TensorSharedVariable as TensorSharedVariable)
from bptt.compile.sharedvalue import shared as tensor_constructor  # noqa: F401
