"""Laplace(loc, scale): the double-exponential distribution."""

from __future__ import annotations

import math
import numbers

import jax
import jax.numpy as jnp

from . import constraints
from ._jax import abs0, eps, float_dtype, kernel, sampler
from .distribution import Distribution
from .utils import as_value, broadcast_all

__all__ = ["Laplace"]


@sampler
def _laplace(key, shape, loc, scale):
    dt = float_dtype(loc, scale)
    # u in (-1, 1), kept off -1 so log1p(-|u|) stays finite
    u = jax.random.uniform(key, shape, dt, eps(dt) - 1, 1)
    return loc - scale * jnp.sign(u) * jnp.log1p(-jnp.abs(u))


@kernel("LaplaceLogProb")
def _log_prob(value, loc, scale):
    return -jnp.log(2 * scale) - abs0(value - loc) / scale


@kernel("LaplaceCdf")
def _cdf(value, loc, scale):
    d = value - loc
    return 0.5 - 0.5 * jnp.sign(d) * jnp.expm1(-abs0(d) / scale)


@kernel("LaplaceIcdf")
def _icdf(value, loc, scale):
    t = value - 0.5
    return loc - scale * jnp.sign(t) * jnp.log1p(-2 * abs0(t))


class Laplace(Distribution):
    """The Laplace distribution with location `loc` and scale `scale`.

    Example::

        >>> m = Laplace(torch.tensor([0.0]), torch.tensor([1.0]))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        numbers_only = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(() if numbers_only else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new Laplace whose batch shape is `batch_shape`, with the parameters broadcast to it;
        `_instance` is for subclasses.
        """
        new, batch_shape = self._expand_params(Laplace, batch_shape, _instance,
                                               {"loc": 0, "scale": 0})
        return self._finish_expand(new, batch_shape)

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return self.loc

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return self.loc

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        """The standard deviation, with shape `batch_shape + event_shape`."""
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()):
        """A reparameterised draw of shape `sample_shape + batch_shape + event_shape`: gradients
        flow from it back to the parameters. Randomness comes from torchjax's global generator.
        """
        return _laplace(self._extended_shape(sample_shape), self.loc, self.scale)

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
        return 1 + (2 * self.scale).log()
