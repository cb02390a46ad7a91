"""Samples for the rows of src/torchjax/_ops/normalization.py."""

SAMPLES: dict = {}
