"""Cauchy(loc, scale): the Lorentz distribution (no mean, infinite variance)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

import torchjax as torch

from ._jax import float_dtype, kernel, sampler
from ._loc_scale import LocScale
from .distribution import Distribution

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


class Cauchy(LocScale, Distribution):
    """The Cauchy distribution: the ratio of two independent standard normals, shifted and
    scaled.

    Example::

        >>> m = Cauchy(torch.tensor([0.0]), torch.tensor([1.0]))
    """

    _sample = staticmethod(_cauchy)
    _log_prob = staticmethod(_log_prob)
    _cdf = staticmethod(_cdf)
    _icdf = staticmethod(_icdf)

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return torch.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return torch.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return math.log(4 * math.pi) + self.scale.log()
