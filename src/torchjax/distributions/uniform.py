"""Uniform(low, high): constant density on [low, high)."""

from __future__ import annotations

import math
import numbers

import jax
import jax.numpy as jnp

from . import constraints
from ._jax import float_dtype, kernel, sampler
from .distribution import Distribution
from .utils import as_value, broadcast_all

__all__ = ["Uniform"]


@sampler
def _uniform(key, shape, low, high):
    u = jax.random.uniform(key, shape, float_dtype(low, high))
    return low + u * (high - low)


@kernel("UniformLogProb")
def _log_prob(value, low, high):
    inside = ((low <= value) & (value < high)).astype(jnp.result_type(low, high))
    return jnp.log(inside) - jnp.log(high - low)


@kernel("UniformCdf")
def _cdf(value, low, high):
    return jnp.clip((value - low) / (high - low), 0, 1)


class Uniform(Distribution):
    """The continuous uniform distribution on the half-open interval [low, high).

    Example::

        >>> m = Uniform(torch.tensor([0.0]), torch.tensor([5.0]))
        >>> m.sample()  # in [0, 5)
    """

    has_rsample = True

    @property
    def arg_constraints(self):
        """The constraint each constructor parameter must satisfy, by name (checked when
        `validate_args` is on).
        """
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        numbers_only = isinstance(low, numbers.Number) and isinstance(high, numbers.Number)
        super().__init__(() if numbers_only else self.low.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new Uniform whose batch shape is `batch_shape`, with the parameters broadcast to it;
        `_instance` is for subclasses.
        """
        new, batch_shape = self._expand_params(Uniform, batch_shape, _instance,
                                               {"low": 0, "high": 0})
        return self._finish_expand(new, batch_shape)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        """The constraint that values of this distribution satisfy (a
        `torchjax.distributions.constraints` object).
        """
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return (self.high + self.low) / 2

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return math.nan * self.high

    @property
    def stddev(self):
        """The standard deviation, with shape `batch_shape + event_shape`."""
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        """A reparameterised draw of shape `sample_shape + batch_shape + event_shape`: gradients
        flow from it back to the parameters. Randomness comes from torchjax's global generator.
        """
        return _uniform(self._extended_shape(sample_shape), self.low, self.high)

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(as_value(value, self.low), self.low, self.high)

    def cdf(self, value):
        """The cumulative distribution function evaluated at `value`, elementwise over the batch.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _cdf(as_value(value, self.low), self.low, self.high)

    def icdf(self, value):
        """The inverse of the CDF: the value whose cumulative probability is `value`."""
        return value * (self.high - self.low) + self.low

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return (self.high - self.low).log()
