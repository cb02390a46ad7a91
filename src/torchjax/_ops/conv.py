"""Convolution rows (conv1d/2d/3d, conv_transpose1d/2d/3d, unfold/fold) and padding (pad in every mode)."""

from __future__ import annotations
