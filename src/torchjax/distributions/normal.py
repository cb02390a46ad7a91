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
        """A new Normal whose batch shape is `batch_shape`, with the parameters broadcast to it;
        `_instance` is for subclasses.
        """
        new, batch_shape = self._expand_params(Normal, batch_shape, _instance,
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
    def stddev(self):
        """The standard deviation, with shape `batch_shape + event_shape`."""
        return self.scale

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return self.scale.pow(2)

    def rsample(self, sample_shape=()):
        """A reparameterised draw of shape `sample_shape + batch_shape + event_shape`: gradients
        flow from it back to the parameters. Randomness comes from torchjax's global generator.
        """
        return _normal(self._extended_shape(sample_shape), self.loc, self.scale)

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
        return _entropy(self.scale)

    @property
    def _natural_params(self):
        return self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal()

    def _log_normalizer(self, x, y):
        return -0.25 * x.pow(2) / y + 0.5 * (-math.pi / y).log()
