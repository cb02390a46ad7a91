"""Laplace(loc, scale): the double-exponential distribution."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ._jax import abs0, eps, float_dtype, kernel, sampler
from ._loc_scale import LocScale
from .distribution import Distribution

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


class Laplace(LocScale, Distribution):
    """The Laplace distribution with location `loc` and scale `scale`.

    Example::

        >>> m = Laplace(torch.tensor([0.0]), torch.tensor([1.0]))
    """

    _sample = staticmethod(_laplace)
    _log_prob = staticmethod(_log_prob)
    _cdf = staticmethod(_cdf)
    _icdf = staticmethod(_icdf)

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
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

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return 1 + (2 * self.scale).log()
