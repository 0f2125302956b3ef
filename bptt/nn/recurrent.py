"""Recurrent cells and sequence layers with PyTorch's equations and layouts.

Layout: sequences are **time-major**, ``(T, B, F)`` (time, batch, features),
as Theano's scan and PyTorch's default (``batch_first=False``); a mask is
``(T, B)`` with 1 at real steps and 0 at padding.

Equations (``x`` the step's input, ``h``/``c`` the previous state, ``W_ih``
of shape ``(G*H, F)``, ``W_hh`` of ``(G*H, H)``, gates stacked in this order):

- RNN (G = 1): ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)``, act tanh or relu.
- LSTM (G = 4, order i, f, g, o)::

      i, f, g, o = split(x W_ih^T + b_ih + h W_hh^T + b_hh)
      c' = sigmoid(f) * c + sigmoid(i) * tanh(g)
      h' = sigmoid(o) * tanh(c')

- GRU (G = 3, order r, z, n)::

      a_r, a_z, a_n = split(x W_ih^T + b_ih);  b_r, b_z, b_n = split(h W_hh^T + b_hh)
      r = sigmoid(a_r + b_r);  z = sigmoid(a_z + b_z)
      n = tanh(a_n + r * b_n)
      h' = (1 - z) * n + z * h

These are ``torch.nn.RNN/LSTM/GRU``'s, and the parameters have torch's names
(``weight_ih_l0``, ``bias_hh_l1_reverse``, ...) and shapes, so
``layer.load_state_dict({k: v.numpy() for k, v in torch_layer.state_dict().items()})``
loads torch weights.

The sequence layers project the whole input sequence with one product
outside the loop (``x W_ih^T + b_ih`` for all T steps at once) and run the
recurrence with `bptt.scan`, so `truncate_gradient`, backwards directions and
the compiled loop are scan's. With a mask, a padded step keeps the state and
outputs zeros: a padded batch gives each sequence the results it has alone,
and the final state is the one at each sequence's last real step (also in
the backward direction, which starts at each sequence's own end).
"""
from __future__ import annotations

import numpy as np

from .. import tensor as T
from ..scan import scan
from . import init
from .layers import Dropout
from .module import Module

__all__ = ["RNNCell", "LSTMCell", "GRUCell", "RNN", "LSTM", "GRU"]

_ACTIVATIONS = {"tanh": T.tanh, "relu": T.nnet.relu}
_GATES = {"RNN": 1, "LSTM": 4, "GRU": 3}


def _gate(a, k, H):
    return a[..., k * H:(k + 1) * H]


def _recurrent(h, W_hh_T, b_hh):
    a = T.dot(h, W_hh_T)
    return a if b_hh is None else a + b_hh


def _lstm_update(a, c, H):
    """(h', c') from the summed gate pre-activations `a` (order i, f, g, o)."""
    i, f = T.nnet.sigmoid(_gate(a, 0, H)), T.nnet.sigmoid(_gate(a, 1, H))
    g, o = T.tanh(_gate(a, 2, H)), T.nnet.sigmoid(_gate(a, 3, H))
    c_new = f * c + i * g
    return o * T.tanh(c_new), c_new


def _gru_update(xw, hw, h, H):
    """h' from the input's and the state's projections `xw`, `hw` (order r, z, n)."""
    r = T.nnet.sigmoid(_gate(xw, 0, H) + _gate(hw, 0, H))
    z = T.nnet.sigmoid(_gate(xw, 1, H) + _gate(hw, 1, H))
    n = T.tanh(_gate(xw, 2, H) + r * _gate(hw, 2, H))
    return (1 - z) * n + z * h


def _init_weights(module, kind, input_size, hidden_size, bias, rng, dtype, suffix=""):
    """torch's init: every weight and bias U(-1/sqrt(H), 1/sqrt(H))."""
    G, k = _GATES[kind], 1.0 / np.sqrt(hidden_size)
    module.add_param("weight_ih" + suffix,
                     init.uniform((G * hidden_size, input_size), -k, k, rng, dtype))
    module.add_param("weight_hh" + suffix,
                     init.uniform((G * hidden_size, hidden_size), -k, k, rng, dtype))
    for name in ("bias_ih", "bias_hh"):
        if bias:
            module.add_param(name + suffix, init.uniform((G * hidden_size,), -k, k, rng, dtype))
        else:
            object.__setattr__(module, name + suffix, None)


def _zeros_state(x, hidden_size, dtype):
    return T.zeros((x.shape[0], hidden_size), dtype=dtype)


