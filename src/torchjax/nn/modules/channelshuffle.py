"""torch.nn.modules.channelshuffle's name; the class lives in pixelshuffle.py."""

from .pixelshuffle import ChannelShuffle

__all__ = ["ChannelShuffle"]
