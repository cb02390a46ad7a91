"""RelaxedOneHotCategorical(temperature, probs | logits): a continuous relaxation of
OneHotCategorical on the simplex (the Concrete / Gumbel-softmax distribution)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy import special as jsp

import torchjax as torch

from . import constraints
from ._jax import eps, kernel, sampler
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


@sampler
def _exp_relaxed_categorical(key, shape, temperature, logits):
    e = eps(logits.dtype)
    u = jnp.clip(jax.random.uniform(key, shape, logits.dtype), e, 1 - e)
    scores = (logits - jnp.log(-jnp.log(u))) / temperature
    return scores - jsp.logsumexp(scores, axis=-1, keepdims=True)


@kernel("ExpRelaxedCategoricalLogProb")
def _log_prob(value, temperature, logits):
    k = logits.shape[-1]
    log_scale = jsp.gammaln(jnp.full_like(temperature, float(k))) + (k - 1) * jnp.log(
        temperature)
    score = logits - value * temperature
    score = (score - jsp.logsumexp(score, axis=-1, keepdims=True)).sum(-1)
    return score + log_scale


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical draw: log-softmax((logits + gumbel) / T)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector  # in truth a K-1 dimensional submanifold of it
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = torch.Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        return self._finish_expand(new, batch_shape)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def _temperature(self):
        return torch.as_tensor(self.temperature, dtype=self.logits.dtype)

    def rsample(self, sample_shape=()):
        return _exp_relaxed_categorical(self._extended_shape(sample_shape),
                                        self._temperature(), self.logits)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(value, self._temperature(), self.logits)


class RelaxedOneHotCategorical(TransformedDistribution):
    """exp of an ExpRelaxedCategorical: points of the simplex that approach one-hot vectors
    as the temperature goes to 0, with reparameterised samples.

    Example::

        >>> m = RelaxedOneHotCategorical(torch.tensor([2.2]),
        ...                              torch.tensor([0.1, 0.2, 0.3, 0.4]))
        >>> m.rsample()
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new RelaxedOneHotCategorical whose batch shape is `batch_shape`, with the parameters
        broadcast to it; `_instance` is for subclasses.
        """
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
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