class _Cell(Module):
    kind = None

    def __init__(self, input_size, hidden_size, bias=True, rng=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        _init_weights(self, self.kind, input_size, hidden_size, bias, init.as_rng(rng), dtype)

    def _project(self, x):
        xw = T.dot(x, self.weight_ih.T)
        return xw if self.bias_ih is None else xw + self.bias_ih


class RNNCell(_Cell):
    """One Elman step ``h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (torch.nn.RNNCell).

    ``cell(x, h=None)`` with `x` ``(B, F)`` and `h` ``(B, H)`` (zeros when
    None) returns ``h'``; use it inside your own `scan` step.
    """

    kind = "RNN"

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", rng=None,
                 dtype=None):
        if nonlinearity not in _ACTIVATIONS:
            raise ValueError(f"RNNCell: nonlinearity must be 'tanh' or 'relu', "
                             f"got {nonlinearity!r}")
        super().__init__(input_size, hidden_size, bias, rng, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, x, h=None):
        h = _zeros_state(x, self.hidden_size, self.weight_hh.dtype) if h is None else h
        act = _ACTIVATIONS[self.nonlinearity]
        return act(self._project(x) + _recurrent(h, self.weight_hh.T, self.bias_hh))


class LSTMCell(_Cell):
    """One LSTM step (torch.nn.LSTMCell): ``cell(x, (h, c)=None) -> (h', c')``."""

    kind = "LSTM"

    def forward(self, x, state=None):
        if state is None:
            z = _zeros_state(x, self.hidden_size, self.weight_hh.dtype)
            state = (z, z)
        h, c = state
        a = self._project(x) + _recurrent(h, self.weight_hh.T, self.bias_hh)
        return _lstm_update(a, c, self.hidden_size)


class GRUCell(_Cell):
    """One GRU step (torch.nn.GRUCell): ``cell(x, h=None) -> h'``."""

    kind = "GRU"

    def forward(self, x, h=None):
        h = _zeros_state(x, self.hidden_size, self.weight_hh.dtype) if h is None else h
        hw = _recurrent(h, self.weight_hh.T, self.bias_hh)
        return _gru_update(self._project(x), hw, h, self.hidden_size)


class _SequenceLayer(Module):
    kind = None

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, bidirectional=False,
                 dropout=0.0, truncate_gradient=-1, rng=None, dtype=None, nonlinearity="tanh"):
        super().__init__()
        if nonlinearity not in _ACTIVATIONS:
            raise ValueError(f"{type(self).__name__}: nonlinearity must be 'tanh' or 'relu', "
                             f"got {nonlinearity!r}")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bidirectional, self.truncate_gradient = bidirectional, truncate_gradient
        self.nonlinearity = nonlinearity
        self.n_dirs = 2 if bidirectional else 1
        rng = init.as_rng(rng)
        for layer in range(num_layers):
            size = input_size if layer == 0 else hidden_size * self.n_dirs
            for suffix in self._suffixes(layer):
                _init_weights(self, self.kind, size, hidden_size, bias, rng, dtype, suffix)
        self.dropout = Dropout(dropout, seed=int(rng.integers(2 ** 31)))

    def _suffixes(self, layer):
        return [f"_l{layer}"] + ([f"_l{layer}_reverse"] if self.bidirectional else [])

    def _n_state(self):
        return 2 if self.kind == "LSTM" else 1

    def forward(self, x, state=None, mask=None):
        """Run over the sequence `x` ``(T, B, F)``.

        Parameters
        ----------
        x : tensor3
        state : tensor3, a pair of them for LSTM ``(h0, c0)``, or None
            Initial state(s) of shape ``(num_layers * num_directions, B, H)``
            in torch's order (layer 0 forward, layer 0 backward, layer 1, ...);
            zeros when None.
        mask : matrix ``(T, B)``, optional
            1 at real steps, 0 at padding (any dtype; cast to the state's).

        Returns
        -------
        output : tensor3 ``(T, B, num_directions * H)``
            The last layer's states (zeros at padded steps with a mask).
        final : tensor3, or ``(h_n, c_n)`` for LSTM
            The state after each sequence's last real step, ``(L * D, B, H)``.
        """
        x = T.as_tensor_variable(x)
        if x.ndim != 3:
            raise ValueError(f"{type(self).__name__}: input must be (T, B, F), got a "
                             f"{x.ndim}-d tensor {x}; add a batch axis of 1 for one sequence")
        dtype = self.weight_hh_l0.dtype
        init_states = self._initial_states(x, state, dtype)
        if mask is not None:
            mask = T.cast(T.as_tensor_variable(mask), dtype)
        finals, inp = [], x
        for layer in range(self.num_layers):
            if layer > 0:
                inp = self.dropout(inp)
            outs = []
            for d, suffix in enumerate(self._suffixes(layer)):
                k = layer * self.n_dirs + d
                y, last = self._direction(inp, suffix, [s[k] for s in init_states], mask,
                                          backwards=d == 1)
                outs.append(y)
                finals.append(last)
            inp = outs[0] if len(outs) == 1 else T.concatenate(outs, axis=2)
        stacked = [T.stack([f[i] for f in finals]) for i in range(self._n_state())]
        return inp, (tuple(stacked) if self.kind == "LSTM" else stacked[0])

    def _initial_states(self, x, state, dtype):
        n = self._n_state()
        if state is None:
            z = T.zeros((self.num_layers * self.n_dirs, x.shape[1], self.hidden_size), dtype=dtype)
            return [z] * n
        states = list(state) if self.kind == "LSTM" else [state]
        if len(states) != n:
            raise ValueError(f"LSTM: state must be a pair (h0, c0), got {len(states)} value(s)")
        return [T.as_tensor_variable(s) for s in states]

    def _direction(self, x, suffix, init_states, mask, backwards):
        W_ih, W_hh = getattr(self, "weight_ih" + suffix), getattr(self, "weight_hh" + suffix)
        b_ih, b_hh = getattr(self, "bias_ih" + suffix), getattr(self, "bias_hh" + suffix)
        xw = T.dot(x, W_ih.T)
        if b_ih is not None:
            xw = xw + b_ih
        step = self._step_fn()
        n = len(init_states)
        W_hh_T = W_hh.T
        non_seqs = [W_hh_T] + ([] if b_hh is None else [b_hh])

        def body(*args):
            if mask is None:
                xw_t, states, ns = args[0], args[1:1 + n], args[1 + n:]
                return step(xw_t, states, ns)
            xw_t, m_t, states, ns = args[0], args[1], args[2:2 + n], args[2 + n:]
            new = step(xw_t, states, ns)
            m = m_t.dimshuffle(0, "x")
            kept = [s + m * (s_new - s) for s, s_new in zip(states, new)]
            return kept + [m * new[0]]

        seqs = [xw] if mask is None else [xw, mask]
        outputs_info = list(init_states) + ([] if mask is None else [None])
        res, _ = scan(body, sequences=seqs, outputs_info=outputs_info, non_sequences=non_seqs,
                      go_backwards=backwards, truncate_gradient=self.truncate_gradient,
                      name=f"{type(self).__name__.lower()}{suffix}", return_list=True)
        y = res[0] if mask is None else res[-1]
        if backwards:
            y = y[::-1]
        last = [r[-1] for r in res[:n]]
        return y, last

    def _step_fn(self):
        H, kind, act = self.hidden_size, self.kind, _ACTIVATIONS[self.nonlinearity]

        def step(xw_t, states, ns):
            a = _recurrent(states[0], ns[0], ns[1] if len(ns) > 1 else None)
            if kind == "RNN":
                return [act(xw_t + a)]
            if kind == "GRU":
                return [_gru_update(xw_t, a, states[0], H)]
            return list(_lstm_update(xw_t + a, states[1], H))

        return step


