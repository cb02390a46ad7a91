"""torchjax.nn.utils.convert_parameters."""

from __future__ import annotations

__all__: list[str] = []
