"""OneHotCategorical(probs | logits): a Categorical drawn as a one-hot vector."""

from __future__ import annotations

import torchjax as torch
from torchjax.nn import functional as F

from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(Distribution):
    """A Categorical whose draws are one-hot vectors of length K (the event shape).

    Example::

        >>> m = OneHotCategorical(torch.tensor([0.25, 0.25, 0.25, 0.25]))
        >>> m.sample()  # e.g. tensor([0., 0., 1., 0.])
    """

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new OneHotCategorical whose batch shape is `batch_shape`, with the parameters
        broadcast to it; `_instance` is for subclasses.
        """
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = torch.Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        return self._finish_expand(new, batch_shape)

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        """The probability parameter, computed from `logits` if that was given."""
        return self._categorical.probs

    @property
    def logits(self):
        """The log-odds (log-probabilities for a categorical) parameter, computed from `probs` if
        that was given.
        """
        return self._categorical.logits

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return self._categorical.probs

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        probs = self._categorical.probs
        return F.one_hot(probs.argmax(dim=-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        p = self._categorical.probs
        return p * (1 - p)

    @property
    def param_shape(self):
        """The shape of the parameter tensor (`probs` or `logits`)."""
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        """A draw of shape `sample_shape + batch_shape + event_shape`, without gradient; the
        randomness comes from torchjax's global generator (`torchjax.manual_seed`).
        """
        probs = self._categorical.probs
        index = self._categorical.sample(sample_shape)
        return F.one_hot(index, self._categorical._num_events).to(probs.dtype)

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        """Every value in the finite support, stacked along a new leading dimension; with
        `expand=True` each is broadcast to the batch shape.
        """
        n = self.event_shape[0]
        values = torch.eye(n, dtype=self._param.dtype)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """OneHotCategorical whose rsample passes gradients straight through the one-hot draw to
    the probabilities (the straight-through estimator: a biased but useful gradient)."""

    has_rsample = True

    def rsample(self, sample_shape=()):
        """A reparameterised draw of shape `sample_shape + batch_shape + event_shape`: gradients
        flow from it back to the parameters. Randomness comes from torchjax's global generator.
        """
        draw = self.sample(sample_shape)
        probs = self._categorical.probs
        return draw + (probs - probs.detach())
