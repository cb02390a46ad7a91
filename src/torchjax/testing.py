"""torchjax.testing: assert_close with PyTorch's tolerances and messages."""

from __future__ import annotations
