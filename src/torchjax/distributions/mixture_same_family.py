"""MixtureSameFamily: a mixture whose components are the batch of one distribution."""

from __future__ import annotations

import torchjax as torch

from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """Draw a component index from `mixture_distribution` (a Categorical over K), then a value
    from that component of `component_distribution`, whose rightmost batch dim is K.

    Example: a mixture of 5 univariate normals::

        >>> mix = Categorical(torch.ones(5))
        >>> comp = Normal(torch.randn(5), torch.rand(5))
        >>> gmm = MixtureSameFamily(mix, comp)
    """

    arg_constraints: dict = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of "
                             "torch.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of "
                             "torch.distributions.Distribution")
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        mix_batch = mixture_distribution.batch_shape
        comp_batch = component_distribution.batch_shape[:-1]
        for a, b in zip(reversed(mix_batch), reversed(comp_batch)):
            if a != 1 and b != 1 and a != b:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mix_batch}) is not "
                                 "compatible with `component_distribution."
                                 f"batch_shape`({comp_batch})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(comp_batch, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new MixtureSameFamily whose batch shape is `batch_shape`, with the parameters
        broadcast to it; `_instance` is for subclasses.
        """
        new = self._get_checked_instance(MixtureSameFamily, _instance)
        batch_shape = torch.Size(batch_shape)
        new._component_distribution = self._component_distribution.expand(
            batch_shape + (self._num_component,))
        new._mixture_distribution = self._mixture_distribution.expand(batch_shape)
        new._num_component = self._num_component
        new._event_ndims = self._event_ndims
        return self._finish_expand(new, batch_shape, new._component_distribution.event_shape)

    @constraints.dependent_property
    def support(self):
        """The constraint that values of this distribution satisfy (a
        `torchjax.distributions.constraints` object).
        """
        return constraints.MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        """The Categorical distribution that chooses the component."""
        return self._mixture_distribution

    @property
    def component_distribution(self):
        """The distribution of the components, with the component index as the rightmost batch
        dimension.
        """
        return self._component_distribution

    def _weights(self):
        """Mixture probabilities shaped to broadcast against component statistics: the
        component dim lines up with the components' last batch dim."""
        p = self._mixture_distribution.probs
        return p.reshape(tuple(p.shape) + (1,) * self._event_ndims)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        comp_mean = self._component_distribution.mean
        return (self._weights() * comp_mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        # the law of total variance: E[Var(X | k)] + Var(E[X | k])
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        w = self._weights()
        comp = self._component_distribution
        within = (w * comp.variance).sum(-1 - self._event_ndims)
        between = (w * (comp.mean - self._pad(self.mean)).pow(2.0)).sum(-1 - self._event_ndims)
        return within + between

    def cdf(self, x):
        """The cumulative distribution function evaluated at `value`, elementwise over the batch.
        """
        cdf_x = self._component_distribution.cdf(self._pad(x))
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self._component_distribution.log_prob(self._pad(x))
        log_weights = torch.log_softmax(self._mixture_distribution.logits, dim=-1)
        return torch.logsumexp(log_prob_x + log_weights, dim=-1)

    def sample(self, sample_shape=()):
        """A draw of shape `sample_shape + batch_shape + event_shape`, without gradient; the
        randomness comes from torchjax's global generator (`torchjax.manual_seed`).
        """
        with torch.no_grad():
            where = len(tuple(sample_shape)) + len(self.batch_shape)
            event = tuple(self.event_shape)
            index = self._mixture_distribution.sample(sample_shape)
            draws = self._component_distribution.sample(sample_shape)
            index = index.reshape(tuple(index.shape) + (1,) * (len(event) + 1))
            index = index.expand(tuple(index.shape[:where]) + (1,) + event)
            return torch.gather(draws, where, index).squeeze(where)

    def __repr__(self) -> str:
        return (f"MixtureSameFamily(\n  {self.mixture_distribution},\n  "
                f"{self.component_distribution})")
