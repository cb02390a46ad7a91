"""Samples for the rows in _ops/sorting.py."""

from .harness import S, make  # noqa: F401

SAMPLES: dict = {}
