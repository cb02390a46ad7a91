"""Beta(concentration1, concentration0): a distribution on [0, 1]."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy import special as jsp

from . import constraints
from ._jax import clamp_min, float_dtype, kernel, sampler, tiny, xlogy
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Beta"]


@sampler
def _beta(key, shape, c1, c0):
    # jax.random.beta works from log-space gamma draws: differentiable in both
    # concentrations by implicit reparameterisation
    x = jax.random.beta(key, c1, c0, shape, float_dtype(c1, c0))
    return x + jax.lax.stop_gradient(jnp.maximum(x, tiny(x.dtype)) - x)


@kernel("BetaLogProb")
def _log_prob(value, c1, c0):
    return (xlogy(c1 - 1.0, value) + xlogy(c0 - 1.0, 1.0 - value)
            + jsp.gammaln(c1 + c0) - jsp.gammaln(c1) - jsp.gammaln(c0))


@kernel("BetaEntropy")
def _entropy(c1, c0):
    total = c1 + c0
    return (jsp.gammaln(c1) + jsp.gammaln(c0) - jsp.gammaln(total)
            - (2.0 - total) * jsp.digamma(total)
            - (c1 - 1.0) * jsp.digamma(c1) - (c0 - 1.0) * jsp.digamma(c0))


@kernel("BetaMode")
def _mode(c1, c0):
    a, b = clamp_min(c1 - 1, 0.0), clamp_min(c0 - 1, 0.0)
    # both below 1: the density peaks at both ends; PyTorch reports 1. The safe denominator
    # keeps the unused 0/0 branch from putting nan into the gradient.
    both = (c1 < 1) & (c0 < 1)
    return jnp.where(both, jnp.ones_like(a), a / jnp.where(both, 1.0, a + b))


@kernel("BetaVariance")
def _variance(c1, c0):
    total = c1 + c0
    return c1 * c0 / (total**2 * (total + 1))


class Beta(ExponentialFamily):
    """The beta distribution: density proportional to x^(c1 - 1) (1 - x)^(c0 - 1).

    Example::

        >>> m = Beta(torch.tensor([0.5]), torch.tensor([0.5]))
        >>> m.rsample()  # in [0, 1], differentiable in both concentrations
    """

    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        # kept under private names, so the repr shows no parameters, as PyTorch's (whose
        # concentrations are views of an inner Dirichlet's) does
        self._c1, self._c0 = broadcast_all(concentration1, concentration0)
        super().__init__(self._c1.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new Beta whose batch shape is `batch_shape`, with the parameters broadcast to it;
        `_instance` is for subclasses.
        """
        new, batch_shape = self._expand_params(Beta, batch_shape, _instance,
                                               {"_c1": 0, "_c0": 0})
        return self._finish_expand(new, batch_shape)

    @property
    def concentration1(self):
        """The first concentration parameter (alpha)."""
        return self._c1

    @property
    def concentration0(self):
        """The second concentration parameter (beta)."""
        return self._c0

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return self._c1 / (self._c1 + self._c0)

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return _mode(self._c1, self._c0)

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return _variance(self._c1, self._c0)

    def rsample(self, sample_shape=()):
        """A reparameterised draw of shape `sample_shape + batch_shape + event_shape`: gradients
        flow from it back to the parameters. Randomness comes from torchjax's global generator.
        """
        return _beta(self._extended_shape(sample_shape), self._c1, self._c0)

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(value, self._c1, self._c0)

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return _entropy(self._c1, self._c0)

    @property
    def _natural_params(self):
        return self._c1, self._c0

    def _log_normalizer(self, x, y):
        return x.lgamma() + y.lgamma() - (x + y).lgamma()
