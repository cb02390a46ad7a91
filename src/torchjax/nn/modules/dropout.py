"""Dropout layers: Dropout, Dropout1d/2d/3d, AlphaDropout and FeatureAlphaDropout. In eval
mode each returns its input unchanged."""

from __future__ import annotations

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
           "FeatureAlphaDropout"]

from .. import functional as F
from .module import Module


class _DropoutNd(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zeroes elements with probability p in training, scaling the rest by 1 / (1 - p)."""

    def forward(self, input):
        """Applies the Dropout layer to `input` (see the class description). Call the module
        (`m(x)`), not `forward`, so hooks run.
        """
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of (N, C, L) or (C, L) input in training."""

    def forward(self, input):
        """Applies the Dropout1d layer to `input` (see the class description). Call the module
        (`m(x)`), not `forward`, so hooks run.
        """
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of (N, C, H, W) input in training."""

    def forward(self, input):
        """Applies the Dropout2d layer to `input` (see the class description). Call the module
        (`m(x)`), not `forward`, so hooks run.
        """
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of (N, C, D, H, W) or (C, D, H, W) input in training."""

    def forward(self, input):
        """Applies the Dropout3d layer to `input` (see the class description). Call the module
        (`m(x)`), not `forward`, so hooks run.
        """
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps the zero mean and unit variance of SELU activations."""

    def forward(self, input):
        """Applies the AlphaDropout layer to `input` (see the class description). Call the module
        (`m(x)`), not `forward`, so hooks run.
        """
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """AlphaDropout of whole channels."""

    def forward(self, input):
        """Applies the FeatureAlphaDropout layer to `input` (see the class description). Call the
        module (`m(x)`), not `forward`, so hooks run.
        """
        return F.feature_alpha_dropout(input, self.p, self.training)
