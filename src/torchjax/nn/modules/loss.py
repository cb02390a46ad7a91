"""Loss layers: each stores its options and calls the nn.functional loss of the same name."""

from __future__ import annotations

__all__ = [
    "BCELoss", "BCEWithLogitsLoss", "CTCLoss", "CosineEmbeddingLoss", "CrossEntropyLoss",
    "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss",
    "MSELoss", "MarginRankingLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss",
    "MultiMarginLoss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "SmoothL1Loss",
    "SoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
]

import warnings

from .. import functional as F
from .._functional.loss import legacy_reduction
from .distance import PairwiseDistance
from .module import Module


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = legacy_reduction(size_average, reduce)
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class L1Loss(_Loss):
    """Mean absolute error."""

    def forward(self, input, target):
        """Computes L1Loss from `input` and `target`, reduced as `reduction` says. Call the module,
        not `forward`, so hooks run.
        """
        return F.l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """Mean squared error."""

    def forward(self, input, target):
        """Computes MSELoss from `input` and `target`, reduced as `reduction` says. Call the
        module, not `forward`, so hooks run.
        """
        return F.mse_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Squared error below beta, absolute error above."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 beta: float = 1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        """Computes SmoothL1Loss from `input` and `target`, reduced as `reduction` says. Call the
        module, not `forward`, so hooks run.
        """
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Squared error below delta, delta-scaled absolute error above."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0):
        if not isinstance(delta, (float, int)):
            raise TypeError(f"delta must be a float or int, got: {type(delta)}")
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        """Computes HuberLoss from `input` and `target`, reduced as `reduction` says. Call the
        module, not `forward`, so hooks run.
        """
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of log-probabilities."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        """Computes NLLLoss from `input` and `target`, reduced as `reduction` says. Call the
        module, not `forward`, so hooks run.
        """
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """Deprecated alias of NLLLoss."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean"):
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in "
                      "replacement and see https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss "
                      "for more details.", FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits against class indices or class probabilities."""

    def __init__(self, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
                 reduction: str = "mean", label_smoothing: float = 0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        """Computes CrossEntropyLoss from `input` and `target`, reduced as `reduction` says. Call
        the module, not `forward`, so hooks run.
        """
        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities."""

    def forward(self, input, target):
        """Computes BCELoss from `input` and `target`, reduced as `reduction` says. Call the
        module, not `forward`, so hooks run.
        """
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits, with optional weight and pos_weight buffers."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction: str = "mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        """Computes BCEWithLogitsLoss from `input` and `target`, reduced as `reduction` says. Call
        the module, not `forward`, so hooks run.
        """
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of target from input log-probabilities."""

    def __init__(self, size_average=None, reduce=None, reduction: str = "mean",
                 log_target: bool = False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        """Computes KLDivLoss from `input` and `target`, reduced as `reduction` says. Call the
        module, not `forward`, so hooks run.
        """
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class PoissonNLLLoss(_Loss):
    """Negative log-likelihood of a Poisson-distributed target."""

    def __init__(self, log_input: bool = True, full: bool = False, size_average=None,
                 eps: float = 1e-8, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input, target):
        """Computes PoissonNLLLoss from `log_input` and `target`, reduced as `reduction` says. Call
        the module, not `forward`, so hooks run.
        """
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Negative log-likelihood of a Gaussian target with predicted mean and variance."""

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean"):
        super().__init__(None, None, reduction)
        self.full = full
        self.eps = eps

    def forward(self, input, target, var):
        """Computes GaussianNLLLoss from `input`, `target` and `var`, reduced as `reduction` says.
        Call the module, not `forward`, so hooks run.
        """
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """input where target is 1, max(0, margin - input) where target is -1."""

    def __init__(self, margin: float = 1.0, size_average=None, reduce=None,
                 reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        """Computes HingeEmbeddingLoss from `input` and `target`, reduced as `reduction` says. Call
        the module, not `forward`, so hooks run.
        """
        return F.hinge_embedding_loss(input, target, margin=self.margin,
                                      reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """Multi-label hinge loss against lists of class indices."""

    def forward(self, input, target):
        """Computes MultiLabelMarginLoss from `input` and `target`, reduced as `reduction` says.
        Call the module, not `forward`, so hooks run.
        """
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """Two-class logistic loss."""

    def forward(self, input, target):
        """Computes SoftMarginLoss from `input` and `target`, reduced as `reduction` says. Call the
        module, not `forward`, so hooks run.
        """
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Multi-label one-versus-all logistic loss."""

    def forward(self, input, target):
        """Computes MultiLabelSoftMarginLoss from `input` and `target`, reduced as `reduction`
        says. Call the module, not `forward`, so hooks run.
        """
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                             reduction=self.reduction)


class CosineEmbeddingLoss(_Loss):
    """Cosine similarity loss for similar (1) and dissimilar (-1) pairs."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None,
                 reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        """Computes CosineEmbeddingLoss from `input1`, `input2` and `target`, reduced as
        `reduction` says. Call the module, not `forward`, so hooks run.
        """
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)


class MarginRankingLoss(_Loss):
    """max(0, -target * (input1 - input2) + margin)."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None,
                 reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        """Computes MarginRankingLoss from `input1`, `input2` and `target`, reduced as `reduction`
        says. Call the module, not `forward`, so hooks run.
        """
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """Multi-class hinge loss."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight=None, size_average=None,
                 reduce=None, reduction: str = "mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got "
                             f"{weight.dim()}D instead")
        self.p = p
        self.margin = margin

    def forward(self, input, target):
        """Computes MultiMarginLoss from `input` and `target`, reduced as `reduction` says. Call
        the module, not `forward`, so hooks run.
        """
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                   weight=self.weight, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm distance."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__(size_average, reduce, reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginLoss: expected margin to be greater than 0, got "
                             f"{margin} instead")
        self.margin = margin
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor, positive, negative):
        """Computes TripletMarginLoss from `anchor`, `positive` and `negative`, reduced as
        `reduction` says. Call the module, not `forward`, so hooks run.
        """
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                     eps=self.eps, swap=self.swap, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """The triplet margin loss with any distance function (PairwiseDistance by default)."""

    def __init__(self, *, distance_function=None, margin: float = 1.0, swap: bool = False,
                 reduction: str = "mean"):
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        self.distance_function = (distance_function if distance_function is not None
                                  else PairwiseDistance())
        self.margin = margin
        self.swap = swap

    def forward(self, anchor, positive, negative):
        """Computes TripletMarginWithDistanceLoss from `anchor`, `positive` and `negative`, reduced
        as `reduction` says. Call the module, not `forward`, so hooks run.
        """
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class CTCLoss(_Loss):
    """Connectionist temporal classification loss."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        """Computes CTCLoss from `log_probs`, `targets`, `input_lengths` and `target_lengths`,
        reduced as `reduction` says. Call the module, not `forward`, so hooks run.
        """
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)
