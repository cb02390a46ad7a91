"""LogNormal(loc, scale): exp of a Normal(loc, scale)."""

from __future__ import annotations

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform

__all__ = ["LogNormal"]


class LogNormal(TransformedDistribution):
    """X = exp(Y) with Y ~ Normal(loc, scale).

    Example::

        >>> m = LogNormal(torch.tensor([0.0]), torch.tensor([1.0]))
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new LogNormal whose batch shape is `batch_shape`, with the parameters broadcast to it;
        `_instance` is for subclasses.
        """
        new = self._get_checked_instance(LogNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        """The location parameter of the underlying normal distribution."""
        return self.base_dist.loc

    @property
    def scale(self):
        """The scale parameter of the underlying distribution this one is built from."""
        return self.base_dist.scale

    @property
    def mean(self):
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        s2 = self.scale.pow(2)
        return s2.expm1() * (2 * self.loc + s2).exp()

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return self.base_dist.entropy() + self.loc
