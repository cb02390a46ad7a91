"""Multinomial(total_count, probs | logits): category counts over total_count draws."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy import special as jsp

import torchjax as torch

from . import constraints
from ._jax import kernel, sampler
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import float_value

__all__ = ["Multinomial"]


@sampler
def _multinomial(key, shape, total_count, probs):
    # counts of total_count categorical draws, accumulated one draw at a time so memory
    # stays at one count vector whatever total_count is
    logp = jnp.log(probs)

    def add(i, counts):
        idx = jax.random.categorical(jax.random.fold_in(key, i), logp, shape=shape[:-1])
        return counts + jax.nn.one_hot(idx, shape[-1], dtype=counts.dtype)

    return jax.lax.fori_loop(0, total_count, add, jnp.zeros(shape, probs.dtype))


@kernel("MultinomialLogProb")
def _log_prob(value, logits):
    shape = jnp.broadcast_shapes(value.shape, logits.shape)
    value, logits = jnp.broadcast_to(value, shape), jnp.broadcast_to(logits, shape)
    # a category of probability 0 that was never drawn contributes 0 * log(0) = 0
    logits = jnp.where((value == 0) & (logits == -jnp.inf), 0.0, logits)
    return (jsp.gammaln(value.sum(-1) + 1) - jsp.gammaln(value + 1).sum(-1)
            + (logits * value).sum(-1))


class Multinomial(Distribution):
    """Counts of each of K categories in `total_count` independent Categorical draws.
    total_count must be a Python int (one count for the whole batch).

    Example::

        >>> m = Multinomial(100, torch.tensor([1.0, 1.0, 1.0, 1.0]))
        >>> m.sample()  # e.g. tensor([21., 24., 30., 25.])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new Multinomial whose batch shape is `batch_shape`, with the parameters broadcast to
        it; `_instance` is for subclasses.
        """
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = torch.Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = self._binomial.expand(batch_shape + self._event_shape)
        return self._finish_expand(new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        """The constraint that values of this distribution satisfy (a
        `torchjax.distributions.constraints` object).
        """
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        """The log-odds (log-probabilities for a categorical) parameter, computed from `probs` if
        that was given.
        """
        return self._categorical.logits

    @property
    def probs(self):
        """The probability parameter, computed from `logits` if that was given."""
        return self._categorical.probs

    @property
    def param_shape(self):
        """The shape of the parameter tensor (`probs` or `logits`)."""
        return self._categorical.param_shape

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return self.probs * self.total_count

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        """A draw of shape `sample_shape + batch_shape + event_shape`, without gradient; the
        randomness comes from torchjax's global generator (`torchjax.manual_seed`).
        """
        with torch.no_grad():
            return _multinomial(self._extended_shape(sample_shape), self.total_count,
                                self.probs.detach())

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(float_value(value, self.logits), self.logits)

    def entropy(self):
        # H = n H(categorical) - log n! + sum_i E[log x_i!], each x_i ~ Binomial(n, p_i)
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        n = torch.tensor(float(self.total_count), dtype=self.probs.dtype)
        head = n * self._categorical.entropy() - torch.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        probs = torch.exp(self._binomial.log_prob(support))
        return head + (probs * torch.lgamma(support + 1)).sum([0, -1])
