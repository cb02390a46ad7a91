"""Recurrent rows: one tape node per recurrent layer over a whole sequence.

The cells (torch.rnn_tanh_cell, rnn_relu_cell, lstm_cell, gru_cell) are one time step each.
The multi-layer functions torch.rnn_tanh / rnn_relu / lstm / gru route to the row `_rnn`,
which runs every layer and both directions over the whole sequence with jax.lax.scan, so an
eager forward records one tape node however long the sequence is. Dropout between layers
arrives as a pre-drawn, pre-scaled mask, and a packed batch as an index map from the padded
(time, batch) grid to the packed rows; its invalid entries double as the per-step mask that
freezes a finished sequence's state.
"""

from __future__ import annotations

import inspect

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtypes
from ._registry import function, op

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _cell(mode, gi, gh, h, c):
    """One step from the gate pre-activations of the input (gi) and of the state (gh)."""
    if mode == "RNN_TANH":
        return jnp.tanh(gi + gh), None
    if mode == "RNN_RELU":
        return jax.nn.relu(gi + gh), None
    if mode == "LSTM":
        i, f, g, o = jnp.split(gi + gh, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        return jax.nn.sigmoid(o) * jnp.tanh(c), c
    ir, iz, in_ = jnp.split(gi, 3, axis=-1)
    hr, hz, hn = jnp.split(gh, 3, axis=-1)
    r = jax.nn.sigmoid(ir + hr)
    z = jax.nn.sigmoid(iz + hz)
    n = jnp.tanh(in_ + r * hn)
    return n + z * (h - n), None


# -- cells -----------------------------------------------------------------------------------

def _dim_error(ndim, dim):
    n = max(ndim, 1)
    return IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                      f"but got {dim})")


# dtype names as PyTorch's C++ matmul messages print them
_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16"}


def _dtype_name(d):
    return _C_NAMES.get(str(d), str(d))


def _check_cell(gates, input, hxs, w_ih, w_hh, b_ih, b_hh):
    """PyTorch's checks of a cell's weights, input and hidden states, in its order."""
    for w in (w_ih, w_hh):
        if w.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                               f"{w.ndim}D")
    hidden = w_hh.shape[-1]
    for name, w in (("weight_ih", w_ih), ("weight_hh", w_hh)):
        if w.shape[0] != gates * hidden:
            raise RuntimeError(f"{name} first dim must be {gates} * hidden_size = "
                               f"{gates * hidden}, but got {w.shape[0]}")
    if input.ndim < 2:
        raise _dim_error(input.ndim, 1)
    if input.shape[1] != w_ih.shape[1]:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected "
                           f"{w_ih.shape[1]}")
    for k, hx in enumerate(hxs):
        if hx.ndim < 1:
            raise _dim_error(hx.ndim, 0)
        if input.shape[0] != hx.shape[0]:
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{k} batch "
                               f"size {hx.shape[0]}")
        if hx.ndim < 2:
            raise _dim_error(hx.ndim, 1)
        if hx.shape[1] != hidden:
            raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {hx.shape[1]}, "
                               f"expected {hidden}")
    for a, w in ((input, w_ih), (hxs[0], w_hh)):
        if a.dtype != w.dtype:
            raise RuntimeError("expected m1 and m2 to have the same dtype, but got: "
                               f"{_dtype_name(a.dtype)} != {_dtype_name(w.dtype)}")
    target = [input.shape[0], gates * hidden]
    for b in (b_ih, b_hh):
        if b is not None and tuple(b.shape) != (gates * hidden,):
            raise RuntimeError(f"The expanded size of the tensor ({target[1]}) must match the "
                               f"existing size ({b.shape[-1]}) at non-singleton dimension 1.  "
                               f"Target sizes: {target}.  Tensor sizes: {list(b.shape)}")


def _affine(x, w, b):
    y = jnp.matmul(x, w.T)
    return y if b is None else y + b


def _cell_row(mode, input, hxs, w_ih, w_hh, b_ih, b_hh):
    _check_cell(_GATES[mode], input, hxs, w_ih, w_hh, b_ih, b_hh)
    gi = _affine(input, w_ih, b_ih)
    gh = _affine(hxs[0], w_hh, b_hh)
    return _cell(mode, gi, gh, hxs[0], hxs[1] if len(hxs) > 1 else None)


_CELL = dict(tensors=("input", "hx", "w_ih", "w_hh", "b_ih", "b_hh"), promote="none",
             method=False)
