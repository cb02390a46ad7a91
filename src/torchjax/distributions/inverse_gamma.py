"""InverseGamma(concentration, rate): 1 / X for X ~ Gamma(concentration, rate)."""

from __future__ import annotations

import math

import torchjax as torch

from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """The reciprocal of a gamma variable: density proportional to x^(-a-1) exp(-rate / x).

    Example::

        >>> m = InverseGamma(torch.tensor([2.0]), torch.tensor([3.0]))
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        minus_one = -torch.ones((), dtype=base.rate.dtype)
        super().__init__(base, PowerTransform(minus_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new InverseGamma whose batch shape is `batch_shape`, with the parameters broadcast to
        it; `_instance` is for subclasses.
        """
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        """The concentration (shape) parameter."""
        return self.base_dist.concentration

    @property
    def rate(self):
        """The rate parameter."""
        return self.base_dist.rate

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        a = self.concentration
        return torch.where(a > 1, self.rate / (a - 1), math.inf)

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        a = self.concentration
        return torch.where(a > 2, self.rate.square() / ((a - 1).square() * (a - 2)), math.inf)

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        a = self.concentration
        return a + self.rate.log() + a.lgamma() - (1 + a) * a.digamma()
