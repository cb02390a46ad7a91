"""Samples for the rows in _ops/complex.py."""

from .harness import S, make  # noqa: F401

SAMPLES: dict = {}
