"""torchjax.backends.mkldnn: oneDNN's flag, kept for scripts; XLA's CPU backend is used."""

from __future__ import annotations

import sys

from ._flags import set_flags

__all__ = ["enabled", "is_available", "flags"]

enabled = True


def is_available() -> bool:
    return False


def flags(enabled=False):
    """Set `enabled` inside a `with` block and restore it after it."""
    return set_flags(sys.modules[__name__], enabled=enabled)
