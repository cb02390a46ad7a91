"""Normal(loc, scale): the Gaussian distribution."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ._jax import float_dtype, kernel, sampler
from ._loc_scale import LocScale
from .exp_family import ExponentialFamily

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


class Normal(LocScale, ExponentialFamily):
    """The normal distribution with mean `loc` and standard deviation `scale`.

    Example::

        >>> m = Normal(torch.tensor([0.0]), torch.tensor([1.0]))
        >>> m.sample().shape
        torch.Size([1])
    """

    _sample = staticmethod(_normal)
    _log_prob = staticmethod(_log_prob)
    _cdf = staticmethod(_cdf)
    _icdf = staticmethod(_icdf)
    _mean_carrier_measure = 0

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return self.loc

    @property
    def stddev(self):
        """The standard deviation, with shape `batch_shape + event_shape`."""
        return self.scale

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return self.scale.pow(2)

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return _entropy(self.scale)

    @property
    def _natural_params(self):
        return self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal()

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()
