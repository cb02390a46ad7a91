"""Recurrent layers and cells.

RNN, LSTM and GRU hand their whole stack to torchjax.rnn_tanh / rnn_relu / lstm / gru, one
tape node per call (see _ops/rnn.py); the cells call the single-step rows.
"""

from __future__ import annotations

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

import math
import numbers
import warnings

from ... import _creation, _dispatch
from ..._ops import rnn as _rnn_ops
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

_GATES = _rnn_ops._GATES  # gate blocks per mode: weights are (gates * hidden_size, ...)
_STACKS = {"RNN_TANH": _rnn_ops.rnn_tanh, "RNN_RELU": _rnn_ops.rnn_relu,
           "LSTM": _rnn_ops.lstm, "GRU": _rnn_ops.gru}


def _check_type(name, value, kind, kind_name):
    if not isinstance(value, kind):
        raise TypeError(f"{name} should be of type {kind_name}, got: {type(value).__name__}")


def _permute(hx, permutation):
    """Reorder the batch dim (1) of a state or (h, c) pair; None keeps it."""
    if permutation is None:
        return hx
    if isinstance(hx, tuple):
        return tuple(h.index_select(1, permutation) for h in hx)
    return hx.index_select(1, permutation)


class RNNBase(Module):
    """Common parts of RNN, LSTM and GRU: parameters, checks, repr."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        self._check_args(dropout)
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        num_directions = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * num_directions
            for direction in range(num_directions):
                shapes = {"weight_ih": (gate_size, layer_input),
                          "weight_hh": (gate_size, real_hidden)}
                if bias:
                    shapes.update(bias_ih=(gate_size,), bias_hh=(gate_size,))
                if proj_size > 0:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for kind, shape in shapes.items():
                    name = f"{kind}_l{layer}{suffix}"
                    setattr(self, name, Parameter(_creation.empty(*shape, dtype=dtype,
                                                                  device=device)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def _check_args(self, dropout):
        if (not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1
                or isinstance(dropout, bool)):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and self.num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={self.num_layers}", stacklevel=3)
        _check_type("bias", self.bias, bool, "bool")
        _check_type("batch_first", self.batch_first, bool, "bool")
        _check_type("input_size", self.input_size, int, "int")
        if self.input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        _check_type("hidden_size", self.hidden_size, int, "int")
        if self.hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if self.num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if self.proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if self.proj_size >= self.hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")

    @property
    def _flat_weights(self) -> list:
        # read afresh on every call, so replaced or cast parameters are always the ones used
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        """The parameters as one list per layer and direction, in PyTorch's order (weight_ih,
        weight_hh, biases, projection).
        """
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op: there is no cuDNN weight buffer to compact."""

    def reset_parameters(self) -> None:
        """Re-initializes RNNBase's parameters in place, with the same scheme used at construction
        (drawn from torchjax's global generator).
        """
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    # -- checks ------------------------------------------------------------------------------

    def check_input(self, input, batch_sizes) -> None:
        """Raises if `input` has the wrong dtype or number of dimensions, or a last dimension other
        than `input_size`.
        """
        w_dtype = self._flat_weights[0].dtype
        if input.dtype != w_dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({w_dtype}). Convert input: input.to({w_dtype}), or convert "
                             f"model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def _mini_batch(self, input, batch_sizes) -> int:
        if batch_sizes is not None:
            return int(batch_sizes[0])
        return input.size(0) if self.batch_first else input.size(1)

    def get_expected_hidden_size(self, input, batch_sizes) -> tuple[int, int, int]:
        """The hidden-state shape `forward` expects for this input: (layers x directions, batch,
        hidden or projection size).
        """
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, self._mini_batch(input, batch_sizes),
                self.proj_size if self.proj_size > 0 else self.hidden_size)

    def check_hidden_size(self, hx, expected_hidden_size,
                          msg: str = "Expected hidden size {}, got {}") -> None:
        """Raises a RuntimeError (with `msg`) if `hx` does not have the shape
        `expected_hidden_size`.
        """
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes) -> None:
        """Checks the input and the hidden state's shape before `forward` runs."""
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        """Reorders the batch dimension of the hidden state `hx` by `permutation` (used with
        unsorted packed sequences).
        """
        return _permute(hx, permutation)

    def _zeros(self, input, batch: int, size: int):
        num_directions = 2 if self.bidirectional else 1
        return _creation.zeros(self.num_layers * num_directions, batch, size, dtype=input.dtype,
                               device=input.device)

    # -- forward -----------------------------------------------------------------------------

    def _unbatched_hx_error(self, hx, batched: bool):
        """The error for a state whose dims do not fit the input's, or None."""
        if hx is None or hx.dim() == (3 if batched else 2):
            return None
        if batched:
            return RuntimeError(f"For batched 3-D input, hx should also be 3-D but got "
                                f"{hx.dim()}-D tensor")
        return RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got "
                            f"{hx.dim()}-D tensor")

    def forward(self, input, hx=None):
        """(output, h_n); output is a PackedSequence when input is one."""
        packed = isinstance(input, PackedSequence)
        batch_sizes = sorted_indices = unsorted_indices = None
        batched = True
        if packed:
            input, batch_sizes, sorted_indices, unsorted_indices = input
        else:
            if input.dim() not in (2, 3):
                raise ValueError(f"{self._label()}: Expected input to be 2D or 3D, got "
                                 f"{input.dim()}D{self._dim_suffix()}")
            batched = input.dim() == 3
            err = self._unbatched_hx_error(hx, batched)
            if err is not None:
                raise err
            if not batched:
                input = input.unsqueeze(0 if self.batch_first else 1)
                if hx is not None:
                    hx = hx.unsqueeze(1)
        if hx is None:
            hx = self._zeros(input, self._mini_batch(input, batch_sizes), self.hidden_size)
        else:
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(input, hx, batch_sizes)
        output, hidden = self._run(input, batch_sizes, hx)
        return self._finish(output, hidden, packed, batched, batch_sizes, sorted_indices,
                            unsorted_indices)

    def _label(self):
        return "RNN" if self.mode.startswith("RNN") else self.mode

    def _dim_suffix(self):
        # PyTorch's RNN says "got 4D tensor instead", LSTM and GRU "got 4D instead"
        return " tensor instead" if self.mode.startswith("RNN") else " instead"

    def _run(self, input, batch_sizes, hx):
        fn = _STACKS[self.mode]
        common = (self._flat_weights, self.bias, self.num_layers, self.dropout, self.training,
                  self.bidirectional)
        if batch_sizes is None:
            result = fn(input, hx, *common, self.batch_first)
        else:
            result = fn(input, batch_sizes, hx, *common)
        return result[0], (tuple(result[1:]) if self.mode == "LSTM" else result[1])

    def _finish(self, output, hidden, packed, batched, batch_sizes, sorted_indices,
                unsorted_indices):
        if packed:
            output = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
            return output, self.permute_hidden(hidden, unsorted_indices)
        if not batched:
            output = output.squeeze(0 if self.batch_first else 1)
            hidden = (tuple(h.squeeze(1) for h in hidden) if isinstance(hidden, tuple)
                      else hidden.squeeze(1))
        return output, hidden

    def extra_repr(self) -> str:
        """The settings RNNBase shows inside its `repr`, such as its sizes and flags."""
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """Elman RNN: h_t = tanh or relu(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh).

    RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None)
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory, optionally with projections (proj_size).

    LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, proj_size=0, device=None, dtype=None)
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes) -> tuple[int, int, int]:
        """The cell-state shape `forward` expects for this input: (layers x directions, batch,
        hidden_size).
        """
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, self._mini_batch(input, batch_sizes),
                self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes) -> None:
        """Checks the input and the shapes of both the hidden and the cell state before `forward`
        runs.
        """
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def forward(self, input, hx=None):
        """(output, (h_n, c_n)); output is a PackedSequence when input is one."""
        packed = isinstance(input, PackedSequence)
        batch_sizes = sorted_indices = unsorted_indices = None
        batched = True
        if packed:
            input, batch_sizes, sorted_indices, unsorted_indices = input
        else:
            if input.dim() not in (2, 3):
                raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D "
                                 "instead")
            batched = input.dim() == 3
            if not batched:
                input = input.unsqueeze(0 if self.batch_first else 1)
        if hx is None:
            batch = self._mini_batch(input, batch_sizes)
            real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
            hx = (self._zeros(input, batch, real_hidden),
                  self._zeros(input, batch, self.hidden_size))
        else:
            want = 3 if batched else 2
            if not packed and (hx[0].dim() != want or hx[1].dim() != want):
                kind = "batched 3-D" if batched else "unbatched 2-D"
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but "
                                   f"got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            if not batched:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            hx = self.permute_hidden(tuple(hx), sorted_indices)
        self.check_forward_args(input, hx, batch_sizes)
        output, hidden = self._run(input, batch_sizes, hx)
        return self._finish(output, hidden, packed, batched, batch_sizes, sorted_indices,
                            unsorted_indices)


class GRU(RNNBase):
    """Gated recurrent unit.

    GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, device=None, dtype=None)
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class RNNCellBase(Module):
    """Common parts of the cells: weight_ih, weight_hh, optional biases, init and repr."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = dict(dtype=dtype, device=device)
        self.weight_ih = Parameter(_creation.empty(num_chunks * hidden_size, input_size, **kw))
        self.weight_hh = Parameter(_creation.empty(num_chunks * hidden_size, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(_creation.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(_creation.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        """The settings RNNCellBase shows inside its `repr`, such as its sizes and flags."""
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = self.__dict__.get("nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def reset_parameters(self) -> None:
        """Re-initializes RNNCellBase's parameters in place, with the same scheme used at
        construction (random draws use torchjax's global generator).
        """
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, hxs):
        """Check dims and add the batch dim to unbatched input and states."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        for label, h in hxs:
            if h is not None and h.dim() not in (1, 2):
                raise ValueError(f"{name}: Expected {label} to be 1D or 2D, got {h.dim()}D "
                                 "instead")
        batched = input.dim() == 2
        return batched, (input if batched else input.unsqueeze(0))

    def _zeros(self, input):
        return _creation.zeros(input.size(0), self.hidden_size, dtype=input.dtype,
                               device=input.device)

    def _step(self, name, input, hx):
        return _dispatch.FUNCTIONS[name](input, hx, self.weight_ih, self.weight_hh,
                                         self.bias_ih, self.bias_hh)


class _SingleStateCell(RNNCellBase):
    _row: str

    def forward(self, input, hx=None):
        batched, input = self._prepare(input, (("hidden", hx),))
        if hx is None:
            hx = self._zeros(input)
        elif not batched:
            hx = hx.unsqueeze(0)
        out = self._step(self._row_name(), input, hx)
        return out if batched else out.squeeze(0)

    def _row_name(self):
        return self._row


class RNNCell(_SingleStateCell):
    """One step of an Elman RNN with tanh or relu.

    RNNCell(input_size, hidden_size, bias=True, nonlinearity='tanh', device=None, dtype=None)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def _row_name(self):
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return f"rnn_{self.nonlinearity}_cell"


class GRUCell(_SingleStateCell):
    """One GRU step. GRUCell(input_size, hidden_size, bias=True, device=None, dtype=None)"""

    _row = "gru_cell"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)


class LSTMCell(RNNCellBase):
    """One LSTM step, returning (h', c').

    LSTMCell(input_size, hidden_size, bias=True, device=None, dtype=None)
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        """Applies the LSTMCell layer to `input` (see the class description). Call the module
        (`m(x)`), not `forward`, so hooks run.
        """
        states = () if hx is None else tuple((f"hx[{i}]", h) for i, h in enumerate(hx))
        batched, input = self._prepare(input, states)
        if hx is None:
            zeros = self._zeros(input)
            hx = (zeros, zeros)
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = self._step("lstm_cell", input, tuple(hx))
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))

