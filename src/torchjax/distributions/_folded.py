"""What HalfCauchy and HalfNormal share: |X| for a centred X of scale `scale`, as a
TransformedDistribution (the base's density folded onto [0, inf))."""

from __future__ import annotations

import math

import torchjax as torch

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform
from .utils import as_value


class Folded(TransformedDistribution):
    """|X| for X = `_base`(0, scale); a subclass names `_base` and gives mean and variance."""

    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _base: type

    def __init__(self, scale, validate_args=None):
        base = self._base(0, scale, validate_args=False)
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new distribution of this class whose batch shape is `batch_shape`, with the
        parameters broadcast to it; `_instance` is for subclasses.
        """
        # (the public class itself: a subclass with its own __init__ must define expand)
        public = next(c for c in type(self).__mro__ if Folded in c.__bases__)
        new = self._get_checked_instance(public, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        """The scale parameter of the underlying distribution this one is built from."""
        return self.base_dist.scale

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return torch.zeros_like(self.scale)

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        value = as_value(value, self.scale)
        folded = self.base_dist.log_prob(value) + math.log(2)
        return torch.where(value >= 0, folded, -math.inf)

    def cdf(self, value):
        """The cumulative distribution function evaluated at `value`, elementwise over the batch.
        """
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        """The inverse of the CDF: the value whose cumulative probability is `value`."""
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return self.base_dist.entropy() - math.log(2)
