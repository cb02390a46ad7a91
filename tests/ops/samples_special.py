"""Samples for the rows in _ops/special.py."""

from .harness import S, make  # noqa: F401

SAMPLES: dict = {}
