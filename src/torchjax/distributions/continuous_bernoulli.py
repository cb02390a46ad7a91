"""ContinuousBernoulli(probs | logits): a density on [0, 1] proportional to
p^x (1 - p)^(1 - x) (Loaiza-Ganem and Cunningham, 2019)."""

from __future__ import annotations

import math
import numbers

import jax
import jax.numpy as jnp

import torchjax as torch

from . import constraints
from ._jax import abs0, kernel, sampler
from .exp_family import ExponentialFamily
from .utils import (
    as_value,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    one_of,
    probs_to_logits,
    satisfied,
)

__all__ = ["ContinuousBernoulli"]

# Near p = 1/2 the closed forms are 0/0: inside (lims[0], lims[1]] each quantity switches to
# its Taylor expansion about 1/2, and the closed form is evaluated at a safe cut point so its
# unused branch carries no nan into the gradient.


def _stable(probs, lims):
    return (probs <= lims[0]) | (probs > lims[1])


def _cut(probs, lims):
    return jnp.where(_stable(probs, lims), probs, lims[0])


def _log_norm(probs, lims):
    """log C(p), the log normalising constant."""
    cut = _cut(probs, lims)
    below = jnp.where(cut <= 0.5, cut, 0.0)
    above = jnp.where(cut >= 0.5, cut, 1.0)
    closed = jnp.log(abs0(jnp.log1p(-cut) - jnp.log(cut))) - jnp.where(
        cut <= 0.5, jnp.log1p(-2.0 * below), jnp.log(2.0 * above - 1.0))
    x = (probs - 0.5) ** 2
    taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
    return jnp.where(_stable(probs, lims), closed, taylor)


def _mean(probs, lims):
    cut = _cut(probs, lims)
    closed = cut / (2.0 * cut - 1.0) + 1.0 / (jnp.log1p(-cut) - jnp.log(cut))
    x = probs - 0.5
    taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x**2) * x
    return jnp.where(_stable(probs, lims), closed, taylor)


def _icdf_fn(value, probs, lims):
    cut = _cut(probs, lims)
    closed = ((jnp.log1p(-cut + value * (2.0 * cut - 1.0)) - jnp.log1p(-cut))
              / (jnp.log(cut) - jnp.log1p(-cut)))
    return jnp.where(_stable(probs, lims), closed, value)


@sampler
def _continuous_bernoulli(key, shape, probs, lims):
    u = jax.random.uniform(key, shape, probs.dtype)
    return _icdf_fn(u, probs, lims)


@kernel("ContinuousBernoulliLogProb")
def _log_prob(value, logits, probs, lims):
    return value * logits - jax.nn.softplus(logits) + _log_norm(probs, lims)


_log_norm_op = kernel("ContinuousBernoulliLogNorm")(_log_norm)


@kernel("ContinuousBernoulliMean")
def _mean_op(probs, lims):
    return _mean(probs, lims)


@kernel("ContinuousBernoulliVariance")
def _variance(probs, lims):
    cut = _cut(probs, lims)
    closed = (cut * (cut - 1.0) / (1.0 - 2.0 * cut) ** 2
              + 1.0 / (jnp.log1p(-cut) - jnp.log(cut)) ** 2)
    x = (probs - 0.5) ** 2
    taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
    return jnp.where(_stable(probs, lims), closed, taylor)


@kernel("ContinuousBernoulliCdf")
def _cdf(value, probs, lims):
    cut = _cut(probs, lims)
    closed = (cut**value * (1.0 - cut) ** (1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
    inside = jnp.where(_stable(probs, lims), closed, value)
    return jnp.where(value <= 0.0, jnp.zeros_like(inside),
                     jnp.where(value >= 1.0, jnp.ones_like(inside), inside))


_icdf = kernel("ContinuousBernoulliIcdf")(_icdf_fn)


@kernel("ContinuousBernoulliEntropy")
def _entropy(probs, lims):
    log0, log1 = jnp.log1p(-probs), jnp.log(probs)
    return _mean(probs, lims) * (log0 - log1) - _log_norm(probs, lims) - log0


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli distribution on [0, 1] with parameter `probs` (or
    sigmoid(`logits`)); `lims` is the interval around 1/2 where Taylor expansions replace
    the unstable closed forms.

    Example::

        >>> m = ContinuousBernoulli(torch.tensor([0.3]))
        >>> m.rsample()  # in [0, 1], differentiable in probs
    """

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        one_of(probs, logits)
        given = probs if probs is not None else logits
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and not satisfied(self.arg_constraints["probs"],
                                                           self.probs):
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = tuple(float(v) for v in lims)
        batch_shape = () if isinstance(given, numbers.Number) else self._param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new ContinuousBernoulli whose batch shape is `batch_shape`, with the parameters
        broadcast to it; `_instance` is for subclasses.
        """
        new, batch_shape = self._expand_params(ContinuousBernoulli, batch_shape, _instance,
                                               {"probs": 0, "logits": 0})
        new._lims = self._lims
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return self._finish_expand(new, batch_shape)

    def _cont_bern_log_norm(self):
        """The log normalising constant, as a function of probs."""
        return _log_norm_op(self.probs, self._lims)

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return _mean_op(self.probs, self._lims)

    @property
    def stddev(self):
        """The standard deviation, with shape `batch_shape + event_shape`."""
        return torch.sqrt(self.variance)

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return _variance(self.probs, self._lims)

    @lazy_property
    def logits(self):
        """The log-odds of success, computed once from `probs` when that was given."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        """The probability of success, computed once from `logits` when that was given."""
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        """The shape of the parameter tensor (`probs` or `logits`)."""
        return self._param.size()

    def rsample(self, sample_shape=()):
        """A reparameterised draw of shape `sample_shape + batch_shape + event_shape`: gradients
        flow from it back to the parameters. Randomness comes from torchjax's global generator.
        """
        return _continuous_bernoulli(self._extended_shape(sample_shape), self.probs,
                                     self._lims)

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(as_value(value, self.probs), self.logits, self.probs, self._lims)

    def cdf(self, value):
        """The cumulative distribution function evaluated at `value`, elementwise over the batch.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _cdf(as_value(value, self.probs), self.probs, self._lims)

    def icdf(self, value):
        """The inverse of the CDF: the value whose cumulative probability is `value`."""
        return _icdf(as_value(value, self.probs), self.probs, self._lims)

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return _entropy(self.probs, self._lims)

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        lo, hi = self._lims[0] - 0.5, self._lims[1] - 0.5
        stable = (x <= lo) | (x > hi)
        cut = torch.where(stable, x, lo * torch.ones_like(x))
        closed = torch.log(torch.abs(torch.special.expm1(cut))) - torch.log(torch.abs(cut))
        taylor = 0.5 * x + torch.pow(x, 2) / 24.0 - torch.pow(x, 4) / 2880.0
        return torch.where(stable, closed, taylor)
