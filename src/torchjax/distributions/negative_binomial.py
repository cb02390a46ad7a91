"""NegativeBinomial(total_count, probs | logits): successes before total_count failures."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy import special as jsp

import torchjax as torch

from . import constraints
from ._jax import kernel, sampler, tiny
from .distribution import Distribution
from .gamma import Gamma
from .utils import (
    broadcast_all,
    float_value,
    lazy_property,
    logits_to_probs,
    one_of,
    probs_to_logits,
)

__all__ = ["NegativeBinomial"]


@sampler
def _negative_binomial(key, shape, total_count, logits):
    # a gamma-mixed Poisson: rate ~ Gamma(total_count, exp(-logits))
    k1, k2 = jax.random.split(key)
    n = jnp.broadcast_to(total_count, shape)
    rate = jax.random.gamma(k1, n, shape, logits.dtype) * jnp.exp(logits)
    rate = jnp.maximum(rate, tiny(rate.dtype))
    return jax.random.poisson(k2, rate, shape).astype(logits.dtype)


@kernel("NegativeBinomialLogProb")
def _log_prob(value, total_count, logits):
    n = total_count
    unnormalised = n * jax.nn.log_sigmoid(-logits) + value * jax.nn.log_sigmoid(logits)
    normaliser = -jsp.gammaln(n + value) + jsp.gammaln(1.0 + value) + jsp.gammaln(n)
    # n = 0 is the point mass at 0, where the gamma terms would be infinite
    normaliser = jnp.where(n + value == 0.0, 0.0, normaliser)
    return unnormalised - normaliser


class NegativeBinomial(Distribution):
    """The number of successes before `total_count` failures, each trial succeeding with
    probability `probs` (or sigmoid(`logits`)). total_count may be any nonnegative real.

    Example::

        >>> m = NegativeBinomial(torch.tensor(5.0), torch.tensor(0.3))
    """

    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        one_of(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new NegativeBinomial whose batch shape is `batch_shape`, with the parameters broadcast
        to it; `_instance` is for subclasses.
        """
        new, batch_shape = self._expand_params(
            NegativeBinomial, batch_shape, _instance,
            {"total_count": 0, "probs": 0, "logits": 0})
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return self._finish_expand(new, batch_shape)

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return self.total_count * torch.exp(self.logits)

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return self.mean / torch.sigmoid(-self.logits)

    @lazy_property
    def logits(self):
        """The log-odds of success, computed once from `probs` when that was given."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """The probability of success, computed once from `logits` when that was given."""
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        """The shape of the parameter tensor (`probs` or `logits`)."""
        return self._param.size()

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=torch.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=()):
        """A draw of shape `sample_shape + batch_shape + event_shape`, without gradient; the
        randomness comes from torchjax's global generator (`torchjax.manual_seed`).
        """
        with torch.no_grad():
            return _negative_binomial(self._extended_shape(sample_shape),
                                      self.total_count.detach(), self.logits.detach())

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(float_value(value, self._param), self.total_count, self.logits)
