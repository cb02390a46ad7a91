"""PixelShuffle, PixelUnshuffle and ChannelShuffle."""

from __future__ import annotations

__all__ = ["PixelShuffle", "PixelUnshuffle", "ChannelShuffle"]

from .. import functional as F
from .module import Module


class PixelShuffle(Module):
    """(*, C*r*r, H, W) -> (*, C, H*r, W*r)."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        """Applies the PixelShuffle layer to `input` (see the class description). Call the module
        (`m(x)`), not `forward`, so hooks run.
        """
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self) -> str:
        """The settings PixelShuffle shows inside its `repr`, such as its sizes and flags."""
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H*r, W*r) -> (*, C*r*r, H, W)."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        """Applies the PixelUnshuffle layer to `input` (see the class description). Call the module
        (`m(x)`), not `forward`, so hooks run.
        """
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self) -> str:
        """The settings PixelUnshuffle shows inside its `repr`, such as its sizes and flags."""
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """Interleaves `groups` groups of channels."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input):
        """Applies the ChannelShuffle layer to `input` (see the class description). Call the module
        (`m(x)`), not `forward`, so hooks run.
        """
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        """The settings ChannelShuffle shows inside its `repr`, such as its sizes and flags."""
        return f"groups={self.groups}"
