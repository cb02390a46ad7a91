"""Padding layers: each one is F.pad with a fixed mode and amounts."""

from __future__ import annotations

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d"]

from .. import functional as F
from .._functional.conv import _ntuple
from .module import Module


class _PadNd(Module):
    """padding: an int (the same on every side) or 2 * dims ints, last dim first."""

    _mode = "constant"
    _dims = 0

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(2 * type(self)._dims)(padding)

    def forward(self, input):
        return F.pad(input, self.padding, type(self)._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):
        d = type(self)._dims
        if input.dim() not in (d + 1, d + 2):
            raise ValueError(f"expected {d + 1}D or {d + 2}D input (got {input.dim()}D input)")
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    """Pads the last dim by wrapping around."""

    _dims = 1


class CircularPad2d(_CircularPadNd):
    """Pads the last 2 dims by wrapping around."""

    _dims = 2


class CircularPad3d(_CircularPadNd):
    """Pads the last 3 dims by wrapping around."""

    _dims = 3


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with a constant value."""

    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last 2 dims with a constant value."""

    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last 3 dims with a constant value."""

    _dims = 3


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    """Pads the last dim with its reflection about the edge."""

    _dims = 1


class ReflectionPad2d(_ReflectionPadNd):
    """Pads the last 2 dims with their reflection about the edges."""

    _dims = 2


class ReflectionPad3d(_ReflectionPadNd):
    """Pads the last 3 dims with their reflection about the edges."""

    _dims = 3


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    """Pads the last dim by repeating its edge values."""

    _dims = 1


class ReplicationPad2d(_ReplicationPadNd):
    """Pads the last 2 dims by repeating their edge values."""

    _dims = 2


class ReplicationPad3d(_ReplicationPadNd):
    """Pads the last 3 dims by repeating their edge values."""

    _dims = 3


class _ZeroPad:
    """ConstantPadNd with value 0.0, shown by its padding only."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        """The padding, as shown inside the module's `repr`."""
        return f"{self.padding}"


class ZeroPad1d(_ZeroPad, ConstantPad1d):
    """Pads the last dim with zeros."""


class ZeroPad2d(_ZeroPad, ConstantPad2d):
    """Pads the last 2 dims with zeros."""


class ZeroPad3d(_ZeroPad, ConstantPad3d):
    """Pads the last 3 dims with zeros."""
