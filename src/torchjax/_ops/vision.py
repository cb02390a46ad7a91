"""Vision rows: pixel_shuffle, interpolate, grid_sample, affine_grid, distances, one_hot and the remaining activations."""

from __future__ import annotations
