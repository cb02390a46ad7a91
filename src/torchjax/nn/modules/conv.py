"""Convolution layers and Fold/Unfold."""

from __future__ import annotations

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d", "Fold", "Unfold"]

import math

from ... import _creation
from .. import functional as F
from .. import init
from .._functional.conv import _pair, _single, _triple
from ..parameter import Parameter
from .module import Module

_PADDING_STRINGS = {"same", "valid"}
_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


class _ConvNd(Module):
    """What every convolution layer shares: argument checks, parameters, init and repr."""

    _conv = None  # the functional form, set by each subclass

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in _PADDING_STRINGS:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{_PADDING_STRINGS}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        self._reversed_padding_repeated_twice = self._pad_for_mode()
        shape = ((in_channels, out_channels // groups) if transposed
                 else (out_channels, in_channels // groups))
        self.weight = Parameter(_creation.empty(*shape, *kernel_size, dtype=dtype,
                                                device=device))
        if bias:
            self.bias = Parameter(_creation.empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _pad_for_mode(self) -> list[int]:
        """The F.pad amounts (last dim first) that a non-zeros padding_mode applies."""
        if not isinstance(self.padding, str):
            return [p for p in reversed(self.padding) for _ in range(2)]
        pad = [0, 0] * len(self.kernel_size)
        if self.padding == "same":
            # the odd unit of an even window goes on the right, as in F.conv*(padding='same')
            for i, (d, k) in enumerate(zip(reversed(self.dilation), reversed(self.kernel_size))):
                total = d * (k - 1)
                pad[2 * i], pad[2 * i + 1] = total // 2, total - total // 2
        return pad

    def reset_parameters(self) -> None:
        """Re-initializes the weight and bias in place with the scheme used at construction (random
        draws use torchjax's global generator).
        """
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        # a padding string differs from (0,) * len(it) too, so it is always shown
        if self.padding != (0,) * len(self.padding):
            s += f", padding={self.padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    """Conv1d/2d/3d: a non-zeros padding_mode pads the input with F.pad first."""

    _tuple = None  # _single, _pair or _triple

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        n = type(self)._tuple
        super().__init__(in_channels, out_channels, n(kernel_size), n(stride),
                         padding if isinstance(padding, str) else n(padding), n(dilation),
                         False, n(0), groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        conv = type(self)._conv
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(padded, weight, bias, self.stride, type(self)._tuple(0), self.dilation,
                        self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-d convolution over (N, C_in, L) or (C_in, L) inputs."""

    _tuple = staticmethod(_single)
    _conv = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-d convolution over (N, C_in, H, W) or (C_in, H, W) inputs."""

    _tuple = staticmethod(_pair)
    _conv = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-d convolution over (N, C_in, D, H, W) or (C_in, D, H, W) inputs."""

    _tuple = staticmethod(_triple)
    _conv = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    """ConvTranspose1d/2d/3d: forward(input, output_size=None) picks output_padding from a
    requested output size."""

    _tuple = None
    _dims = 0

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f'{type(self).__name__}')
        n = type(self)._tuple
        super().__init__(in_channels, out_channels, n(kernel_size), n(stride), n(padding),
                         n(dilation), True, n(output_padding), groups, bias, padding_mode,
                         device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size,
                        num_spatial_dims, dilation=None):
        if output_size is None:
            return _single(self.output_padding)
        n_lead = 2 if input.dim() == num_spatial_dims + 2 else 1
        if len(output_size) == n_lead + num_spatial_dims:
            output_size = output_size[n_lead:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, "
                             f"output_size must have {num_spatial_dims} or "
                             f"{n_lead + num_spatial_dims} elements (got {len(output_size)})")
        min_sizes = [(input.size(d + n_lead) - 1) * stride[d] - 2 * padding[d]
                     + (1 if dilation is None else dilation[d]) * (kernel_size[d] - 1) + 1
                     for d in range(num_spatial_dims)]
        max_sizes = [m + s - 1 for m, s in zip(min_sizes, stride)]
        for size, lo, hi in zip(output_size, min_sizes, max_sizes):
            if size < lo or size > hi:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {min_sizes} to {max_sizes} (for an input of "
                                 f"{input.size()[2:]})")
        return [size - lo for size, lo in zip(output_size, min_sizes)]

    def forward(self, input, output_size=None):
        if self.padding_mode != "zeros":
            raise ValueError(f"Only `zeros` padding mode is supported for {type(self).__name__}")
        output_padding = self._output_padding(input, output_size, self.stride, self.padding,
                                              self.kernel_size, type(self)._dims, self.dilation)
        return type(self)._conv(input, self.weight, self.bias, self.stride, self.padding,
                                output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """The transpose of Conv1d (a fractionally strided convolution)."""

    _tuple = staticmethod(_single)
    _dims = 1
    _conv = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """The transpose of Conv2d (a fractionally strided convolution)."""

    _tuple = staticmethod(_pair)
    _dims = 2
    _conv = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """The transpose of Conv3d (a fractionally strided convolution)."""

    _tuple = staticmethod(_triple)
    _dims = 3
    _conv = staticmethod(F.conv_transpose3d)


class Fold(Module):
    """Sums sliding local blocks (N, C * prod(kernel_size), L) into (N, C, *output_size)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        """Applies the Fold layer to `input` (see the class description). Call the module (`m(x)`),
        not `forward`, so hooks run.
        """
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        """The settings Fold shows inside its `repr`, such as its sizes and flags."""
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Extracts sliding local blocks: (N, C, H, W) -> (N, C * prod(kernel_size), L)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        """Applies the Unfold layer to `input` (see the class description). Call the module
        (`m(x)`), not `forward`, so hooks run.
        """
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        """The settings Unfold shows inside its `repr`, such as its sizes and flags."""
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
