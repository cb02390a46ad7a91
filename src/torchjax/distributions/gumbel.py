"""Gumbel(loc, scale): the type-I extreme value distribution."""

from __future__ import annotations

import math

import jax.numpy as jnp

import torchjax as torch

from . import constraints
from ._jax import kernel
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import as_value, broadcast_all, euler_constant

__all__ = ["Gumbel"]


@kernel("GumbelLogProb")
def _log_prob(value, loc, scale):
    z = (loc - value) / scale
    return (z - jnp.exp(z)) - jnp.log(scale)


class Gumbel(TransformedDistribution):
    """loc - scale * log(-log(U)) for U ~ Uniform(0, 1) (kept inside the open interval).

    Example::

        >>> m = Gumbel(torch.tensor([1.0]), torch.tensor([2.0]))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        info = torch.finfo(self.loc.dtype)
        base = Uniform(torch.full_like(self.loc, info.tiny),
                       torch.full_like(self.loc, 1 - info.eps), validate_args=validate_args)
        # u -> -log u -> log(-log u) -> loc - scale * log(-log u)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-torch.ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new Gumbel whose batch shape is `batch_shape`, with the parameters broadcast to it;
        `_instance` is for subclasses.
        """
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        """Log density (or log mass for a discrete distribution) of `value`; `value` broadcasts
        against `batch_shape + event_shape` and the event dimensions are summed out.
        """
        if self._validate_args:
            self._validate_sample(value)
        return _log_prob(as_value(value, self.loc), self.loc, self.scale)

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return self.loc

    @property
    def stddev(self):
        """The standard deviation, with shape `batch_shape + event_shape`."""
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        return self.stddev.pow(2)

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return self.scale.log() + (1 + euler_constant)