# PyTorch composes a cell from two linear layers (each factor saved when the other requires
# grad) and its gates; an Elman cell's activation also saves the result
_LINEARS = {"input": ("w_ih",), "w_ih": ("input",), "hx": ("w_hh",), "w_hh": ("hx",)}
_LINEARS_RESULT = {k: (*v, "result") for k, v in _LINEARS.items()}


@op(grad="TanhBackward0", **_CELL, saves=_LINEARS_RESULT)
def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One step of an Elman RNN with tanh: tanh(input w_ih^T + b_ih + hx w_hh^T + b_hh)."""
    return _cell_row("RNN_TANH", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


@op(grad="ReluBackward0", **_CELL, saves=_LINEARS_RESULT)
def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One step of an Elman RNN with ReLU."""
    return _cell_row("RNN_RELU", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


@op(grad="AddBackward0", **_CELL, saves=_LINEARS)
def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step (gates r, z, n in that order along the weights' first dim)."""
    return _cell_row("GRU", input, (hx,), w_ih, w_hh, b_ih, b_hh)[0]


@op(tensors=("input", "w_ih", "w_hh", "b_ih", "b_hh"), tensor_list="hx", promote="none",
    method=False, grad="MulBackward0")
def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step: (h', c') from hx = (h, c); gates i, f, g, o."""
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    return _cell_row("LSTM", input, tuple(hx), w_ih, w_hh, b_ih, b_hh)


# -- whole sequences -------------------------------------------------------------------------

def _stack(groups, k):
    return None if k is None else jnp.stack([g[k] for g in groups])


def _layer(mode, x, h0, c0, groups, has_biases, proj, valid):
    """One layer, every direction, over the whole sequence.

    x (T, B, F); h0 (D, B, Hp); c0 (D, B, H) or None; groups: D lists of this direction's
    weights in PyTorch's order; valid (T, B) bool or None. Returns the output (T, B, D*Hp)
    and the final states. The reverse direction reads time back to front, so its inputs are
    flipped in time and one scan steps both directions together.
    """
    n_dir = len(groups)
    w_ih, w_hh = _stack(groups, 0), _stack(groups, 1)
    b_ih, b_hh = (_stack(groups, 2), _stack(groups, 3)) if has_biases else (None, None)
    w_hr = _stack(groups, -1) if proj else None
    gi = jnp.einsum("tbf,dgf->dtbg", x, w_ih)
    if b_ih is not None:
        gi = gi + b_ih[:, None, None, :]
    if n_dir == 2:
        gi = jnp.stack([gi[0], gi[1][::-1]])
    masks = None
    if valid is not None:
        masks = jnp.stack([valid, valid[::-1]][:n_dir], axis=1)  # (T, D, B)

    def step(carry, xs):
        h, c = carry
        g_in, m = xs
        gh = jnp.einsum("dbh,dgh->dbg", h, w_hh)
        if b_hh is not None:
            gh = gh + b_hh[:, None, :]
        h_new, c_new = _cell(mode, g_in, gh, h, c)
        if w_hr is not None:
            h_new = jnp.einsum("dbh,dph->dbp", h_new, w_hr)
        if m is not None:  # a finished (packed) sequence keeps its state; its outputs are
            keep = m[..., None]  # dropped when the result is packed again
            h_new = jnp.where(keep, h_new, h)
            if c is not None:
                c_new = jnp.where(keep, c_new, c)
        return (h_new, c_new), h_new

    (h, c), ys = jax.lax.scan(step, (h0, c0), (jnp.swapaxes(gi, 0, 1), masks))
    if n_dir == 2:
        ys = jnp.stack([ys[:, 0], ys[::-1, 1]], axis=1)
    t, _, b, hp = ys.shape
    return jnp.transpose(ys, (0, 2, 1, 3)).reshape(t, b, n_dir * hp), h, c


def _check_dtypes(input, hx, cx, params):
    """PyTorch's matmul error for an input, state or weight of another dtype."""
    pairs = [(input, params[0]), (hx, params[1]), *((cx, params[1]),) * (cx is not None),
             *((input, p) for p in params)]
    for a, b in pairs:
        if a.dtype != b.dtype:
            names = [_dtypes.SCALAR_NAMES[_dtypes.from_jax(v.dtype).name] for v in (a, b)]
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {names[0]} "
                               f"and {names[1]}")


@op(tensors=("input", "hx", "cx", "dropout_mask", "pack_index"), tensor_list="params",
    promote="none", function=False, method=False, grad="StackBackward0", residuals=True)
def _rnn(input, hx, cx, params, dropout_mask, pack_index, mode, has_biases, num_layers,
         bidirectional, batch_first):
    """A stacked (bi)directional RNN/LSTM/GRU over a whole sequence.

    Padded: input (T, B, F) or (B, T, F) with batch_first. Packed: input is the packed data
    (N, F) and pack_index (T, B) gives each (step, sequence) its packed row, -1 past the
    sequence's end. dropout_mask (num_layers - 1, T, B, D*Hp) scales each layer's output but
    the last (already divided by 1 - p). Returns (output, h_n) or (output, h_n, c_n) for LSTM.
    """
    _check_dtypes(input, hx, cx, params)
    n_dir = 2 if bidirectional else 1
    per = len(params) // (num_layers * n_dir)
    proj = mode == "LSTM" and per == (4 if has_biases else 2) + 1
    if pack_index is not None:
        valid = pack_index >= 0
        x = jnp.where(valid[..., None], input[jnp.maximum(pack_index, 0)], 0)
    else:
        valid = None
        x = jnp.swapaxes(input, 0, 1) if batch_first else input
    hs, cs = [], []
    for layer in range(num_layers):
        lo = layer * n_dir
        groups = [params[(lo + d) * per:(lo + d + 1) * per] for d in range(n_dir)]
        x, h, c = _layer(mode, x, hx[lo:lo + n_dir], None if cx is None else cx[lo:lo + n_dir],
                         groups, has_biases, proj, valid)
        hs.append(h)
        cs.append(c)
        if dropout_mask is not None and layer < num_layers - 1:
            x = x * dropout_mask[layer]
    if pack_index is not None:
        n = input.shape[0]
        rows = jnp.where(valid, pack_index, n).reshape(-1)  # padding rows fall off the end
        out = jnp.zeros((n, x.shape[-1]), x.dtype).at[rows].set(
            x.reshape(-1, x.shape[-1]), mode="drop", unique_indices=True)
    else:
        out = jnp.swapaxes(x, 0, 1) if batch_first else x
    h_n = jnp.concatenate(hs)
    if mode == "LSTM":
        return out, h_n, jnp.concatenate(cs)
    return out, h_n


_PADDED = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                             for n in ("input", "hx", "params", "has_biases", "num_layers",
                                       "dropout", "train", "bidirectional", "batch_first")])
