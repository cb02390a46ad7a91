"""Categorical(probs | logits): one of K categories, drawn as its index."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp

import torchjax as torch

from . import constraints
from ._jax import kernel, sampler
from .distribution import Distribution
from .utils import lazy_property, logits_to_probs, one_of, probs_to_logits

__all__ = ["Categorical"]


@sampler
def _categorical(key, shape, probs):
    # log(0) = -inf: a category of probability zero is never drawn (clamped logits would
    # give it a tiny chance)
    return jax.random.categorical(key, jnp.log(probs), axis=-1, shape=shape).astype(jnp.int64)


@kernel("CategoricalLogProb")
def _log_prob(value, logits):
    idx = value.astype(jnp.int64)[..., None]
    shape = jnp.broadcast_shapes(idx.shape[:-1], logits.shape[:-1])
    logits = jnp.broadcast_to(logits, shape + logits.shape[-1:])
    idx = jnp.broadcast_to(idx, shape + (1,))
    return jnp.take_along_axis(logits, idx, axis=-1)[..., 0]


@kernel("CategoricalEntropy")
def _entropy(logits, probs):
    # a -inf logit has probability 0: clamping it keeps 0 * logit at 0 instead of nan
    logits = jnp.maximum(logits, jnp.finfo(logits.dtype).min)
    return -(logits * probs).sum(-1)


class Categorical(Distribution):
    """A draw is an index in [0, K) with probability `probs[..., i]` (normalised over the
    last dim) or softmax(`logits`)[..., i]. The last dim of the parameter is the category
    dim; the others are the batch.

    Example::

        >>> m = Categorical(torch.tensor([0.25, 0.25, 0.25, 0.25]))
        >>> m.sample()  # one of 0, 1, 2, 3
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        one_of(probs, logits)
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else ()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new Categorical whose batch shape is `batch_shape`, with the parameters broadcast to
        it; `_instance` is for subclasses.
        """
        new, batch_shape = self._expand_params(Categorical, batch_shape, _instance,
                                               {"probs": 1, "logits": 1})
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        new._num_events = self._num_events
        return self._finish_expand(new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        """The constraint that values of this distribution satisfy (a
        `torchjax.distributions.constraints` object).
        """
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        """The normalized log-probabilities of the categories (log-softmax of what was given),
        computed once.
        """
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        """The probabilities of the categories, normalized to sum to 1, computed once from `logits`
        when those were given.
        """
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        """The shape of the parameter tensor (`probs` or `logits`)."""
        return self._param.size()

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return torch.full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return torch.full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    def sample(self, sample_shape=()):
        """A draw of shape `sample_shape + batch_shape + event_shape`, without gradient; the
        randomness comes from torchjax's global generator (`torchjax.manual_seed`).
        """
        with torch.no_grad():
            return _categorical(self._extended_shape(sample_shape), self.probs.detach())

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
        values = torch.arange(self._num_events, dtype=torch.long)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values
