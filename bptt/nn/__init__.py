"""bptt.nn: layers, losses, optimizers and training helpers for recurrent networks.

Sequences are time-major, ``(T, B, F)``. Parameters are shared variables
held by `Module` objects; optimizers return update dictionaries for
`bptt.function`. See docs/training.md for a tutorial and docs/nn.md for
every name.
"""
from . import data as data, init as init
from .layers import Dense as Dense, Dropout as Dropout, Embedding as Embedding
from .layers import LayerNorm as LayerNorm
from .losses import (binary_cross_entropy_with_logits as binary_cross_entropy_with_logits,
                     cross_entropy as cross_entropy, mse as mse)
from .module import Module as Module, Sequential as Sequential, load as load, save as save
from .optim import (Schedule as Schedule, adagrad as adagrad, adam as adam, adamw as adamw,
                    clip_by_global_norm as clip_by_global_norm, clip_by_value as clip_by_value,
                    constant_schedule as constant_schedule, cosine_schedule as cosine_schedule,
                    get_or_compute_grads as get_or_compute_grads, global_norm as global_norm,
                    momentum as momentum, nesterov_momentum as nesterov_momentum,
                    rmsprop as rmsprop, sgd as sgd, step_schedule as step_schedule,
                    warmup_schedule as warmup_schedule)
from .recurrent import (GRU as GRU, GRUCell as GRUCell, LSTM as LSTM, LSTMCell as LSTMCell,
                        RNN as RNN, RNNCell as RNNCell)
from .train import (History as History, fit as fit, load_checkpoint as load_checkpoint,
                    plot_history as plot_history, save_checkpoint as save_checkpoint)