_PACKED = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                             for n in ("data", "batch_sizes", "hx", "params", "has_biases",
                                       "num_layers", "dropout", "train", "bidirectional")])


def packed_rows(batch_sizes) -> np.ndarray:
    """(T, B) map from a packed batch's (step, sequence) to its row in the data, -1 where
    the sequence has ended; batch_sizes as in PackedSequence (non-increasing)."""
    bs = np.asarray(batch_sizes, dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(bs)[:-1]])
    b = np.arange(bs[0] if bs.size else 0)
    return np.where(b[None, :] < bs[:, None], starts[:, None] + b[None, :], -1).astype(np.int32)


def _run(mode, args, kwargs):
    """torch.rnn_tanh / rnn_relu / lstm / gru, either overload (padded or packed)."""
    from .._dispatch import call_op
    from .._tensor import Tensor

    lstm = mode == "LSTM"
    packed = "data" in kwargs or "batch_sizes" in kwargs or (
        len(args) > 2 and isinstance(args[1], Tensor) and (lstm or isinstance(args[2], Tensor)))
    a = (_PACKED if packed else _PADDED).bind(*args, **kwargs).arguments
    params = list(a["params"])
    hx, cx = (tuple(a["hx"]) if lstm else (a["hx"], None))
    num_layers, bidirectional = a["num_layers"], a["bidirectional"]
    n_dir = 2 if bidirectional else 1
    input = a["data"] if packed else a["input"]
    if input.dim() != (2 if packed else 3):
        raise RuntimeError(f"input must have {2 if packed else 3} dimensions, got {input.dim()}")
    if params and params[0].shape[-1] != input.shape[-1]:
        raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                           f"{params[0].shape[-1]}, got {input.shape[-1]}")
    if hx.shape[0] < num_layers * n_dir:
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    per = len(params) // max(num_layers * n_dir, 1)
    if per < (4 if a["has_biases"] else 2) or len(params) < per * num_layers * n_dir:
        raise RuntimeError("Expected more weights in stacked_rnn")
    index = None
    if packed:
        index = Tensor._wrap(jnp.asarray(packed_rows(a["batch_sizes"].tolist())))
        steps, batch = index.shape
    else:
        steps, batch = input.shape[:2] if not a["batch_first"] else input.shape[1::-1]
    mask = None
    if a["train"] and a["dropout"] > 0 and num_layers > 1:
        mask = _dropout_mask((num_layers - 1, steps, batch, n_dir * hx.shape[-1]),
                             input.dtype, a["dropout"])
    return call_op("_rnn", input, hx, cx, params, mask, index, mode=mode,
                   has_biases=a["has_biases"], num_layers=num_layers,
                   bidirectional=bidirectional, batch_first=not packed and a["batch_first"])


