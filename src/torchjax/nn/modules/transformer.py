"""Transformer and its encoder/decoder layers."""

from __future__ import annotations

__all__: list[str] = []
