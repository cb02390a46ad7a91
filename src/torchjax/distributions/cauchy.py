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
        new, batch_shape = self._expand_params(Cauchy, batch_shape, _instance,
                                               {"loc": 0, "scale": 0})
        return self._finish_expand(new, batch_shape)

    @property
    def mean(self):
        return torch.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return torch.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=()):
        return _cauchy(self._extended_shape(sample_shape), self.loc, self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(as_value(value, self.loc), self.loc, self.scale)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _cdf(as_value(value, self.loc), self.loc, self.scale)

    def icdf(self, value):
        return _icdf(as_value(value, self.loc), self.loc, self.scale)

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