def _dropout_mask(shape, dtype, p):
    """Bernoulli(1 - p) keep-mask already divided by 1 - p (zeros for p = 1)."""
    from .. import _sampling
    from .._tensor import Tensor
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    keep = _sampling.draw("bernoulli", shape, dtype, None, 1.0 - p)
    return Tensor._wrap(keep * (0.0 if p >= 1 else 1.0 / (1.0 - p)))


@function(method=False)
def rnn_tanh(*args, **kwargs):
    """Stacked Elman RNN with tanh: (output, h_n). Overloads (input, hx, params, has_biases,
    num_layers, dropout, train, bidirectional, batch_first) and (data, batch_sizes, hx,
    params, has_biases, num_layers, dropout, train, bidirectional)."""
    return _run("RNN_TANH", args, kwargs)


@function(method=False)
def rnn_relu(*args, **kwargs):
    """Stacked Elman RNN with ReLU: (output, h_n); overloads as rnn_tanh."""
    return _run("RNN_RELU", args, kwargs)


@function(method=False)
def gru(*args, **kwargs):
    """Stacked GRU: (output, h_n); overloads as rnn_tanh."""
    return _run("GRU", args, kwargs)


@function(method=False)
def lstm(*args, **kwargs):
    """Stacked LSTM: (output, h_n, c_n), hx = (h_0, c_0); overloads as rnn_tanh."""
    return _run("LSTM", args, kwargs)


# -- packing (behind torchjax.nn.utils.rnn) ---------------------------------------------------

@op(tensors=("input", "index"), promote="none", function=False, method=False,
    grad="PackPaddedSequenceBackward0", needs=("index",))
def _pack_padded(input, index):
    """The packed rows of a padded batch: index holds each row's flat (step, sequence)
    position in input with its first two dims merged."""
    return input.reshape((-1,) + input.shape[2:])[index]


@op(tensors=("data", "index"), scalars=("padding_value",), promote="none", function=False,
    method=False, grad="CopySlices", needs=("index",))
def _pad_packed(data, index, padding_value):
    """A padded batch from packed rows: index (steps, batch) or (batch, steps) names each
    slot's row in data, -1 for padding."""
    valid = (index >= 0).reshape(index.shape + (1,) * (data.ndim - 1))
    pad = jnp.asarray(padding_value).astype(data.dtype)
    return jnp.where(valid, data[jnp.maximum(index, 0)], pad)


def _broadcast_check(dst, src):
    """PyTorch's copy_ error when src cannot fill dst (a: dst, b: src)."""
    n = max(len(dst), len(src))
    for i in range(1, n + 1):
        a = dst[-i] if i <= len(dst) else 1
        b = src[-i] if i <= len(src) else 1
        if a != b and b != 1:
            raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b ({b}) "
                               f"at non-singleton dimension {n - i}")


@op(tensors=(), tensor_list="sequences", scalars=("padding_value",), promote="none",
    function=False, method=False, grad="CopySlices", saves=())
def _pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Sequences (L_i, *) padded to the longest, stacked on dim 1 (dim 0 with batch_first);
    the result has the first sequence's dtype."""
    if padding_side not in ("left", "right"):
        raise RuntimeError("Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    if any(s.ndim == 0 for s in sequences):
        raise RuntimeError("pad_sequence: expected sequences of at least 1 dimension, got a "
                           "0-dimensional tensor")
    first = sequences[0]
    longest = max(s.shape[0] for s in sequences)
    pad = jnp.asarray(padding_value).astype(first.dtype)
    rows = []
    for s in sequences:
        length = s.shape[0]
        _broadcast_check((length,) + first.shape[1:], s.shape)
        s = jnp.broadcast_to(s.astype(first.dtype), (length,) + first.shape[1:])
        fill = jnp.broadcast_to(pad, (longest - length,) + first.shape[1:])
        rows.append(jnp.concatenate([s, fill] if padding_side == "right" else [fill, s]))
    return jnp.stack(rows, axis=0 if batch_first else 1)
