"""Independent: reinterpret some batch dims of a distribution as event dims."""

from __future__ import annotations

import torchjax as torch

from . import constraints
from .distribution import Distribution
from .utils import sum_rightmost

__all__ = ["Independent"]


class Independent(Distribution):
    """`base_distribution` with its `reinterpreted_batch_ndims` rightmost batch dims moved into
    the event: log_prob and entropy sum over them.

    Example: a diagonal Gaussian over vectors, `Independent(Normal(loc, scale), 1)` with loc
    of shape (3,), has batch_shape () and event_shape (3,).
    """

    arg_constraints: dict = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims: int, validate_args=None):
        n_batch = len(base_distribution.batch_shape)
        if reinterpreted_batch_ndims > n_batch:
            raise ValueError("Expected reinterpreted_batch_ndims <= "
                             "len(base_distribution.batch_shape), actual "
                             f"{reinterpreted_batch_ndims} vs {n_batch}")
        shape = base_distribution.batch_shape + base_distribution.event_shape
        event_dim = reinterpreted_batch_ndims + len(base_distribution.event_shape)
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(shape[:len(shape) - event_dim], shape[len(shape) - event_dim:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new Independent whose batch shape is `batch_shape`, with the parameters broadcast to
        it; `_instance` is for subclasses.
        """
        new = self._get_checked_instance(Independent, _instance)
        batch_shape = torch.Size(batch_shape)
        moved = self.event_shape[:self.reinterpreted_batch_ndims]
        new.base_dist = self.base_dist.expand(batch_shape + moved)
        new.reinterpreted_batch_ndims = self.reinterpreted_batch_ndims
        return self._finish_expand(new, batch_shape)

    @property
    def has_rsample(self):
        """Whether `rsample` is available (a reparameterised sampler exists)."""
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        """Whether `enumerate_support` is available (the base distribution is finite and discrete).
        """
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        """The constraint that values of this distribution satisfy (a
        `torchjax.distributions.constraints` object).
        """
        base = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            return constraints.independent(base, self.reinterpreted_batch_ndims)
        return base

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return self.base_dist.mean

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return self.base_dist.mode

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return self.base_dist.variance

    def sample(self, sample_shape=()):
        """A draw of shape `sample_shape + batch_shape + event_shape`, without gradient; the
        randomness comes from torchjax's global generator (`torchjax.manual_seed`).
        """
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=()):
        """A reparameterised draw of shape `sample_shape + batch_shape + event_shape`: gradients
        flow from it back to the parameters. Randomness comes from torchjax's global generator.
        """
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        """Every value in the finite support, stacked along a new leading dimension; with
        `expand=True` each is broadcast to the batch shape.
        """
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self) -> str:
        return f"Independent({self.base_dist}, {self.reinterpreted_batch_ndims})"
