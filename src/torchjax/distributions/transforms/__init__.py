"""Transforms between spaces: y = t(x), its inverse, and log|dy/dx| for change of variables
(TransformedDistribution) and for mapping unconstrained parameters onto constraints
(`biject_to`, `transform_to`)."""

from ._base import (
    CatTransform,
    ComposeTransform,
    IndependentTransform,
    ReshapeTransform,
    StackTransform,
    Transform,
    _InverseTransform,
    identity_transform,
)
from ._elementwise import (
    AbsTransform,
    AffineTransform,
    CumulativeDistributionTransform,
    ExpTransform,
    PowerTransform,
    SigmoidTransform,
    SoftplusTransform,
    TanhTransform,
)
from ._structured import (
    CorrCholeskyTransform,
    LowerCholeskyTransform,
    PositiveDefiniteTransform,
    SoftmaxTransform,
    StickBreakingTransform,
)

__all__ = [
    "AbsTransform",
    "AffineTransform",
    "CatTransform",
    "ComposeTransform",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform",
    "ExpTransform",
    "IndependentTransform",
    "LowerCholeskyTransform",
    "PositiveDefiniteTransform",
    "PowerTransform",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "SoftplusTransform",
    "StackTransform",
    "StickBreakingTransform",
    "TanhTransform",
    "Transform",
    "_InverseTransform",
    "identity_transform",
]
