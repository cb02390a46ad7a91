"""Exponential(rate)."""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp

import torchjax as torch

from . import constraints
from ._jax import float_dtype, kernel, sampler
from .exp_family import ExponentialFamily
from .utils import as_value, broadcast_all

__all__ = ["Exponential"]


@sampler
def _exponential(key, shape, rate):
    return jax.random.exponential(key, shape, float_dtype(rate)) / rate


@kernel("ExponentialLogProb")
def _log_prob(value, rate):
    return jnp.log(rate) - rate * value


@kernel("ExponentialCdf")
def _cdf(value, rate):
    return 1 - jnp.exp(-rate * value)


@kernel("ExponentialIcdf")
def _icdf(value, rate):
    return -jnp.log1p(-value) / rate


class Exponential(ExponentialFamily):
    """The exponential distribution with density rate * exp(-rate * x) on x >= 0.

    Example::

        >>> m = Exponential(torch.tensor([1.0]))
        >>> m.sample()  # nonnegative
    """

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = () if isinstance(rate, numbers.Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new Exponential whose batch shape is `batch_shape`, with the parameters broadcast to
        it; `_instance` is for subclasses.
        """
        new, batch_shape = self._expand_params(Exponential, batch_shape, _instance, {"rate": 0})
        return self._finish_expand(new, batch_shape)

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return self.rate.reciprocal()

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return torch.zeros_like(self.rate)

    @property
    def stddev(self):
        """The standard deviation, with shape `batch_shape + event_shape`."""
        return self.rate.reciprocal()

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        """A reparameterised draw of shape `sample_shape + batch_shape + event_shape`: gradients
        flow from it back to the parameters. Randomness comes from torchjax's global generator.
        """
        return _exponential(self._extended_shape(sample_shape), self.rate)

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(as_value(value, self.rate), self.rate)

    def cdf(self, value):
        """The cumulative distribution function evaluated at `value`, elementwise over the batch.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _cdf(as_value(value, self.rate), self.rate)

    def icdf(self, value):
        """The inverse of the CDF: the value whose cumulative probability is `value`."""
        return _icdf(as_value(value, self.rate), self.rate)

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -(-x).log()
