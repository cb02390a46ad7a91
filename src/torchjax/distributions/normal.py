"""Normal(loc, scale): the Gaussian distribution."""

from __future__ import annotations

import math
import numbers

import jax
import jax.numpy as jnp

from . import constraints
from ._jax import float_dtype, kernel, sampler
from .exp_family import ExponentialFamily
from .utils import as_value, broadcast_all

__all__ = ["Normal"]

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


@sampler
def _normal(key, shape, loc, scale):
    return loc + scale * jax.random.normal(key, shape, float_dtype(loc, scale))


@kernel("NormalLogProb")
def _log_prob(value, loc, scale):
    return -((value - loc) ** 2) / (2 * scale**2) - jnp.log(scale) - _HALF_LOG_2PI


@kernel("NormalCdf")
def _cdf(value, loc, scale):
    return 0.5 * (1 + jax.scipy.special.erf((value - loc) / (scale * math.sqrt(2))))


@kernel("NormalIcdf")
def _icdf(value, loc, scale):
    return loc + scale * math.sqrt(2) * jax.scipy.special.erfinv(2 * value - 1)


@kernel("NormalEntropy")
def _entropy(scale):
    return 0.5 + _HALF_LOG_2PI + jnp.log(scale)


class Normal(ExponentialFamily):
    """The normal distribution with mean `loc` and standard deviation `scale`.

    Example::

        >>> m = Normal(torch.tensor([0.0]), torch.tensor([1.0]))
        >>> m.sample().shape
        torch.Size([1])
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        numbers_only = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(() if numbers_only else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new, batch_shape = self._expand_params(Normal, batch_shape, _instance,
                                               {"loc": 0, "scale": 0})
        return self._finish_expand(new, batch_shape)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale.pow(2)

    def rsample(self, sample_shape=()):
        return _normal(self._extended_shape(sample_shape), self.loc, self.scale)

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
        return _entropy(self.scale)

    @property
    def _natural_params(self):
        return self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal()

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()
