"""Samples for the rows of src/torchjax/_ops/rnn.py."""

SAMPLES: dict = {}