class RNN(_SequenceLayer):
    """Elman RNN over a sequence (torch.nn.RNN): ``rnn(x, h0=None, mask=None) -> (y, h_n)``.

    Parameters
    ----------
    input_size, hidden_size : int
    num_layers : int
        Stacked layers; layer k > 0 reads layer k-1's output (both directions).
    nonlinearity : 'tanh' or 'relu'
    bias : bool
    bidirectional : bool
        A second pass over the reversed sequence; outputs are concatenated.
    dropout : float
        Dropout on each layer's output except the last's (training mode only).
    truncate_gradient : int
        Passed to `scan` (-1: full BPTT).
    rng : numpy.random.Generator or int seed
    dtype : str, optional
    """

    kind = "RNN"

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 bidirectional=False, dropout=0.0, truncate_gradient=-1, rng=None, dtype=None):
        super().__init__(input_size, hidden_size, num_layers, bias, bidirectional, dropout,
                         truncate_gradient, rng, dtype, nonlinearity)


class LSTM(_SequenceLayer):
    """LSTM over a sequence (torch.nn.LSTM): ``lstm(x, (h0, c0)=None, mask=None) -> (y, (h_n, c_n))``.

    Parameters as `RNN` (no nonlinearity), plus ``forget_bias``: a value
    added to the forget gate's part of every ``bias_ih`` at initialisation
    (0 as torch; 1 is the common choice for long memories).
    """

    kind = "LSTM"

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, bidirectional=False,
                 dropout=0.0, truncate_gradient=-1, forget_bias=0.0, rng=None, dtype=None):
        super().__init__(input_size, hidden_size, num_layers, bias, bidirectional, dropout,
                         truncate_gradient, rng, dtype)
        if forget_bias and bias:
            H = hidden_size
            for layer in range(num_layers):
                for suffix in self._suffixes(layer):
                    b = getattr(self, "bias_ih" + suffix)
                    v = b.get_value()
                    v[H:2 * H] += forget_bias
                    b.set_value(v)


class GRU(_SequenceLayer):
    """GRU over a sequence (torch.nn.GRU): ``gru(x, h0=None, mask=None) -> (y, h_n)``.

    Parameters as `RNN` (no nonlinearity).
    """

    kind = "GRU"

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, bidirectional=False,
                 dropout=0.0, truncate_gradient=-1, rng=None, dtype=None):
        super().__init__(input_size, hidden_size, num_layers, bias, bidirectional, dropout,
                         truncate_gradient, rng, dtype)
