"""Weibull(scale, concentration)."""

from __future__ import annotations

import torchjax as torch

from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all, euler_constant

__all__ = ["Weibull"]


class Weibull(TransformedDistribution):
    """scale * E^(1 / concentration) for E ~ Exponential(1).

    Example::

        >>> m = Weibull(torch.tensor([1.0]), torch.tensor([1.0]))
    """

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(torch.ones_like(self.scale), validate_args=validate_args)
        super().__init__(base, self._transforms(), validate_args=validate_args)

    def _transforms(self):
        return [PowerTransform(exponent=self.concentration_reciprocal),
                AffineTransform(loc=0, scale=self.scale)]

    def expand(self, batch_shape, _instance=None):
        """A new Weibull whose batch shape is `batch_shape`, with the parameters broadcast to it;
        `_instance` is for subclasses.
        """
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        TransformedDistribution.__init__(new, self.base_dist.expand(batch_shape),
                                         new._transforms(), validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return self.scale * torch.exp(torch.lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        r = self.concentration_reciprocal
        return self.scale.pow(2) * (torch.exp(torch.lgamma(1 + 2 * r))
                                    - torch.exp(2 * torch.lgamma(1 + r)))

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        r = self.concentration_reciprocal
        return euler_constant * (1 - r) + torch.log(self.scale * r) + 1
