"""Poisson(rate): counts of events that occur at a constant rate."""

from __future__ import annotations

import numbers

import jax
from jax.scipy import special as jsp

import torchjax as torch

from . import constraints
from ._jax import kernel, sampler, xlogy
from .exp_family import ExponentialFamily
from .utils import broadcast_all, float_value

__all__ = ["Poisson"]


@sampler
def _poisson(key, shape, rate):
    return jax.random.poisson(key, rate, shape).astype(rate.dtype)


@kernel("PoissonLogProb")
def _log_prob(value, rate):
    return xlogy(value, rate) - rate - jsp.gammaln(value + 1)


class Poisson(ExponentialFamily):
    """The Poisson distribution: P(k) = rate^k exp(-rate) / k!. Samples are floats, as in
    PyTorch.

    Example::

        >>> m = Poisson(torch.tensor([4.0]))
        >>> m.sample()  # a nonnegative integer value
    """

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = () if isinstance(rate, numbers.Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new Poisson whose batch shape is `batch_shape`, with the parameters broadcast to it;
        `_instance` is for subclasses.
        """
        new, batch_shape = self._expand_params(Poisson, batch_shape, _instance, {"rate": 0})
        return self._finish_expand(new, batch_shape)

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return self.rate

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return self.rate.floor()

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return self.rate

    def sample(self, sample_shape=()):
        """A draw of shape `sample_shape + batch_shape + event_shape`, without gradient; the
        randomness comes from torchjax's global generator (`torchjax.manual_seed`).
        """
        with torch.no_grad():
            return _poisson(self._extended_shape(sample_shape), self.rate.detach())

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(float_value(value, self.rate), self.rate)

    @property
    def _natural_params(self):
        return (self.rate.log(),)

    def _log_normalizer(self, x):
        return x.exp()
