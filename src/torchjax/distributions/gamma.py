"""Gamma(concentration, rate), with a reparameterised sampler."""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp
from jax.scipy import special as jsp

from . import constraints
from ._jax import float_dtype, kernel, sampler, tiny, xlogy
from .exp_family import ExponentialFamily
from .utils import as_value, broadcast_all

__all__ = ["Gamma"]


@sampler
def _gamma(key, shape, concentration, rate):
    # jax.random.gamma differentiates in the concentration by implicit reparameterisation
    a = jnp.broadcast_to(concentration, shape)
    x = jax.random.gamma(key, a, shape, float_dtype(concentration, rate)) / rate
    # keep draws off 0 (log_prob at 0 is infinite) without touching the gradient
    return x + jax.lax.stop_gradient(jnp.maximum(x, tiny(x.dtype)) - x)


@kernel("GammaLogProb")
def _log_prob(value, concentration, rate):
    return (xlogy(concentration, rate) + xlogy(concentration - 1, value)
            - rate * value - jsp.gammaln(concentration))


@kernel("GammaEntropy")
def _entropy(concentration, rate):
    a = concentration
    return a - jnp.log(rate) + jsp.gammaln(a) + (1.0 - a) * jsp.digamma(a)


@kernel("GammaCdf")
def _cdf(value, concentration, rate):
    return jsp.gammainc(concentration, rate * value)


class Gamma(ExponentialFamily):
    """The gamma distribution with shape `concentration` and inverse scale `rate`.

    Example::

        >>> m = Gamma(torch.tensor([1.0]), torch.tensor([1.0]))
        >>> m.rsample()  # differentiable in concentration and rate
    """

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        numbers_only = (isinstance(concentration, numbers.Number)
                        and isinstance(rate, numbers.Number))
        super().__init__(() if numbers_only else self.concentration.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new Gamma whose batch shape is `batch_shape`, with the parameters broadcast to it;
        `_instance` is for subclasses.
        """
        new, batch_shape = self._expand_params(Gamma, batch_shape, _instance,
                                               {"concentration": 0, "rate": 0})
        return self._finish_expand(new, batch_shape)

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return self.concentration / self.rate

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        """A reparameterised draw of shape `sample_shape + batch_shape + event_shape`: gradients
        flow from it back to the parameters. Randomness comes from torchjax's global generator.
        """
        return _gamma(self._extended_shape(sample_shape), self.concentration, self.rate)

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        value = as_value(value, self.rate)
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(value, self.concentration, self.rate)

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return _entropy(self.concentration, self.rate)

    def cdf(self, value):
        """The cumulative distribution function evaluated at `value`, elementwise over the batch.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _cdf(as_value(value, self.rate), self.concentration, self.rate)

    @property
    def _natural_params(self):
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x, y):
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()
