"""Samples for the rows of src/torchjax/_ops/vision.py."""

SAMPLES: dict = {}
