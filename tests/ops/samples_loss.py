"""Samples for the rows of src/torchjax/_ops/loss.py."""

SAMPLES: dict = {}
