"""Samples for the rows in _ops/scatter.py."""

from .harness import S, make  # noqa: F401

SAMPLES: dict = {}
