"""Samples for the rows of src/torchjax/_ops/conv.py."""

SAMPLES: dict = {}
