"""The examples' progress bar: tqdm, with a message naming the extra when it is missing."""

from __future__ import annotations

try:
    from tqdm import tqdm, trange
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError('the examples show a progress bar with tqdm: pip install -e ".[demo]"') from e

__all__ = ["tqdm", "trange"]
