"""Samples for the rows of src/torchjax/_ops/pooling.py."""

SAMPLES: dict = {}
