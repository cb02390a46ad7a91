"""Geometric(probs | logits): the number of failures before the first success."""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp

import torchjax as torch

from . import constraints
from ._jax import kernel, sampler, tiny
from .distribution import Distribution
from .utils import (
    as_value,
    broadcast_all,
    lazy_property,
    logits_to_probs,
    one_of,
    probs_to_logits,
    satisfied,
)

__all__ = ["Geometric"]


@sampler
def _geometric(key, shape, probs):
    u = jax.random.uniform(key, shape, probs.dtype, tiny(probs.dtype), 1)
    return jnp.floor(jnp.log(u) / jnp.log1p(-probs))


@kernel("GeometricLogProb")
def _log_prob(value, probs):
    # p = 1 and k = 0 is certain: 0 * log(0) must count as 0
    p = jnp.where((probs == 1) & (value == 0), 0.0, probs)
    return value * jnp.log1p(-p) + jnp.log(probs)


@kernel("GeometricEntropy")
def _entropy(logits, probs):
    return (jax.nn.softplus(logits) - probs * logits) / probs


class Geometric(Distribution):
    """P(k) = (1 - p)^k p for k = 0, 1, 2, ...: failures before the first success in
    Bernoulli(p) trials.

    Example::

        >>> m = Geometric(torch.tensor([0.3]))
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        one_of(probs, logits)
        given = probs if probs is not None else logits
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        batch_shape = () if isinstance(given, numbers.Number) else given.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            # p = 0 is in the unit interval but gives no distribution
            value = self.probs
            if not satisfied(constraints.positive, value):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to be positive but "
                    f"found invalid values:\n{value.detach()[~(value > 0)]}")

    def expand(self, batch_shape, _instance=None):
        """A new Geometric whose batch shape is `batch_shape`, with the parameters broadcast to it;
        `_instance` is for subclasses.
        """
        new, batch_shape = self._expand_params(Geometric, batch_shape, _instance,
                                               {"probs": 0, "logits": 0})
        return self._finish_expand(new, batch_shape)

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return torch.zeros_like(self.probs)

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        """The log-odds of success, computed once from `probs` when that was given."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """The probability of success, computed once from `logits` when that was given."""
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=()):
        """A draw of shape `sample_shape + batch_shape + event_shape`, without gradient; the
        randomness comes from torchjax's global generator (`torchjax.manual_seed`).
        """
        with torch.no_grad():
            return _geometric(self._extended_shape(sample_shape), self.probs.detach())

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(as_value(value, self.probs), self.probs)

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return _entropy(self.logits, self.probs)
