"""nn.functional embedding and ranking losses: hinge_embedding, cosine_embedding,
margin_ranking and the triplet margin losses."""

from __future__ import annotations

import numpy as np

from ..._dispatch import FUNCTIONS as _F
from ..._dispatch import _explain_broadcast
from .loss import (
    _REDUCTIONS,
    _reduced,
    _reduction,
    _sizes,
)

__all__ = [
    "cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss",
    "triplet_margin_loss", "triplet_margin_with_distance_loss",
]


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """input where target is 1, max(0, margin - input) where target is -1."""
    reduction = _reduction(reduction, size_average, reduce)
    # target only selects between terms: PyTorch gives it no gradient
    return _reduced(_F["hinge_embedding_loss"](input, target.detach(), margin), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(input1, input2) for target 1, max(0, cos - margin) for target -1."""
    reduction = _reduction(reduction, size_average, reduce)
    td = target.dim()
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = 2 if td == 1 else 1
    if input1.dim() != want:
        raise RuntimeError(f"{td}D target tensor expects {want}D input tensors, but found "
                           f"inputs with sizes {_sizes(input1.shape)} and "
                           f"{_sizes(input2.shape)}.")
    _explain_broadcast([tuple(input1.shape), tuple(input2.shape)])
    if td == 1:
        rows = np.broadcast_shapes(input1.shape[:1], input2.shape[:1])
        _explain_broadcast([tuple(target.shape), rows])
    out = _F["cosine_embedding_loss"](input1, input2, target.detach(), margin)
    return _reduced(out, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -target * (input1 - input2) + margin)."""
    reduction = _reduction(reduction, size_average, reduce)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.size()}, input2: {input2.size()}, "
                           f"target: {target.size()} ")
    _explain_broadcast([tuple(input1.shape), tuple(input2.shape)])
    diff = np.broadcast_shapes(tuple(input1.shape), tuple(input2.shape))
    _explain_broadcast([tuple(target.shape), diff])
    return _reduced(_F["margin_ranking_loss"](input1, input2, target, margin), reduction)


def _check_triplet_dims(anchor, positive, negative):
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not a == p == n:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a}D, positive {p}D, "
                           f"and negative {n}D inputs")


def _check_margin(margin):
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm distance."""
    reduction = _reduction(reduction, size_average, reduce)
    _check_margin(margin)
    _check_triplet_dims(anchor, positive, negative)
    out = _F["triplet_margin_loss"](anchor, positive, negative, margin, p, eps, swap)
    return _reduced(out, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """The triplet margin loss with any distance function (pairwise_distance by default)."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _check_margin(margin)
    _check_triplet_dims(anchor, positive, negative)
    if distance_function is None:
        # PyTorch's default, torch.pairwise_distance (p=2, eps=1e-6), is the triplet row's
        out = _F["triplet_margin_loss"](anchor, positive, negative, margin, 2.0, 1e-6, swap)
        return _reduced(out, reduction)
    d_pos = distance_function(anchor, positive)
    d_neg = distance_function(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(distance_function(positive, negative))
    return _reduced((margin + d_pos - d_neg).clamp_min(0), reduction)
