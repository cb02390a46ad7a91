"""CosineSimilarity and PairwiseDistance."""

from __future__ import annotations

__all__ = ["PairwiseDistance", "CosineSimilarity"]

from .. import functional as F
from .module import Module


class PairwiseDistance(Module):
    """The p-norm of x1 - x2 + eps over the last dim."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        """Applies the PairwiseDistance layer to `x1` and `x2` (see the class description). Call
        the module (`m(x)`), not `forward`, so hooks run.
        """
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    """Cosine of the angle between x1 and x2 along dim."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        """Applies the CosineSimilarity layer to `x1` and `x2` (see the class description). Call
        the module (`m(x)`), not `forward`, so hooks run.
        """
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
