"""RelaxedBernoulli(temperature, probs | logits): a continuous relaxation of Bernoulli on
(0, 1) (the binary Concrete / Gumbel-softmax distribution)."""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp

import torchjax as torch

from . import constraints
from ._jax import eps, kernel, sampler
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import broadcast_all, lazy_property, logits_to_probs, one_of, probs_to_logits

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


def _clamp_unit(x):
    e = eps(x.dtype)
    return jnp.clip(x, e, 1 - e)


@sampler
def _logit_relaxed_bernoulli(key, shape, temperature, probs):
    p = _clamp_unit(jnp.broadcast_to(probs, shape))
    u = _clamp_unit(jax.random.uniform(key, shape, p.dtype))
    return (jnp.log(u) - jnp.log1p(-u) + jnp.log(p) - jnp.log1p(-p)) / temperature


@kernel("LogitRelaxedBernoulliLogProb")
def _log_prob(value, temperature, logits):
    d = logits - value * temperature
    return jnp.log(temperature) + d - 2 * jnp.log1p(jnp.exp(d))


class LogitRelaxedBernoulli(Distribution):
    """The logit of a RelaxedBernoulli draw: (logit(u) + logits) / temperature, u uniform."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
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
        new, batch_shape = self._expand_params(LogitRelaxedBernoulli, batch_shape, _instance,
                                               {"probs": 0, "logits": 0})
        new.temperature = self.temperature
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return self._finish_expand(new, batch_shape)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def rsample(self, sample_shape=()):
        temperature = torch.as_tensor(self.temperature, dtype=self.probs.dtype)
        return _logit_relaxed_bernoulli(self._extended_shape(sample_shape), temperature,
                                        self.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        temperature = torch.as_tensor(self.temperature, dtype=self.logits.dtype)
        return _log_prob(value, temperature, self.logits)


class RelaxedBernoulli(TransformedDistribution):
    """sigmoid of a LogitRelaxedBernoulli: values in (0, 1) that approach a Bernoulli's
    {0, 1} as the temperature goes to 0, with reparameterised samples.

    Example::

        >>> m = RelaxedBernoulli(torch.tensor([2.2]), torch.tensor([0.1, 0.2, 0.3, 0.99]))
        >>> m.rsample()
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new RelaxedBernoulli whose batch shape is `batch_shape`, with the parameters broadcast
        to it; `_instance` is for subclasses.
        """
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        """The relaxation temperature given at construction: lower values give samples closer to
        discrete.
        """
        return self.base_dist.temperature

    @property
    def logits(self):
        """The log-odds (log-probabilities for a categorical) parameter, computed from `probs` if
        that was given.
        """
        return self.base_dist.logits

    @property
    def probs(self):
        """The probability parameter, computed from `logits` if that was given."""
        return self.base_dist.probs
