"""torchjax.utils.hooks: the handle returned by every register_*hook."""

from .._hooks import RemovableHandle

__all__ = ["RemovableHandle"]
