"""torchjax.signal: torch.signal, whose one part is the window functions (torch.signal.windows)."""

from . import windows

__all__ = ["windows"]
