"""``theano.tensor.sharedvar``: shared variable classes."""
from bptt.tensor.sharedvar import (SharedVariable as SharedVariable,
                                      TensorSharedVariable as TensorSharedVariable)
from bptt.tensor.sharedvar import shared as tensor_constructor  # noqa: F401
