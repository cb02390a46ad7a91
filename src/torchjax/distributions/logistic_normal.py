"""LogisticNormal(loc, scale): a Normal vector mapped onto the simplex by stick-breaking."""

from __future__ import annotations

from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """StickBreakingTransform of Normal(loc, scale): draws of length K + 1 for parameters of
    length K (the last dim is the event).

    Example::

        >>> m = LogisticNormal(torch.tensor([0.0, 0.0]), torch.tensor([1.0, 1.0]))
        >>> m.sample()  # a probability vector of length 3
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])  # stick-breaking needs a vector
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        """A new LogisticNormal whose batch shape is `batch_shape`, with the parameters broadcast
        to it; `_instance` is for subclasses.
        """
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        """The location parameter of the underlying normal distribution."""
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        """The scale parameter of the underlying distribution this one is built from."""
        return self.base_dist.base_dist.scale
