"""torchjax.nn.utils.clip_grad."""

from __future__ import annotations

__all__: list[str] = []
