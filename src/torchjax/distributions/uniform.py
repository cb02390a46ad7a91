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
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        numbers_only = isinstance(low, numbers.Number) and isinstance(high, numbers.Number)
        super().__init__(() if numbers_only else self.low.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new, batch_shape = self._expand_params(Uniform, batch_shape, _instance,
                                               {"low": 0, "high": 0})
        return self._finish_expand(new, batch_shape)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return math.nan * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self):
        return (self.high - self.low).pow(2) / 12

    def rsample(self, sample_shape=()):
        return _uniform(self._extended_shape(sample_shape), self.low, self.high)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(as_value(value, self.low), self.low, self.high)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _cdf(as_value(value, self.low), self.low, self.high)

    def icdf(self, value):
        return value * (self.high - self.low) + self.low

    def entropy(self):
        return (self.high - self.low).log()
