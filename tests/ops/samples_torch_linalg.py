"""Samples for the rows in _ops/torch_linalg.py."""

from .harness import S, make  # noqa: F401

SAMPLES: dict = {}
