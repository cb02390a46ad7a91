"""Samples for the rows of src/torchjax/_ops/rnn.py: the cells, the whole-sequence row `_rnn`
(through torch.rnn_tanh / rnn_relu / lstm / gru, padded and packed) and the packing rows
(through torch.nn.utils.rnn)."""

import numpy as np

from .harness import Const, S, make, raises

_GATES = {"rnn_tanh": 1, "rnn_relu": 1, "lstm": 4, "gru": 3}


def _params(kind, inp, hidden, layers=1, dirs=1, bias=True, proj=0):
    """Weights in PyTorch's flat order: per layer and direction w_ih, w_hh[, b_ih, b_hh][, w_hr]."""
    g = _GATES[kind] * hidden
    out_h = proj or hidden
    ps = []
    for layer in range(layers):
        f = inp if layer == 0 else out_h * dirs
        for _ in range(dirs):
            ps += [make(g, f, low=-0.7, high=0.7), make(g, out_h, low=-0.7, high=0.7)]
            if bias:
                ps += [make(g, low=-0.5, high=0.5), make(g, low=-0.5, high=0.5)]
            if proj:
                ps.append(make(proj, hidden, low=-0.7, high=0.7))
    return ps


def _stack(kind, bias, layers, bidirectional, batch_first):
    """call= for the padded overload; hx is one array, or [h0, c0] for lstm."""
    def call(lib, x, hx, params):
        return getattr(lib, kind)(x, tuple(hx) if kind == "lstm" else hx, params, bias, layers,
                                  0.0, False, bidirectional, batch_first)
    return call


def _packed(kind, bias, layers, bidirectional):
    """call= for the packed overload (data, batch_sizes, hx, params, ...)."""
    def call(lib, data, batch_sizes, hx, params):
        return getattr(lib, kind)(data, batch_sizes, tuple(hx) if kind == "lstm" else hx,
                                  params, bias, layers, 0.0, True, bidirectional)
    return call


def _cell(name):
    return lambda lib, *a: getattr(lib, name)(*a)


def _lstm_cell(lib, x, hx, *w):
    return lib.lstm_cell(x, tuple(hx), *w)


def R(name, **kw):
    """call= for torch.nn.utils.rnn.<name>(first argument, **kw)."""
    return lambda lib, a, **k: getattr(lib.nn.utils.rnn, name)(a, **kw, **k)


def _pad_packed(lengths, enforce_sorted=True, **kw):
    def call(lib, x):
        u = lib.nn.utils.rnn
        return u.pad_packed_sequence(u.pack_padded_sequence(x, lengths,
                                                            enforce_sorted=enforce_sorted), **kw)
    return call


# rows whose grad_fn name cannot be PyTorch's (one node where PyTorch has several)
GRAD_NAME_SKIP = {
    "_rnn": "one node for a whole stack; PyTorch's output shows StackBackward0, CatBackward0 "
            "or MkldnnRnnLayerBackward0 depending on mode and direction",
    "lstm_cell": "h' and c' come from one node; PyTorch's are MulBackward0 and AddBackward0",
}

SAMPLES = {
    "rnn_tanh_cell": [
        S(make(3, 4), make(3, 5), make(5, 4), make(5, 5), make(5), make(5),
          call=_cell("rnn_tanh_cell")),
        S(make(2, 4), make(2, 3), make(3, 4), make(3, 3), call=_cell("rnn_tanh_cell")),
        S(make(2, 4), make(2, 3), make(3, 5), make(3, 3), grad=False,
          call=raises(_cell("rnn_tanh_cell")), desc="input size mismatch"),
        S(make(2, 4), make(3, 3), make(3, 4), make(3, 3), grad=False,
          call=raises(_cell("rnn_tanh_cell")), desc="batch mismatch"),
    ],
    "rnn_relu_cell": [
        S(make(3, 4), make(3, 5), make(5, 4), make(5, 5), make(5), make(5),
          call=_cell("rnn_relu_cell")),
        S(make(2, 4), make(2, 3), make(3, 4), make(3, 4), grad=False,
          call=raises(_cell("rnn_relu_cell")), desc="hidden size mismatch"),
    ],
    "gru_cell": [
        S(make(3, 4), make(3, 2), make(6, 4), make(6, 2), make(6), make(6),
          call=_cell("gru_cell")),
        S(make(2, 3), make(2, 2), make(6, 3), make(6, 2), call=_cell("gru_cell")),
    ],
    "lstm_cell": [
        S(make(3, 4), [make(3, 2), make(3, 2)], make(8, 4), make(8, 2), make(8), make(8),
          call=_lstm_cell),
        S(make(2, 3), [make(2, 2), make(2, 2)], make(8, 3), make(8, 2), call=_lstm_cell),
        S(make(2, 3), [make(2, 2)], make(8, 3), make(8, 2), grad=False,
          call=raises(_lstm_cell), desc="one state"),
    ],
    # finite differences (test_table) run on samples whose arrays have at most 64 elements:
    # the first two here; the last has a 5-feature input (75 elements). Each sample costs a
    # scan compile, so the other configurations are in tests/nn/test_rnn.py
    "_rnn": [
        S(make(5, 3, 2), make(1, 3, 3), _params("rnn_tanh", 2, 3),
          call=_stack("rnn_tanh", True, 1, False, False), desc="rnn_tanh"),
        S(make(6, 2), Const(np.array([3, 2, 1])), [make(2, 3, 1), make(2, 3, 2)],
          _params("lstm", 2, 2, dirs=2, proj=1), call=_packed("lstm", True, 1, True),
          desc="packed lstm proj bidirectional"),
        S(make(3, 5, 5), make(2, 3, 3), _params("gru", 5, 3, layers=2, bias=False),
          call=_stack("gru", False, 2, False, True), desc="gru batch_first no bias"),
    ],
    "_pack_padded": [
        S(make(5, 3, 2), call=R("pack_padded_sequence", lengths=[5, 3, 2])),
        S(make(3, 4, 2), call=R("pack_padded_sequence", lengths=[2, 4, 1],
                                 batch_first=True, enforce_sorted=False)),
        S(make(4, 3), call=raises(R("pack_padded_sequence", lengths=[2, 4, 1])), grad=False,
          desc="unsorted lengths"),
    ],
    "_pad_packed": [
        S(make(5, 3, 2), call=_pad_packed([5, 3, 2])),
        S(make(5, 3, 2), call=_pad_packed([2, 5, 3], False, batch_first=True,
                                          padding_value=-1.5, total_length=7)),
    ],
    "_pad_sequence": [
        S([make(2, 3), make(4, 3), make(1, 3)], call=R("pad_sequence")),
        S([make(2), make(4), make(3)], call=R("pad_sequence", batch_first=True,
                                                padding_value=2.0, padding_side="left")),
        S([make(2, 2, dtype="int64", low=0, high=9), make(3, 2, dtype="int64", low=0, high=9)],
          call=R("pad_sequence", padding_value=1.5)),
    ],
}
