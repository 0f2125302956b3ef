"""``theano.tensor.subtensor``: indexing op classes and functions."""
from bptt.tensor.subtensor import (AdvancedIncSubtensor as AdvancedIncSubtensor,
                                   AdvancedSubtensor as AdvancedSubtensor,
                                   IncSubtensor as IncSubtensor, Subtensor as Subtensor,
                                   inc_subtensor as inc_subtensor, set_subtensor as set_subtensor)
