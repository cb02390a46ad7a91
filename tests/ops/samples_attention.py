"""Samples for the rows of src/torchjax/_ops/attention.py."""

SAMPLES: dict = {}
