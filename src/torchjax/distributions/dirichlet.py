"""Dirichlet(concentration): a distribution over the probability simplex."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy import special as jsp

from . import constraints
from ._jax import clamp_min, float_dtype, kernel, sampler, tiny, xlogy
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


@sampler
def _dirichlet(key, shape, concentration):
    # jax.random.dirichlet normalises log-space gamma draws: stable for small concentrations
    # and differentiable in them (implicit reparameterisation)
    x = jax.random.dirichlet(key, concentration, shape[:-1], float_dtype(concentration))
    return x + jax.lax.stop_gradient(jnp.maximum(x, tiny(x.dtype)) - x)


@kernel("DirichletLogProb")
def _log_prob(value, concentration):
    c = concentration
    return (xlogy(c - 1.0, value).sum(-1) + jsp.gammaln(c.sum(-1))
            - jsp.gammaln(c).sum(-1))


@kernel("DirichletEntropy")
def _entropy(concentration):
    c = concentration
    k = c.shape[-1]
    total = c.sum(-1)
    return (jsp.gammaln(c).sum(-1) - jsp.gammaln(total) - (k - total) * jsp.digamma(total)
            - ((c - 1.0) * jsp.digamma(c)).sum(-1))


@kernel("DirichletMean")
def _mean(concentration):
    return concentration / concentration.sum(-1, keepdims=True)


@kernel("DirichletVariance")
def _variance(concentration):
    c = concentration
    total = c.sum(-1, keepdims=True)
    return c * (total - c) / (total**2 * (total + 1))


@kernel("DirichletMode")
def _mode(concentration):
    c = concentration
    above = clamp_min(c - 1, 0.0)
    # with every concentration below 1 the density peaks at a vertex; PyTorch picks the
    # first one (the argmax of its 0/0 row). The safe denominator keeps that 0/0 out of the
    # gradient.
    at_vertex = (c < 1).all(-1, keepdims=True)
    mode = above / jnp.where(at_vertex, 1.0, above.sum(-1, keepdims=True))
    vertex = jax.nn.one_hot(jnp.zeros(c.shape[:-1], jnp.int32), c.shape[-1], dtype=mode.dtype)
    return jnp.where(at_vertex, vertex, mode)


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution; `concentration`'s last dim is the event (simplex) dim.

    Example::

        >>> m = Dirichlet(torch.tensor([0.5, 0.5]))
        >>> m.sample()  # a probability vector of length 2
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new Dirichlet whose batch shape is `batch_shape`, with the parameters broadcast to it;
        `_instance` is for subclasses.
        """
        new, batch_shape = self._expand_params(Dirichlet, batch_shape, _instance,
                                               {"concentration": 1})
        return self._finish_expand(new, batch_shape)

    def rsample(self, sample_shape=()):
        """A reparameterised draw of shape `sample_shape + batch_shape + event_shape`: gradients
        flow from it back to the parameters. Randomness comes from torchjax's global generator.
        """
        return _dirichlet(self._extended_shape(sample_shape), self.concentration)

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(value, self.concentration)

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return _mean(self.concentration)

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return _mode(self.concentration)

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return _variance(self.concentration)

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return _entropy(self.concentration)

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()
