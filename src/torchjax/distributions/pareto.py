"""Pareto(scale, alpha): the power-law distribution on [scale, inf)."""

from __future__ import annotations

from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .utils import broadcast_all

__all__ = ["Pareto"]


class Pareto(TransformedDistribution):
    """scale * exp(E) for E ~ Exponential(alpha): density alpha scale^alpha / x^(alpha + 1).

    Example::

        >>> m = Pareto(torch.tensor([1.0]), torch.tensor([1.0]))
    """

    arg_constraints = {"alpha": constraints.positive, "scale": constraints.positive}

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        base = Exponential(self.alpha, validate_args=validate_args)
        super().__init__(base, [ExpTransform(), AffineTransform(loc=0, scale=self.scale)],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new Pareto whose batch shape is `batch_shape`, with the parameters broadcast to it;
        `_instance` is for subclasses.
        """
        new = self._get_checked_instance(Pareto, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.alpha = self.alpha.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        # infinite for alpha <= 1: the clamp makes that a division by zero
        """The mean, with shape `batch_shape + event_shape` (NaN or inf where it does not exist).
        """
        a = self.alpha.clamp(min=1)
        return a * self.scale / (a - 1)

    @property
    def mode(self):
        """The mode (most likely value), with shape `batch_shape + event_shape`."""
        return self.scale

    @property
    def variance(self):
        # infinite for alpha <= 2, as above
        """The variance, with shape `batch_shape + event_shape` (NaN or inf where it does not
        exist).
        """
        a = self.alpha.clamp(min=2)
        return self.scale.pow(2) * a / ((a - 1).pow(2) * (a - 2))

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        """The constraint that values of this distribution satisfy (a
        `torchjax.distributions.constraints` object).
        """
        return constraints.greater_than_eq(self.scale)

    def entropy(self):
        """The entropy in nats, one value per batch element (shape `batch_shape`)."""
        return (self.scale / self.alpha).log() + (1 + self.alpha.reciprocal())
