"""HalfCauchy(scale): |X| for X ~ Cauchy(0, scale)."""

from __future__ import annotations

import math

import torchjax as torch

from ._folded import Folded
from .cauchy import Cauchy

__all__ = ["HalfCauchy"]


class HalfCauchy(Folded):
    """The absolute value of a centred Cauchy variable of scale `scale`.

    Example::

        >>> m = HalfCauchy(torch.tensor([1.0]))
    """

    _base = Cauchy

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return torch.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return self.base_dist.variance
