"""The stacklevel that points a warning at the user's line, as PyTorch's warnings (raised from
C++) always do, however many torchjax frames lie between (torch.from_numpy called directly
or through as_tensor; a backward hook's warning from inside the engine)."""

from __future__ import annotations

import sys


def user_stacklevel() -> int:
    """warnings.warn's stacklevel, from the function that calls this, for the first caller
    outside torchjax."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("torchjax"):
        frame = frame.f_back
        level += 1
    return level
