"""torchjax.save / torchjax.load in PyTorch's zip-based file format (weights-only loading), and
safetensors."""

from __future__ import annotations
