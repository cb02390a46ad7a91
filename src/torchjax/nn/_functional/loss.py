"""nn.functional loss functions that are not single rows of the op table (they route between
rows, or take Python-level arguments such as `training`)."""

from __future__ import annotations

__all__: list[str] = []
