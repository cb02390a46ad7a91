"""Bernoulli(probs | logits): 1 with probability p, else 0."""

from __future__ import annotations

import math
import numbers

import jax

import torchjax as torch

from . import constraints
from ._jax import kernel, sampler
from .exp_family import ExponentialFamily
from .utils import broadcast_all, lazy_property, logits_to_probs, one_of, probs_to_logits

__all__ = ["Bernoulli"]


@sampler
def _bernoulli(key, shape, probs):
    return jax.random.bernoulli(key, probs, shape).astype(probs.dtype)


@kernel("BernoulliLogProb")
def _log_prob(value, logits):
    # -binary_cross_entropy_with_logits, the stable form for any logit
    return value * logits - jax.nn.softplus(logits)


@kernel("BernoulliEntropy")
def _entropy(logits, probs):
    return jax.nn.softplus(logits) - probs * logits


class Bernoulli(ExponentialFamily):
    """1 with probability `probs` (or sigmoid(`logits`)), 0 otherwise.

    Example::

        >>> m = Bernoulli(torch.tensor([0.3]))
        >>> m.sample()  # 30% chance 1.0, 70% chance 0.0
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        one_of(probs, logits)
        given = probs if probs is not None else logits
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = () if isinstance(given, numbers.Number) else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new Bernoulli whose batch shape is `batch_shape`, with the parameters broadcast to it;
        `_instance` is for subclasses.
        """
        new, batch_shape = self._expand_params(Bernoulli, batch_shape, _instance,
                                               {"probs": 0, "logits": 0})
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return self._finish_expand(new, batch_shape)

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return self.probs

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        p = self.probs
        # a fair coin has no mode
        return torch.where(p == 0.5, math.nan, (p >= 0.5).to(p.dtype))

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return self.probs * (1 - self.probs)

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
            return _bernoulli(self._extended_shape(sample_shape), self.probs.detach())

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(value, self.logits)

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return _entropy(self.logits, self.probs)

    def enumerate_support(self, expand=True):
        """Every value in the finite support, stacked along a new leading dimension; with
        `expand=True` each is broadcast to the batch shape.
        """
        values = torch.arange(2, dtype=self._param.dtype)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    @property
    def _natural_params(self):
        return (torch.logit(self.probs),)

    def _log_normalizer(self, x):
        return torch.log1p(torch.exp(x))
