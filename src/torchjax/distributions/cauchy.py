"""Cauchy(loc, scale): the Lorentz distribution (no mean, infinite variance)."""

from __future__ import annotations

import math
import numbers

import jax
import jax.numpy as jnp

import torchjax as torch

from . import constraints
from ._jax import float_dtype, kernel, sampler
from .distribution import Distribution
from .utils import as_value, broadcast_all

__all__ = ["Cauchy"]


@sampler
def _cauchy(key, shape, loc, scale):
    return loc + scale * jax.random.cauchy(key, shape, float_dtype(loc, scale))


@kernel("CauchyLogProb")
def _log_prob(value, loc, scale):
    return -math.log(math.pi) - jnp.log(scale) - jnp.log1p(((value - loc) / scale) ** 2)


@kernel("CauchyCdf")
def _cdf(value, loc, scale):
    return jnp.arctan((value - loc) / scale) / math.pi + 0.5


@kernel("CauchyIcdf")
def _icdf(value, loc, scale):
    return jnp.tan(math.pi * (value - 0.5)) * scale + loc


class Cauchy(Distribution):
    """The Cauchy distribution: the ratio of two independent standard normals, shifted and
    scaled.

    Example::

        >>> m = Cauchy(torch.tensor([0.0]), torch.tensor([1.0]))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        numbers_only = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(() if numbers_only else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new Cauchy whose batch shape is `batch_shape`, with the parameters broadcast to it;
        `_instance` is for subclasses.
        """
        new, batch_shape = self._expand_params(Cauchy, batch_shape, _instance,
                                               {"loc": 0, "scale": 0})
        return self._finish_expand(new, batch_shape)

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return torch.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return self.loc

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return torch.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=()):
        """A reparameterised draw of shape `sample_shape + batch_shape + event_shape`: gradients
        flow from it back to the parameters. Randomness comes from torchjax's global generator.
        """
        return _cauchy(self._extended_shape(sample_shape), self.loc, self.scale)

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(as_value(value, self.loc), self.loc, self.scale)

    def cdf(self, value):
        """The cumulative distribution function evaluated at `value`, elementwise over the batch.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _cdf(as_value(value, self.loc), self.loc, self.scale)

    def icdf(self, value):
        """The inverse of the CDF: the value whose cumulative probability is `value`."""
        return _icdf(as_value(value, self.loc), self.loc, self.scale)

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return math.log(4 * math.pi) + self.scale.log()
