"""torchjax.utils: data loading (torchjax.utils.data)."""

from . import data

__all__ = ["data"]
