"""torch.finfo and torch.iinfo."""

from __future__ import annotations

__all__: list[str] = []
