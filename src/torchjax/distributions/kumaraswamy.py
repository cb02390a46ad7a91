"""Kumaraswamy(concentration1, concentration0): a Beta-like distribution on (0, 1) with a
closed-form cdf, so its draws are a transform of a uniform one."""

from __future__ import annotations

import torchjax as torch

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _raw_moment(a, b, n: int):
    """E[X^n] = b B(1 + n / a, b), from log-gammas (the Beta function overflows)."""
    return b * torch.exp(torch.lgamma(1 + n / a) + torch.lgamma(b) - torch.lgamma(1 + b + n / a))


class Kumaraswamy(TransformedDistribution):
    """X = (1 - U^(1 / concentration0))^(1 / concentration1) for U ~ Uniform(0, 1): density
    a b x^(a - 1) (1 - x^a)^(b - 1) with a = concentration1, b = concentration0.

    Example::

        >>> m = Kumaraswamy(torch.tensor([1.0]), torch.tensor([1.0]))
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(torch.zeros_like(self.concentration0),
                       torch.ones_like(self.concentration0), validate_args=validate_args)
        super().__init__(base, self._transforms(), validate_args=validate_args)

    def _transforms(self):
        # U -> U^(1/b) -> 1 - U^(1/b) -> (1 - U^(1/b))^(1/a)
        return [PowerTransform(exponent=self.concentration0.reciprocal()),
                AffineTransform(loc=1.0, scale=-1.0),
                PowerTransform(exponent=self.concentration1.reciprocal())]

    def expand(self, batch_shape, _instance=None):
        """A new Kumaraswamy whose batch shape is `batch_shape`, with the parameters broadcast to
        it; `_instance` is for subclasses.
        """
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        TransformedDistribution.__init__(new, self.base_dist.expand(batch_shape),
                                         new._transforms(), validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return _raw_moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # ((a - 1) / (a b - 1))^(1 / a): an interior maximum only when both are at least 1
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        a, b = self.concentration1, self.concentration0
        mode = ((a - 1) / (a * b - 1)) ** a.reciprocal()
        return mode.masked_fill((a < 1) | (b < 1), float("nan"))

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        a, b = self.concentration1, self.concentration0
        return _raw_moment(a, b, 2) - _raw_moment(a, b, 1).pow(2)

    def entropy(self):
        # (1 - 1/b) + (1 - 1/a) H_b - log(a b), with the harmonic number H_b = psi(b + 1) + gamma
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        a, b = self.concentration1, self.concentration0
        harmonic = torch.digamma(b + 1) + euler_constant
        return (1 - b.reciprocal()) + (1 - a.reciprocal()) * harmonic - torch.log(a * b)
