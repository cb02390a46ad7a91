"""Binomial(total_count, probs | logits): successes in total_count Bernoulli trials."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy import special as jsp

import torchjax as torch

from . import constraints
from ._jax import abs0, clamp_min, kernel, sampler
from .distribution import Distribution
from .utils import (
    broadcast_all,
    float_value,
    lazy_property,
    logits_to_probs,
    one_of,
    probs_to_logits,
)

__all__ = ["Binomial"]


@sampler
def _binomial(key, shape, total_count, probs):
    return jax.random.binomial(key, total_count, probs, shape, probs.dtype)


@kernel("BinomialLogProb")
def _log_prob(value, total_count, logits):
    n = total_count
    # n * log(1 + exp(logits)) split as n * max(logits, 0) + n * log1p(exp(-|logits|)),
    # finite for any logit; max written as PyTorch's (clamp(min) + x - clamp(max)) / 2 so
    # the gradient at logits == 0 is the same (1/2)
    positive_part = (clamp_min(logits, 0) + logits + clamp_min(-logits, 0)) / 2
    normaliser = (n * positive_part + n * jnp.log1p(jnp.exp(-abs0(logits)))
                  - jsp.gammaln(n + 1))
    return (value * logits - jsp.gammaln(value + 1) - jsp.gammaln(n - value + 1)
            - normaliser)


class Binomial(Distribution):
    """The number of successes in `total_count` independent trials of probability `probs`
    (or sigmoid(`logits`)). total_count may be a tensor broadcastable with the probabilities.

    Example::

        >>> m = Binomial(100, torch.tensor([0, 0.2, 0.8, 1]))
        >>> m.sample()  # tensor([0., 22., 71., 100.]), say
    """

    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
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
        """A new Binomial whose batch shape is `batch_shape`, with the parameters broadcast to it;
        `_instance` is for subclasses.
        """
        new, batch_shape = self._expand_params(
            Binomial, batch_shape, _instance, {"total_count": 0, "probs": 0, "logits": 0})
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return self._finish_expand(new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        """The constraint that values of this distribution satisfy (a
        `torchjax.distributions.constraints` object).
        """
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return self.total_count * self.probs

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return self.total_count * self.probs * (1 - self.probs)

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

    def sample(self, sample_shape=()):
        """A draw of shape `sample_shape + batch_shape + event_shape`, without gradient; the
        randomness comes from torchjax's global generator (`torchjax.manual_seed`).
        """
        with torch.no_grad():
            return _binomial(self._extended_shape(sample_shape), self.total_count.detach(),
                             self.probs.detach())

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(float_value(value, self._param), self.total_count, self.logits)

    def _homogeneous_count(self, what: str) -> int:
        n = int(self.total_count.max())
        if not self.total_count.min() == n:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return n

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(torch.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        """Every value in the finite support, stacked along a new leading dimension; with
        `expand=True` each is broadcast to the batch shape.
        """
        n = self._homogeneous_count("enumerate_support")
        values = torch.arange(1 + n, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
