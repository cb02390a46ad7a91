"""TransformedDistribution: the distribution of t(x) for x drawn from a base distribution."""

from __future__ import annotations

import torchjax as torch

from . import constraints
from .distribution import Distribution
from .independent import Independent
from .transforms import ComposeTransform, Transform
from .utils import sum_rightmost

__all__ = ["TransformedDistribution"]


class TransformedDistribution(Distribution):
    """Draws `x` from `base_distribution` and applies `transforms` in order. log_prob uses
    the change of variables: log p(y) = log p_base(x) - sum of log|det dt/dx| along the way.

    Example::

        >>> # a log-normal distribution
        >>> d = TransformedDistribution(Normal(0.0, 1.0), [ExpTransform()])
    """

    arg_constraints: dict = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        chain = ComposeTransform(self.transforms)
        if len(base_shape) < chain.domain.event_dim:
            raise ValueError("base_distribution needs to have shape with size at least "
                             f"{chain.domain.event_dim}, but got {base_shape}.")
        forward_shape = chain.forward_shape(base_shape)
        expanded = chain.inverse_shape(forward_shape)
        if base_shape != expanded:
            # a transform with batched parameters widens the base distribution's batch
            base_distribution = base_distribution.expand(
                expanded[:len(expanded) - base_event_dim])
        extra = chain.domain.event_dim - base_event_dim
        if extra > 0:
            base_distribution = Independent(base_distribution, extra)
        self.base_dist = base_distribution
        event_dim = max(chain.codomain.event_dim,
                        base_event_dim + chain.codomain.event_dim - chain.domain.event_dim)
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new TransformedDistribution whose batch shape is `batch_shape`, with the parameters
        broadcast to it; `_instance` is for subclasses.
        """
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = torch.Size(batch_shape)
        shape = batch_shape + self.event_shape
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        new.base_dist = self.base_dist.expand(shape[:len(shape) - len(self.base_dist.event_shape)])
        new.transforms = self.transforms
        return self._finish_expand(new, batch_shape, self.event_shape)

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        """The constraint that values of this distribution satisfy (a
        `torchjax.distributions.constraints` object).
        """
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support,
                                              len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self):
        """Whether `rsample` is available (a reparameterised sampler exists)."""
        return self.base_dist.has_rsample

    def sample(self, sample_shape=()):
        """A draw of shape `sample_shape + batch_shape + event_shape`, without gradient; the
        randomness comes from torchjax's global generator (`torchjax.manual_seed`).
        """
        with torch.no_grad():
            x = self.base_dist.sample(sample_shape)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape=()):
        """A reparameterised draw of shape `sample_shape + batch_shape + event_shape`: gradients
        flow from it back to the parameters. Randomness comes from torchjax's global generator.
        """
        x = self.base_dist.rsample(sample_shape)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        total = 0.0
        y = value
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            total = total - sum_rightmost(t.log_abs_det_jacobian(x, y),
                                          event_dim - t.domain.event_dim)
            y = x
        return total + sum_rightmost(self.base_dist.log_prob(y),
                                     event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        """A decreasing chain turns the base cdf into a survival function: flip it."""
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        """The cumulative distribution function evaluated at `value`, elementwise over the batch.
        """
        for t in reversed(self.transforms):
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        """The inverse of the CDF: the value whose cumulative probability is `value`."""
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for t in self.transforms:
            value = t(value)
        return value
