"""NumPy references of the bptt.nn equations, written from the published formulas."""
import numpy as np


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def cell_step(kind, x, state, p, H, act=np.tanh):
    """One step of `kind` on NumPy arrays; `p` has W_ih, W_hh, b_ih, b_hh; state a tuple."""
    a = x @ p["W_ih"].T + p["b_ih"]
    b = state[0] @ p["W_hh"].T + p["b_hh"]
    if kind == "RNN":
        return (act(a + b),)
    if kind == "GRU":
        r = sigmoid(a[:, :H] + b[:, :H])
        z = sigmoid(a[:, H:2 * H] + b[:, H:2 * H])
        n = np.tanh(a[:, 2 * H:] + r * b[:, 2 * H:])
        return ((1 - z) * n + z * state[0],)
    g = a + b
    i, f = sigmoid(g[:, :H]), sigmoid(g[:, H:2 * H])
    gg, o = np.tanh(g[:, 2 * H:3 * H]), sigmoid(g[:, 3 * H:])
    c = f * state[1] + i * gg
    return (o * np.tanh(c), c)


def run_direction(kind, x, state, p, H, backwards=False, act=np.tanh):
    """Outputs (T, B, H) and final state of one direction over x (T, B, F), no mask."""
    steps = range(x.shape[0] - 1, -1, -1) if backwards else range(x.shape[0])
    ys = np.zeros(x.shape[:2] + (H,))
    for t in steps:
        state = cell_step(kind, x[t], state, p, H, act)
        ys[t] = state[0]
    return ys, state


def run_layer(kind, sd, x, H, num_layers, bidirectional, state=None, act=np.tanh):
    """A whole (stacked, bidirectional) layer on one unpadded batch; torch's naming in `sd`."""
    D = 2 if bidirectional else 1
    n_state = 2 if kind == "LSTM" else 1
    B = x.shape[1]
    if state is None:
        state = [np.zeros((num_layers * D, B, H))] * n_state
    finals = [[] for _ in range(n_state)]
    inp = x
    for layer in range(num_layers):
        outs = []
        for d in range(D):
            suf = f"_l{layer}" + ("_reverse" if d else "")
            p = {"W_ih": sd["weight_ih" + suf], "W_hh": sd["weight_hh" + suf],
                 "b_ih": sd["bias_ih" + suf], "b_hh": sd["bias_hh" + suf]}
            k = layer * D + d
            y, fin = run_direction(kind, inp, tuple(s[k] for s in state), p, H, d == 1, act)
            outs.append(y)
            for i in range(n_state):
                finals[i].append(fin[i])
        inp = np.concatenate(outs, axis=2)
    return inp, [np.stack(f) for f in finals]
