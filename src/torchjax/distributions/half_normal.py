"""HalfNormal(scale): |X| for X ~ Normal(0, scale)."""

from __future__ import annotations

import math

from ._folded import Folded
from .normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(Folded):
    """The absolute value of a centred normal with standard deviation `scale`.

    Example::

        >>> m = HalfNormal(torch.tensor([1.0]))
    """

    _base = Normal

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return self.scale.pow(2) * (1 - 2 / math.pi)
