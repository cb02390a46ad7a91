"""What Normal, Laplace and Cauchy share: a family with location `loc` and scale `scale`,
whose draw, log density, CDF and inverse CDF are jitted functions of (value, loc, scale)
each class names."""

from __future__ import annotations

import numbers

from . import constraints
from .utils import as_value, broadcast_all


class LocScale:
    """A base before Distribution (or ExponentialFamily): a subclass sets `_sample`,
    `_log_prob`, `_cdf` and `_icdf` (staticmethods) and gives mean, variance, entropy."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        numbers_only = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(() if numbers_only else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new distribution of this family whose batch shape is `batch_shape`, with the
        parameters broadcast to it; `_instance` is for subclasses.
        """
        # (the public class itself: a subclass with its own __init__ must define expand)
        public = next(c for c in type(self).__mro__ if LocScale in c.__bases__)
        new, batch_shape = self._expand_params(public, batch_shape, _instance,
                                               {"loc": 0, "scale": 0})
        return self._finish_expand(new, batch_shape)

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return self.loc

    def rsample(self, sample_shape=()):
        """A reparameterised draw of shape `sample_shape + batch_shape + event_shape`: gradients
        flow from it back to the parameters. Randomness comes from torchjax's global generator.
        """
        return self._sample(self._extended_shape(sample_shape), self.loc, self.scale)

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        return self._log_prob(as_value(value, self.loc), self.loc, self.scale)

    def cdf(self, value):
        """The cumulative distribution function evaluated at `value`, elementwise over the batch.
        """
        if self._validate_args:
            self._validate_sample(value)
        return self._cdf(as_value(value, self.loc), self.loc, self.scale)

    def icdf(self, value):
        """The inverse of the CDF: the value whose cumulative probability is `value`."""
        return self._icdf(as_value(value, self.loc), self.loc, self.scale)
