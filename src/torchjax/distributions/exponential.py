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
        new, batch_shape = self._expand_params(Exponential, batch_shape, _instance, {"rate": 0})
        return self._finish_expand(new, batch_shape)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return torch.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        return _exponential(self._extended_shape(sample_shape), self.rate)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(as_value(value, self.rate), self.rate)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _cdf(as_value(value, self.rate), self.rate)

    def icdf(self, value):
        return _icdf(as_value(value, self.rate), self.rate)

    def entropy(self):
        return 1.0 - self.rate.log()

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -(-x).log()
