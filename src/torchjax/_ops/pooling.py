"""Pooling rows: max/avg/lp/adaptive pooling in 1d/2d/3d, max_unpool."""

from __future__ import annotations
