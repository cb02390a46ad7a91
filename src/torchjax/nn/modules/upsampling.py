"""Upsample, UpsamplingNearest2d and UpsamplingBilinear2d."""

from __future__ import annotations

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]

from .. import functional as F
from .module import Module


class Upsample(Module):
    """F.interpolate with fixed size or scale_factor, mode and align_corners."""

    def __init__(self, size=None, scale_factor=None, mode: str = "nearest",
                 align_corners: bool | None = None,
                 recompute_scale_factor: bool | None = None) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        """Applies the Upsample layer to `input` (see the class description). Call the module
        (`m(x)`), not `forward`, so hooks run.
        """
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self) -> str:
        """The settings Upsample shows inside its `repr`, such as its sizes and flags."""
        if self.scale_factor is not None:
            info = f"scale_factor={self.scale_factor!r}"
        else:
            info = f"size={self.size!r}"
        return f"{info}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Upsample(mode='nearest')."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample(mode='bilinear', align_corners=True)."""

    def __init__(self, size=None, scale_factor=None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
